import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import {
  type Configuration,
  revisionDocumentText,
  sectionCounts,
} from '../../modules/configuration/store.js';

/**
 * Configuration revisions (`configuration-store.ts`, `configuration-revisions.ts`):
 * - `configuration_revisions`: one row per upload or deletion from now on, with who, when, the
 *   SHA-256 of the canonical document text, the section counts and that text;
 * - `journals.revision` and `processing_errors.revision`: the revision processing worked under.
 * Backfill: the stored configuration, when there is one, becomes its revision's row, dated and
 * signed by the audit log's entry of that revision (the configuration row's own date and author
 * when the log has none); the journals and errors already stored get that revision, the only one
 * they can have been made under (every earlier change wiped what came before it). Revisions
 * before it were not kept, so they have no row: the list starts at the stored one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('configuration_revisions')
    .addColumn('revision', 'integer', (c) => c.primaryKey())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('sections', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .execute();
  // 0 is "before any configuration", which no stored row can have been made under; the default
  // lets the columns be added to tables that hold rows, on both dialects.
  for (const table of ['journals', 'processing_errors']) {
    await db.schema
      .alterTable(table)
      .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  const stored = await sql<{
    revision: number | string;
    version: string;
    document: string;
    updated_at: string;
    updated_by: string | null;
  }>`select revision, version, document, updated_at, updated_by from configuration where id = 1`.execute(db);
  const row = stored.rows[0];
  if (row === undefined || Number(row.revision) === 0) return;
  const revision = Number(row.revision);
  const audit = await sql<{ at: string; actor: string; action: string }>`
    select at, actor, action from audit_log where revision = ${revision} order by id desc limit 1
  `.execute(db);
  const entry = audit.rows[0];
  const configuration = JSON.parse(row.document) as Configuration;
  const text = revisionDocumentText(configuration);
  await sql`
    insert into configuration_revisions (revision, at, actor, action, version, sha256, sections, document)
    values (${revision}, ${entry?.at ?? row.updated_at}, ${entry?.actor ?? row.updated_by},
      ${entry?.action === 'configuration.delete' ? 'delete' : 'upload'}, ${row.version},
      ${createHash('sha256').update(text).digest('hex')}, ${JSON.stringify(sectionCounts(configuration))},
      ${text})
  `.execute(db);
  await sql`update journals set revision = ${revision}`.execute(db);
  await sql`update processing_errors set revision = ${revision}`.execute(db);
}
