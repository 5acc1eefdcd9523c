import { type Kysely, sql } from 'kysely';
import { type AuditEntry, auditHashOf, GENESIS_HASH } from '../../modules/audit/store.js';
import type { Dialect } from '../store.js';

/** Rows hashed per statement while the existing entries join the chain. */
const EXISTING_ROWS_PER_READ = 500;

interface ExistingRow {
  id: number | string;
  at: string;
  actor: string;
  action: string;
  version: string | null;
  revision: number | string;
  sections: string;
  deleted: string | null;
  details: string | null;
}

/**
 * The tamper-evident audit trail (docs/adr/0026-audit-trail.md):
 * - `audit_log` gains `seq` (the position in the chain, unique), `client_id`, `summary_before`
 *   and `summary_after` (JSON pictures of the changed thing), `prev_hash` and `hash`;
 * - `audit_chain` holds the chain head, one row, which every append updates first (the lock
 *   that keeps one order across instances);
 * - `sign_in_failure_tallies` counts failed sign-ins per user and hour until their entry is
 *   written.
 * Existing entries join the chain in the order they were written (by id), positions from 1, so
 * the whole log verifies from its first entry.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema.alterTable('audit_log').addColumn('seq', bigint).execute();
  for (const column of ['client_id', 'summary_before', 'summary_after', 'prev_hash', 'hash']) {
    await db.schema.alterTable('audit_log').addColumn(column, 'text').execute();
  }
  await db.schema
    .createTable('audit_chain')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('seq', bigint, (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('sign_in_failure_tallies')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('window_started_at', 'text', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('sign_in_failure_tallies_pk', ['subject', 'window_started_at'])
    .execute();

  let seq = 0;
  let prevHash = GENESIS_HASH;
  let afterId = 0;
  for (;;) {
    const { rows } = await sql<ExistingRow>`
      select id, at, actor, action, version, revision, sections, deleted, details
      from audit_log where id > ${afterId} order by id limit ${EXISTING_ROWS_PER_READ}`.execute(db);
    for (const row of rows) {
      seq += 1;
      const hash = auditHashOf({
        seq,
        at: row.at,
        actor: row.actor,
        clientId: null,
        // The log held only the actions of the list (configuration, reprocessing, reversals).
        action: row.action as AuditEntry['action'],
        version: row.version,
        revision: Number(row.revision),
        sections: JSON.parse(row.sections) as Record<string, number>,
        deleted: row.deleted === null ? null : (JSON.parse(row.deleted) as Record<string, number>),
        details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
        before: null,
        after: null,
        prevHash,
      });
      await sql`update audit_log set seq = ${seq}, prev_hash = ${prevHash}, hash = ${hash} where id = ${row.id}`.execute(
        db,
      );
      prevHash = hash;
      afterId = Number(row.id);
    }
    if (rows.length < EXISTING_ROWS_PER_READ) break;
  }
  await sql`insert into audit_chain (id, seq, hash) values (1, ${seq}, ${prevHash})`.execute(db);
  await db.schema.createIndex('audit_log_seq').unique().on('audit_log').column('seq').execute();
}
