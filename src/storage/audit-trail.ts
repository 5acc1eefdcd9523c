/**
 * The audit trail's one writer and its reads (docs/adr/0026-audit-trail.md). Every audited store
 * calls `appendAudit` inside the transaction of the change it records, so an entry exists if and
 * only if its change was committed.
 */
import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type {
  AuditConfigurationFields,
  AuditEntry,
  AuditRecord,
  AuditStore,
} from '../modules/audit/store.js';
import { auditHashOf, GENESIS_HASH, secretKeyIn } from '../modules/audit/store.js';
import { countRows } from './count.js';
import { keyedPageOf } from './keyed-page.js';
import type { Database } from './schema.js';
import { byDialect, type DialectAdapter } from './store.js';
import type { AuditLogTable } from './tables/configuration.js';

/** The id of the chain head's one row. */
const CHAIN_HEAD_ROW_ID = 1;
/** The id of the configuration's one row (`configuration-store.ts`). */
const CONFIGURATION_ROW_ID = 1;

/** What `appendAudit` writes: a caller's record, when it happened and, for a configuration change, its columns. */
export interface AuditAppend extends AuditRecord {
  at: string;
  /** Version, revision, sections and what was wiped; unset, the revision stored now and nothing else. */
  configuration?: AuditConfigurationFields;
}

