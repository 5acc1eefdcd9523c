/**
 * How an extract's rows are written: JSON Lines (one object per line, its members in the order
 * of the fields) or CSV (RFC 4180: a header line, then one line per row; a value with a comma, a
 * quote or a line break is quoted, its quotes doubled; an object or array is its JSON text; null
 * is empty). Pure: the service and the executions write with it.
 */
import type { ExtractFormat } from './store.js';

/** The row with only `fields`, in their order (a field the row lacks is null); all when null. */
export function projected(
  row: Record<string, unknown>,
  fields: readonly string[] | null,
): Record<string, unknown> {
  if (fields === null) return row;
  const kept: Record<string, unknown> = {};
  for (const field of fields) kept[field] = row[field] ?? null;
  return kept;
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line of `values`, ended by CRLF as RFC 4180 says. */
function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/** The header line of a CSV extract with `fields`; nothing for JSON Lines. */
export function headerOf(format: ExtractFormat, fields: readonly string[]): string {
  return format === 'csv' ? csvLine(fields) : '';
}

/** One row as a line of `format`; CSV cells follow `fields`. */
export function lineOf(
  format: ExtractFormat,
  row: Record<string, unknown>,
  fields: readonly string[],
): string {
  return format === 'csv' ? csvLine(fields.map((field) => row[field])) : `${JSON.stringify(row)}\n`;
}
