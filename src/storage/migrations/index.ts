/**
 * The migration registry: every migration in the order it runs, and the two ways to run them.
 * A new migration is one file here and one line in MIGRATIONS.
 */
import { type Kysely, type Migration, Migrator } from 'kysely';
import type { Dialect, Store } from '../store.js';
import * as initial from './0001-initial.js';
import * as auditDeleted from './0002-audit-deleted.js';
import * as chunkOutcome from './0003-chunk-outcome.js';
import * as adminSessions from './0004-admin-sessions.js';
import * as authFailures from './0005-auth-failures.js';
import * as refreshAnswersAndRequestCounts from './0006-refresh-answers-and-request-counts.js';
import * as originJournalOnce from './0007-origin-journal-once.js';
import * as csrfDerived from './0008-csrf-derived.js';
import * as rejectedChunksUncounted from './0009-rejected-chunks-uncounted.js';
import * as adminOneTimeViews from './0010-admin-one-time-views.js';
import * as adminSignIns from './0011-admin-sign-ins.js';
import * as balances from './0012-balances.js';
import * as pageOrderIndexes from './0013-page-order-indexes.js';
import * as statisticsCounters from './0014-statistics-counters.js';
import * as countersByFilter from './0015-counters-by-filter.js';
import * as sessionCounters from './0016-session-counters.js';
import * as configurationRevisions from './0017-configuration-revisions.js';
import * as reprocessing from './0018-reprocessing.js';
import * as journalSessionPageIndex from './0019-journal-session-page-index.js';
import * as counterStripes from './0020-counter-stripes.js';
import * as journalWithdrawal from './0021-journal-withdrawal.js';
import * as reversals from './0022-reversals.js';
import * as extracts from './0023-extracts.js';
import * as errorStateCounts from './0024-error-state-counts.js';
import * as events from './0025-events.js';
import * as periods from './0026-periods.js';
import * as auditChain from './0027-audit-chain.js';
import * as approvalRequests from './0028-approval-requests.js';
import * as journalsIngestionOriginsOnly from './0029-journals-ingestion-origins-only.js';
import * as bulkRowsUnkeyed from './0030-bulk-rows-unkeyed.js';
import * as configurationRevisionFunction from './0031-configuration-revision-function.js';
import * as eventFingerprintForms from './0032-event-fingerprint-forms.js';
import * as sessionErrorSample from './0033-session-error-sample.js';
import * as changeAnswers from './0034-change-answers.js';
import * as reversalKeysKeptAsAnswers from './0035-reversal-keys-kept-as-answers.js';

/** A migration file: its `up` may write per dialect. */
interface DialectMigration {
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

/** Every migration by its name, in the order it runs (Kysely orders them by name too). */
const MIGRATIONS: readonly (readonly [string, DialectMigration])[] = [
  ['0001-initial', initial],
  ['0002-audit-deleted', auditDeleted],
  ['0003-chunk-outcome', chunkOutcome],
  ['0004-admin-sessions', adminSessions],
  ['0005-auth-failures', authFailures],
  ['0006-refresh-answers-and-request-counts', refreshAnswersAndRequestCounts],
  ['0007-origin-journal-once', originJournalOnce],
  ['0008-csrf-derived', csrfDerived],
  ['0009-rejected-chunks-uncounted', rejectedChunksUncounted],
  ['0010-admin-one-time-views', adminOneTimeViews],
  ['0011-admin-sign-ins', adminSignIns],
  ['0012-balances', balances],
  ['0013-page-order-indexes', pageOrderIndexes],
  ['0014-statistics-counters', statisticsCounters],
  ['0015-counters-by-filter', countersByFilter],
  ['0016-session-counters', sessionCounters],
  ['0017-configuration-revisions', configurationRevisions],
  ['0018-reprocessing', reprocessing],
  ['0019-journal-session-page-index', journalSessionPageIndex],
  ['0020-counter-stripes', counterStripes],
  ['0021-journal-withdrawal', journalWithdrawal],
  ['0022-reversals', reversals],
  ['0023-extracts', extracts],
  ['0024-error-state-counts', errorStateCounts],
  ['0025-events', events],
  ['0026-periods', periods],
  ['0027-audit-chain', auditChain],
  ['0028-approval-requests', approvalRequests],
  ['0029-journals-ingestion-origins-only', journalsIngestionOriginsOnly],
  ['0030-bulk-rows-unkeyed', bulkRowsUnkeyed],
  ['0031-configuration-revision-function', configurationRevisionFunction],
  ['0032-event-fingerprint-forms', eventFingerprintForms],
  ['0033-session-error-sample', sessionErrorSample],
  ['0034-change-answers', changeAnswers],
  ['0035-reversal-keys-kept-as-answers', reversalKeysKeptAsAnswers],
];

function migratorOf(store: Store): Migrator {
  const migrations: Record<string, Migration> = {};
  for (const [name, migration] of MIGRATIONS)
    migrations[name] = { up: (db) => migration.up(db, store.dialect) };
  return new Migrator({ db: store.db, provider: { getMigrations: async () => migrations } });
}

/**
 * Runs every migration not yet applied, in order. Kysely's migrator takes a lock first, so
 * several instances starting at once on one PostgreSQL migrate exactly once. Throws the error
 * of the migration that failed; the migrations before it stay applied.
 */
export async function migrateToLatest(store: Store): Promise<void> {
  const { error } = await migratorOf(store).migrateToLatest();
  if (error) throw error;
}

/**
 * Runs the migrations not yet applied up to and including `name`, in order: the state a
 * migration test starts from is `migrateTo` the migration before the one it checks. Throws for
 * a name that is not registered, and the error of a migration that failed.
 */
export async function migrateTo(store: Store, name: string): Promise<void> {
  if (!MIGRATIONS.some(([known]) => known === name)) throw new Error(`no migration named ${name}`);
  const { error } = await migratorOf(store).migrateTo(name);
  if (error) throw error;
}
