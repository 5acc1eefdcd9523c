import { readFileSync } from 'node:fs';

/** A fresh deep copy of the realistic configuration document (tests may change it freely). */
export function realisticConfiguration(): {
  version: string;
  configuration: Record<string, unknown> & { entities: { attributes: unknown[] }[] };
  downloadTime?: unknown;
  downloadedBy?: string;
} {
  return JSON.parse(readFileSync(new URL('../../docs/examples/configuration.json', import.meta.url), 'utf8'));
}
