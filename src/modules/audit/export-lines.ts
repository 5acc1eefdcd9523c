/**
 * The export format of the audit trail: JSON Lines, one entry per line with every field of
 * `AuditEntry` (`id`, `seq`, the hashed fields, `hash`), oldest first. The API's export and
 * `ledgerflow audit export` write it; `ledgerflow audit verify --file` reads it back.
 */
import { AUDIT_ACTIONS, type AuditAction, type AuditEntry } from './entry.js';

/** The longest line an export holds; a longer one was not written by the service. */
export const AUDIT_EXPORT_LINE_CHARS_MAX = 1024 * 1024;

const SHA256_HEX = /^[0-9a-f]{64}$/;
const ACTIONS: ReadonlySet<string> = new Set(AUDIT_ACTIONS);

/** One entry as its export line, with the line break. */
export function auditExportLine(entry: AuditEntry): string {
  return `${JSON.stringify(entry)}\n`;
}

function isObjectOrNull(value: unknown): value is Record<string, unknown> | null {
  return value === null || (typeof value === 'object' && !Array.isArray(value));
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The entry an export line holds, or a sentence saying why the line is not one (an entry whose
 * fields were edited into another shape, or a line that was never an entry).
 */
export function auditEntryOfLine(line: string): AuditEntry | string {
  if (line.length > AUDIT_EXPORT_LINE_CHARS_MAX)
    return `longer than ${AUDIT_EXPORT_LINE_CHARS_MAX} characters`;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  if (!isObjectOrNull(value) || value === null) return 'not a JSON object';
  const e = value;
  const text = (key: string) => typeof e[key] === 'string';
  const textOrNull = (key: string) => e[key] === null || typeof e[key] === 'string';
  const problems = [
    isCount(e.id) && (e.id as number) > 0 ? '' : 'id',
    isCount(e.seq) && (e.seq as number) > 0 ? '' : 'seq',
    text('at') ? '' : 'at',
    text('actor') ? '' : 'actor',
    textOrNull('clientId') ? '' : 'clientId',
    typeof e.action === 'string' && ACTIONS.has(e.action) ? '' : 'action',
    textOrNull('version') ? '' : 'version',
    isCount(e.revision) ? '' : 'revision',
    isObjectOrNull(e.sections) && e.sections !== null ? '' : 'sections',
    isObjectOrNull(e.deleted) ? '' : 'deleted',
    isObjectOrNull(e.details) ? '' : 'details',
    isObjectOrNull(e.before) ? '' : 'before',
    isObjectOrNull(e.after) ? '' : 'after',
    typeof e.prevHash === 'string' && SHA256_HEX.test(e.prevHash) ? '' : 'prevHash',
    typeof e.hash === 'string' && SHA256_HEX.test(e.hash) ? '' : 'hash',
  ].filter((name) => name !== '');
  if (problems.length > 0) return `not an audit entry (${problems.join(', ')})`;
  return {
    id: e.id as number,
    seq: e.seq as number,
    at: e.at as string,
    actor: e.actor as string,
    clientId: e.clientId as string | null,
    action: e.action as AuditAction,
    version: e.version as string | null,
    revision: e.revision as number,
    sections: e.sections as Record<string, number>,
    deleted: e.deleted as Record<string, number> | null,
    details: e.details as Record<string, unknown> | null,
    before: e.before as Record<string, unknown> | null,
    after: e.after as Record<string, unknown> | null,
    prevHash: e.prevHash as string,
    hash: e.hash as string,
  };
}
