import type { Kysely } from 'kysely';

/**
 * `change_answers`: the first answer of every change made through the change runner
 * (`modules/changes/runner.ts`) under an `Idempotency-Key`, so that a repeat answers it again
 * and another request under the key is refused. One row per client and key, its primary key;
 * the action and the request's digest tell a repeat from another request. Kept like the audit
 * trail: a change of the configuration deletes none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('change_answers')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('answer', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('change_answers_pkey', ['client_id', 'idempotency_key'])
    .execute();
}
