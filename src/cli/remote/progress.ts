import cliProgress from 'cli-progress';
import type { Io } from '../output.js';

/** Least time between two plain progress lines when standard error is not a terminal. */
export const PROGRESS_LINE_INTERVAL_MS = 5_000;

/** What an upload has done so far. */
export interface UploadStats {
  /** Records in chunks the service answered (stored, or rejected as a whole). */
  recordsSent: number;
  /** Records that failed: invalid at the service, in a rejected chunk, or not sendable. */
  recordsFailed: number;
  chunksSent: number;
  /** Bytes of chunk bodies answered. */
  bytesSent: number;
  /** Bytes of the input file read up to the last answered chunk. */
  fileBytesDone: number;
  fileBytesTotal: number;
  retries: number;
}

/** Shows the progress of an upload; `log` prints a line without breaking a bar. */
export interface ProgressReporter {
  update(stats: UploadStats): void;
  log(line: string): void;
  stop(stats: UploadStats): void;
}

const MB = 1_000_000;

function rateOf(records: number, elapsedMs: number): number {
  return elapsedMs <= 0 ? 0 : Math.round((records * 1000) / elapsedMs);
}

/**
 * The plain progress line: `ingest: 120000 records sent (24000 records/s), 45.2 MB, 12 chunks,
 * 0 failed, 62% of the file`. Pure.
 */
export function progressLine(stats: UploadStats, elapsedMs: number): string {
  const percent =
    stats.fileBytesTotal === 0
      ? 100
      : Math.min(100, Math.floor((stats.fileBytesDone * 100) / stats.fileBytesTotal));
  const retries = stats.retries === 0 ? '' : `, ${stats.retries} retries`;
  return (
    `ingest: ${stats.recordsSent} records sent (${rateOf(stats.recordsSent, elapsedMs)} records/s), ` +
    `${(stats.bytesSent / MB).toFixed(1)} MB, ${stats.chunksSent} chunks, ${stats.recordsFailed} failed${retries}, ` +
    `${percent}% of the file`
  );
}

/**
 * A progress bar (cli-progress) on standard error when it is a terminal, else a plain line
 * every PROGRESS_LINE_INTERVAL_MS and one at the end.
 */
export function progressReporter(
  io: Io,
  fileBytesTotal: number,
  now: () => number = Date.now,
): ProgressReporter {
  const startedMs = now();
  if (io.interactive) {
    const bar = new cliProgress.SingleBar(
      {
        format:
          'ingest [{bar}] {percentage}% | {records} records | {rate} records/s | {mb} MB | {failed} failed | ETA {eta_formatted}',
        barsize: 30,
        hideCursor: true,
        stream: process.stderr,
      },
      cliProgress.Presets.shades_classic,
    );
    const payload = (stats: UploadStats) => ({
      records: stats.recordsSent,
      rate: rateOf(stats.recordsSent, now() - startedMs),
      mb: (stats.bytesSent / MB).toFixed(1),
      failed: stats.recordsFailed,
    });
    bar.start(Math.max(1, fileBytesTotal), 0, {
      records: 0,
      rate: 0,
      mb: '0.0',
      failed: 0,
    });
    return {
      update: (stats) => bar.update(Math.min(stats.fileBytesDone, fileBytesTotal), payload(stats)),
      log: (line) => {
        // A SingleBar has no log method: clear the bar's line, print, and let it redraw.
        process.stderr.write(`\r\x1b[K${line}\n`);
      },
      stop: (stats) => {
        bar.update(Math.max(1, fileBytesTotal), payload(stats));
        bar.stop();
      },
    };
  }
  let lastLineMs = startedMs;
  return {
    update: (stats) => {
      if (now() - lastLineMs < PROGRESS_LINE_INTERVAL_MS) return;
      lastLineMs = now();
      io.err(progressLine(stats, lastLineMs - startedMs));
    },
    log: (line) => io.err(line),
    stop: (stats) =>
      io.err(progressLine({ ...stats, fileBytesDone: stats.fileBytesTotal }, now() - startedMs)),
  };
}
