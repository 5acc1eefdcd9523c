import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * Four-eyes approval (docs/domain/approvals.md, docs/adr/0027-four-eyes-approval.md):
 *
 * - `approval_requests`: one row per action that waits, or waited, for a second person: its kind
 *   (`configuration.upload`, `configuration.delete`, `reversal`), status, maker (the owner's
 *   e-mail and the client id), the action's payload (JSON, read only to execute it), and the
 *   binding shown to the approver: the document hash, the configuration revision and the dry
 *   run (JSON) with its summary (JSON). The decision (who, with which client, when, the reason
 *   of a rejection) and the outcome of the execution (JSON, or the problem that stopped it) are
 *   written as they happen. `approval_requests_idempotency` answers a repeated request of the
 *   same client with its first request; `approval_requests_page_order` serves the list, newest
 *   first, and `approval_requests_status_order` the list by status.
 * - `approval_day_counts`: the requests awaiting approval and those rejected, per UTC day the
 *   request was made, kept in the transaction that changes a status, so the journal metrics
 *   read the days asked about, never every request.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('approval_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('maker_email', 'text', (c) => c.notNull())
    .addColumn('maker_client_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('document_sha256', 'text', (c) => c.notNull())
    .addColumn('revision', bigint, (c) => c.notNull())
    .addColumn('dry_run', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('decided_by', 'text')
    .addColumn('decided_by_client_id', 'text')
    .addColumn('decided_at', 'text')
    .addColumn('reason', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('outcome', 'text')
    .addColumn('problem', 'text')
    .execute();
  await db.schema
    .createIndex('approval_requests_idempotency')
    .on('approval_requests')
    .columns(['maker_client_id', 'idempotency_key'])
    .unique()
    .where(sql.ref('idempotency_key'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('approval_requests_page_order')
    .on('approval_requests')
    .columns(['created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('approval_requests_status_order')
    .on('approval_requests')
    .columns(['status', 'created_at', 'id'])
    .execute();
  await db.schema
    .createTable('approval_day_counts')
    .addColumn('day', 'text', (c) => c.primaryKey())
    .addColumn('awaiting', bigint, (c) => c.notNull())
    .addColumn('denied', bigint, (c) => c.notNull())
    .execute();
}
