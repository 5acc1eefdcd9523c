/**
 * The disk under a benchmark's store: how large the store has grown and how much room is left,
 * so that a long run stops before its store fills the disk (PostgreSQL stops when it cannot write
 * its log) and its report says what the data took.
 */
import { readdirSync, statfsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fillerOf } from './direct-fill.js';
import type { BenchService } from './service.js';

export interface StoreDisk {
  /** The store's size in bytes: its SQLite files, or its PostgreSQL database. */
  size(): Promise<number>;
  /** Bytes free to the server on the store's file system; undefined when that is not on this machine. */
  free(): number | undefined;
  close(): Promise<void>;
}

/** The store of `service`, measured from beside it. */
export async function storeDisk(service: BenchService): Promise<StoreDisk> {
  if (service.dialect === 'sqlite') {
    const folder = dirname(service.databaseUrl.slice('sqlite:'.length));
    return {
      size: async () => readdirSync(folder).reduce((sum, name) => sum + fileSize(join(folder, name)), 0),
      free: () => freeBytes(folder),
      close: async () => {},
    };
  }
  const filler = await fillerOf('postgres', service.databaseUrl);
  const setting = await filler.first('show data_directory');
  const folder = String(setting?.data_directory ?? '');
  return {
    size: async () =>
      Number((await filler.first('select pg_database_size(current_database()) as bytes'))?.bytes ?? 0),
    free: () => freeBytes(folder),
    close: () => filler.close(),
  };
}

/** A file's size; 0 when it went away meanwhile (SQLite removes its log and shared memory files). */
function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Bytes that an unprivileged process may still write on the file system of `folder`. */
function freeBytes(folder: string): number | undefined {
  try {
    const stats = statfsSync(folder);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}
