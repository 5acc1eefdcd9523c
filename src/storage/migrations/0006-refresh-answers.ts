import type { Kysely } from 'kysely';

/**
 * A used refresh token keeps the answer of the refresh that used it, sealed (AES-256-GCM under a
 * key derived from the token, `modules/auth/sealed-answer.ts`), so that an exact repeat within
 * the reuse grace window gets the same answer instead of revoking the family. Existing rows get
 * null: tokens used before have no answer to repeat, and their reuse is handled as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_tokens').addColumn('answer_sealed', 'text').execute();
}
