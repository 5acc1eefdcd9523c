/**
 * The configuration revisions (migration 0017), part of the configuration adapter
 * (`configuration-store.ts`): the row each upload and deletion writes in its transaction, and
 * the reads of the list (newest first, by page number or after a revision) and of one revision.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { KeyedPage, PageStart } from '../lib/keyed-page.js';
import type { RevisionDocument, RevisionSummary } from '../modules/configuration/store.js';
import { countRows } from './count.js';
import { keyedPageOf } from './keyed-page.js';
import type { Database } from './schema.js';
import type { ConfigurationRevisionsTable } from './tables/configuration.js';

function summaryOf(row: Omit<Selectable<ConfigurationRevisionsTable>, 'document'>): RevisionSummary {
  return {
    revision: Number(row.revision),
    at: row.at,
    actor: row.actor,
    action: row.action,
    version: row.version,
    sha256: row.sha256,
    sections: JSON.parse(row.sections) as Record<string, number>,
  };
}

/** Writes the row of a new revision; runs inside the caller's transaction, which made the revision. */
export async function insertRevision(
  trx: Transaction<Database>,
  revision: RevisionSummary & { documentText: string },
): Promise<void> {
  await trx
    .insertInto('configuration_revisions')
    .values({
      revision: revision.revision,
      at: revision.at,
      actor: revision.actor,
      action: revision.action,
      version: revision.version,
      sha256: revision.sha256,
      sections: JSON.stringify(revision.sections),
      document: revision.documentText,
    })
    .execute();
}

const SUMMARY_COLUMNS = ['revision', 'at', 'actor', 'action', 'version', 'sha256', 'sections'] as const;

/** A page of revisions, newest first, without their documents. */
export async function listRevisions(
  db: Kysely<Database>,
  start: PageStart<number>,
  limit: number,
): Promise<KeyedPage<RevisionSummary, number>> {
  let query = db.selectFrom('configuration_revisions').select(SUMMARY_COLUMNS);
  query = 'after' in start ? query.where('revision', '<', start.after) : query.offset(start.page * limit);
  const rows = await query
    .orderBy('revision', 'desc')
    .limit(limit + 1)
    .execute();
  const page = keyedPageOf(rows, limit, (row) => Number(row.revision));
  return { rows: page.rows.map(summaryOf), next: page.next };
}

/** The number of revisions kept. */
export function countRevisions(db: Kysely<Database>): Promise<number> {
  return countRows(db.selectFrom('configuration_revisions'));
}

/** One revision with its document, or undefined when none has that number. */
export async function readRevisionDocument(
  db: Kysely<Database>,
  revision: number,
): Promise<RevisionDocument | undefined> {
  const row = await db
    .selectFrom('configuration_revisions')
    .selectAll()
    .where('revision', '=', revision)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return { ...summaryOf(row), documentText: row.document };
}
