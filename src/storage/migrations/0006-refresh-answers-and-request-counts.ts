import type { Kysely } from 'kysely';

/**
 * A used refresh token keeps the answer of the refresh that used it, sealed (AES-256-GCM under a
 * key derived from the token, `modules/auth/sealed-answer.ts`), so that an exact repeat within
 * the reuse grace window gets the same answer instead of revoking the family. Existing rows get
 * null: tokens used before have no answer to repeat, and their reuse is handled as before.
 *
 * `request_counts` holds the per-client rate limit's counters, one row per key (the SHA-256 of a
 * client id or an address, so neither is stored in clear) for its current fixed window, shared
 * by every instance of one PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_tokens').addColumn('answer_sealed', 'text').execute();
  await db.schema
    .createTable('request_counts')
    .addColumn('key_hash', 'text', (c) => c.primaryKey())
    .addColumn('window_started_ms', 'bigint', (c) => c.notNull())
    .addColumn('requests', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('request_counts_window_started_ms')
    .on('request_counts')
    .column('window_started_ms')
    .execute();
}
