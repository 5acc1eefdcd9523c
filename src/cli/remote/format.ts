import type { Static } from '@sinclair/typebox';
import type { FieldError } from '../../http/api/answer-schemas.js';
import { formatProblemEntry } from './client.js';

/** Characters of a failed record quoted in an error line. */
const RECORD_QUOTE_CHARS_MAX = 200;

/** A record as compact JSON, cut after RECORD_QUOTE_CHARS_MAX characters. Pure. */
export function quoteRecord(record: unknown): string {
  const text = JSON.stringify(record) ?? String(record);
  return text.length > RECORD_QUOTE_CHARS_MAX ? `${text.slice(0, RECORD_QUOTE_CHARS_MAX)}...` : text;
}

/**
 * One failed record as one line: where it is, each of its errors (`field: message (code)`, or
 * `message (code)` for an error of the whole record), and the record itself. Pure.
 */
export function failedRecordLine(
  where: string,
  entry: { errors: readonly Static<typeof FieldError>[]; record?: unknown },
): string {
  const errors = entry.errors.map(formatProblemEntry).join('; ');
  const record = entry.record === undefined ? '' : ` -- ${quoteRecord(entry.record)}`;
  return `${where}: ${errors}${record}`;
}

/**
 * Rows as a text table: a header, then one line per row, columns separated by two spaces;
 * `rightAligned` columns (amounts) are padded on the left. Pure.
 */
export function textTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  rightAligned: ReadonlySet<number> = new Set(),
): string[] {
  const widths = header.map((name, column) =>
    Math.max(name.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => {
        const width = widths[column] ?? 0;
        return rightAligned.has(column) ? cell.padStart(width) : cell.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** A node's values as `field=value` pairs, comma-separated. Pure. */
export function nodeText(node: Readonly<Record<string, string>>): string {
  return Object.entries(node)
    .map(([field, value]) => `${field}=${value}`)
    .join(',');
}
