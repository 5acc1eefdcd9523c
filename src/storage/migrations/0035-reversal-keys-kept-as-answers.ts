import type { Kysely } from 'kysely';
import { requestDigest } from '../../lib/idempotency.js';

/** The reversal columns this migration reads. */
interface ReversalKeyRow {
  id: string;
  client_id: string;
  idempotency_key: string;
  selection: string;
  reason: string;
  posting_date: string | null;
  created_at: string;
}

/** The tables this migration reads and writes, as they are when it runs. */
interface Tables {
  reversals: ReversalKeyRow;
  change_answers: {
    client_id: string;
    idempotency_key: string;
    action: string;
    digest: string;
    answer: string;
    created_at: string;
  };
}

/**
 * Reversals are made through the change runner, which keeps the first answer of every change made
 * under an `Idempotency-Key` in `change_answers`. The keys of the reversals made before move there,
 * as the runner would have kept them (the action `journals.reverse`, the digest of the request's
 * selection, reason and posting date, the reversal's id as the answer), so that a repeat of a
 * reversal made before the upgrade still answers it again; then the reversal row's own key, its
 * digest and their unique index go.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const tables = db as unknown as Kysely<Tables>;
  const rows = await tables
    .selectFrom('reversals')
    .select(['id', 'client_id', 'idempotency_key', 'selection', 'reason', 'posting_date', 'created_at'])
    .where('idempotency_key', 'is not', null)
    .execute();
  for (const row of rows) {
    const request = {
      selection: JSON.parse(row.selection) as unknown,
      reason: row.reason,
      ...(row.posting_date === null ? {} : { postingDate: row.posting_date }),
    };
    await tables
      .insertInto('change_answers')
      .values({
        client_id: row.client_id,
        idempotency_key: row.idempotency_key,
        action: 'journals.reverse',
        digest: requestDigest({ action: 'journals.reverse', request }),
        answer: JSON.stringify({ reversalId: row.id }),
        created_at: row.created_at,
      })
      .onConflict((oc) => oc.columns(['client_id', 'idempotency_key']).doNothing())
      .execute();
  }
  await db.schema.dropIndex('reversals_idempotency').execute();
  await db.schema.alterTable('reversals').dropColumn('idempotency_key').execute();
  await db.schema.alterTable('reversals').dropColumn('request_digest').execute();
}