function jsonOrNull(value: Record<string, unknown> | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** Moves the head of the chain one position on and answers its position and hash. */
function takeHead(trx: Kysely<Database>) {
  return trx
    .updateTable('audit_chain')
    .set((eb) => ({ seq: eb('seq', '+', 1) }))
    .where('id', '=', CHAIN_HEAD_ROW_ID)
    .returning(['seq', 'hash']);
}

/** The head taken, and the stored revision as it stands once it is held. */
interface HeldHead {
  head: { seq: number; hash: string };
  revision: number;
}

/**
 * PostgreSQL: the head's update reads the revision through a volatile function (migration 0031),
 * which takes a snapshot of its own once the row is locked, so the head is held for one
 * statement less.
 */
async function takeHeadReadingRevision(trx: Kysely<Database>): Promise<HeldHead> {
  const taken = await takeHead(trx)
    .returning(sql<number>`ledgerflow_configuration_revision()`.as('revision'))
    .executeTakeFirstOrThrow();
  return { head: taken, revision: Number(taken.revision) };
}

/** SQLite: the revision by a statement of its own, under the one write lock. */
async function takeHeadThenRevision(trx: Kysely<Database>): Promise<HeldHead> {
  const head = await takeHead(trx).executeTakeFirstOrThrow();
  const stored = await trx
    .selectFrom('configuration')
    .select('revision')
    .where('id', '=', CONFIGURATION_ROW_ID)
    .executeTakeFirst();
  return { head, revision: Number(stored?.revision ?? 0) };
}

type AuditLogRow = Insertable<AuditLogTable>;

/** PostgreSQL: the entry and the head's new hash in one statement (a data-modifying `WITH`). */
async function writeEntryInOneStatement(
  trx: Kysely<Database>,
  entry: AuditLogRow,
  hash: string,
): Promise<void> {
  await trx
    .with('entry', (db) => db.insertInto('audit_log').values(entry))
    .updateTable('audit_chain')
    .set({ hash })
    .where('id', '=', CHAIN_HEAD_ROW_ID)
    .execute();
}

/** SQLite: the entry, then the head's new hash. */
async function writeEntryThenHead(trx: Kysely<Database>, entry: AuditLogRow, hash: string): Promise<void> {
  await trx.insertInto('audit_log').values(entry).execute();
  await trx.updateTable('audit_chain').set({ hash }).where('id', '=', CHAIN_HEAD_ROW_ID).execute();
}

/**
 * Appends one entry to the audit trail inside the caller's transaction `trx` and returns its
 * position. The head row is updated first: on PostgreSQL that update locks it until the caller
 * commits, so appends from every instance queue there and take positions (and row ids) in one
 * order; SQLite runs one write transaction at a time. Call it last in the transaction, after the
 * change's other locks, so the head is held briefly and no lock order can cross it. On
 * PostgreSQL the entry and the head's new hash are one statement (a data-modifying `WITH`), and
 * the head's update reads the stored revision, so the head is held for two statements and the
 * commit. Throws when the record's summaries or details hold a key that names a secret
 * (`secretKeyIn`).
 */
export async function appendAudit(
  trx: Kysely<Database>,
  adapter: DialectAdapter,
  input: AuditAppend,
): Promise<number> {
  const secret = secretKeyIn({ before: input.before, after: input.after, details: input.details });
  if (secret !== undefined) throw new Error(`an audit entry may not hold a secret (${secret})`);
  // The stored revision is read after the head is held: a statement sees what was committed
  // when it started, and taking the head may wait for a configuration change's append, whose
  // revision this entry, placed after it, must not predate.
  const { head, revision } =
    input.configuration === undefined
      ? await byDialect(adapter.dialect, { postgres: takeHeadReadingRevision, sqlite: takeHeadThenRevision })(
          trx,
        )
      : { head: await takeHead(trx).executeTakeFirstOrThrow(), revision: 0 };
  const seq = Number(head.seq);
  const configuration = input.configuration ?? { version: null, revision, sections: {}, deleted: null };
  const fields = {
    seq,
    at: input.at,
    actor: input.actor.user,
    clientId: input.actor.clientId ?? null,
    action: input.action,
    ...configuration,
    details:
      input.actor.cause === undefined
        ? (input.details ?? null)
        : { ...(input.details ?? {}), cause: input.actor.cause },
    before: input.before ?? null,
    after: input.after ?? null,
    prevHash: head.hash,
  };
  const hash = auditHashOf(fields);
  const entry = {
    seq,
    at: fields.at,
    actor: fields.actor,
    client_id: fields.clientId,
    action: fields.action,
    version: fields.version,
    revision: fields.revision,
    sections: JSON.stringify(fields.sections),
    deleted: jsonOrNull(fields.deleted),
    details: jsonOrNull(fields.details),
    summary_before: jsonOrNull(fields.before),
    summary_after: jsonOrNull(fields.after),
    prev_hash: fields.prevHash,
    hash,
  };
  await byDialect(adapter.dialect, { postgres: writeEntryInOneStatement, sqlite: writeEntryThenHead })(
    trx,
    entry,
    hash,
  );
  return seq;
}

function parsed<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** An entry as stored, its JSON columns read back. */
export function auditEntryOf(row: Selectable<AuditLogTable>): AuditEntry {
  return {
    id: Number(row.id),
    seq: Number(row.seq),
    at: row.at,
    actor: row.actor,
    clientId: row.client_id,
    // Only the writer puts rows here, with an action of the list.
    action: row.action as AuditEntry['action'],
    version: row.version,
    revision: Number(row.revision),
    sections: JSON.parse(row.sections) as Record<string, number>,
    deleted: parsed<Record<string, number>>(row.deleted),
    details: parsed<Record<string, unknown>>(row.details),
    before: parsed<Record<string, unknown>>(row.summary_before),
    after: parsed<Record<string, unknown>>(row.summary_after),
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/** The audit trail's read port over Kysely; the same statements on both dialects. */
export function createAuditStore(db: Kysely<Database>): AuditStore {
  return {
    async listEntries(start, limit) {
      let query = db.selectFrom('audit_log').selectAll();
      query = 'after' in start ? query.where('id', '<', start.after) : query.offset(start.page * limit);
      const rows = await query
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      const page = keyedPageOf(rows, limit, (row) => Number(row.id));
      return { rows: page.rows.map(auditEntryOf), next: page.next };
    },

    countEntries() {
      return countRows(db.selectFrom('audit_log'));
    },

    async readChain(afterId, limit) {
      const rows = await db
        .selectFrom('audit_log')
        .selectAll()
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(auditEntryOf);
    },

    async idBeforeSeq(afterSeq) {
      const row = await db
        .selectFrom('audit_log')
        .select((eb) => eb.fn.min('id').as('first'))
        .where('seq', '>', afterSeq)
        .executeTakeFirst();
      return row?.first === null || row?.first === undefined
        ? Number.MAX_SAFE_INTEGER
        : Number(row.first) - 1;
    },

    async hasSeq(seq) {
      const row = await db.selectFrom('audit_log').select('id').where('seq', '=', seq).executeTakeFirst();
      return row !== undefined;
    },

    async readHead() {
      const row = await db
        .selectFrom('audit_chain')
        .select(['seq', 'hash'])
        .where('id', '=', CHAIN_HEAD_ROW_ID)
        .executeTakeFirst();
      return row === undefined ? { seq: 0, hash: GENESIS_HASH } : { seq: Number(row.seq), hash: row.hash };
    },
  };
}
