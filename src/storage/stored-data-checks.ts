/**
 * The answers of the store to the tests of an upload that keeps the processing data
 * (`modules/configuration/keep-data.ts`): is there a record of an entity, one with (or without)
 * a value of an attribute, a journal, a journal line with a value of a field. Each is one
 * `exists` query; the record tests read the entity's records on their index (`records_entity`:
 * namespace, entity, record id) and the value of one attribute of each, and stop at the first
 * record found.
 *
 * SQLite runs a statement to its end on the event loop and, in a transaction, with the one write
 * lock held: a test over millions of records would hold both. So on SQLite the records are read
 * before the transaction, at most RECORDS_PER_CHECK_STEP record ids per statement with a turn of
 * the event loop between statements, up to the last record id stored when the check began; the
 * transaction then reads only the records stored after it, which are few. Record ids grow in the
 * order records are written there (one writer), and only a wipe deletes records, which changes
 * the revision the transaction checks. On PostgreSQL, whose concurrent writers may commit record
 * ids out of order, the transaction reads every record again (holding the locks that keep new
 * chunks out), and the event loop only waits for the answer.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { BlockingChange, StoredDataRisk, StoredDataTest } from '../modules/configuration/store.js';
import type { Database } from './schema.js';
import { byDialect, type DialectAdapter } from './store.js';

/** Record ids one SQLite statement of a record test covers at most. */
const RECORDS_PER_CHECK_STEP = 20_000;

/** The value of one attribute of a record's (or a line's) JSON text, SQL NULL when absent or null. */
function jsonValue(
  adapter: DialectAdapter,
  column: 'data' | 'extras',
  attribute: string,
): Expression<unknown> {
  return adapter.jsonMember(column, attribute);
}

/** The condition a record test asks about one record. */
function recordCondition(adapter: DialectAdapter, test: StoredDataTest): Expression<SqlBool> | undefined {
  if (test.kind === 'records-with')
    return sql<SqlBool>`${jsonValue(adapter, 'data', test.attribute)} is not null`;
  if (test.kind === 'records-without')
    return sql<SqlBool>`coalesce(cast(${jsonValue(adapter, 'data', test.attribute)} as text), '') = ''`;
  return undefined;
}

/** Whether a record the test asks about lies within record ids `(after, upTo]` (`upTo` undefined: no end). */
async function recordFound(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  test: Extract<StoredDataTest, { namespace: string }>,
  after: number,
  upTo: number | undefined,
): Promise<boolean> {
  let query = db
    .selectFrom('records')
    .select('record_id')
    .where('namespace', '=', test.namespace)
    .where('entity', '=', test.entity)
    .where('record_id', '>', after);
  if (upTo !== undefined) query = query.where('record_id', '<=', upTo);
  const condition = recordCondition(adapter, test);
  if (condition !== undefined) query = query.where(condition);
  return (await query.limit(1).executeTakeFirst()) !== undefined;
}

/** Whether a journal (or a line with the field) is stored. */
async function journalFound(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  test: Extract<StoredDataTest, { kind: 'journals' | 'lines-with' }>,
): Promise<boolean> {
  if (test.kind === 'journals')
    return (await db.selectFrom('journals').select('journal_id').limit(1).executeTakeFirst()) !== undefined;
  const found = await db
    .selectFrom('journal_lines')
    .select('line_id')
    .where(sql<SqlBool>`${jsonValue(adapter, 'extras', test.field)} is not null`)
    .limit(1)
    .executeTakeFirst();
  return found !== undefined;
}

function blockingOf(risk: StoredDataRisk): BlockingChange {
  return { path: risk.path, reason: risk.reason };
}

/**
 * The risks that the data stored now makes blocking, read outside any transaction, and the
 * record id up to which the records were read: the transaction of the upload reads the records
 * after it ({@link blockingInTransaction}). On PostgreSQL that id is 0 (see the header).
 */
export async function checkStoredData(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  risks: readonly StoredDataRisk[],
): Promise<{ blocking: BlockingChange[]; checkedUpTo: number }> {
  return byDialect(adapter.dialect, { postgres: checkAtOnce, sqlite: checkInSteps })(db, adapter, risks);
}

/** PostgreSQL: each test in one statement; the upload's transaction then sees every record (see the header). */
async function checkAtOnce(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  risks: readonly StoredDataRisk[],
): Promise<{ blocking: BlockingChange[]; checkedUpTo: number }> {
  const blocking: BlockingChange[] = [];
  for (const risk of risks) if (await found(db, adapter, risk.test, 0)) blocking.push(blockingOf(risk));
  return { blocking, checkedUpTo: 0 };
}

/**
 * SQLite: the records stored now, read in steps between turns of the event loop, up to the last
 * id, which the upload's transaction reads on from.
 */
async function checkInSteps(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  risks: readonly StoredDataRisk[],
): Promise<{ blocking: BlockingChange[]; checkedUpTo: number }> {
  const blocking: BlockingChange[] = [];
  const last = await db
    .selectFrom('records')
    .select((eb) => eb.fn.max('record_id').as('id'))
    .executeTakeFirst();
  const checkedUpTo = Number(last?.id ?? 0);
  for (const risk of risks) {
    const { test } = risk;
    let hit = false;
    if (test.kind === 'journals' || test.kind === 'lines-with') hit = await journalFound(db, adapter, test);
    else {
      for (let after = 0; after < checkedUpTo && !hit; after += RECORDS_PER_CHECK_STEP) {
        hit = await recordFound(
          db,
          adapter,
          test,
          after,
          Math.min(after + RECORDS_PER_CHECK_STEP, checkedUpTo),
        );
        await nextTurn();
      }
    }
    if (hit) blocking.push(blockingOf(risk));
  }
  return { blocking, checkedUpTo };
}

async function found(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  test: StoredDataTest,
  after: number,
): Promise<boolean> {
  if (test.kind === 'journals' || test.kind === 'lines-with') return journalFound(db, adapter, test);
  return recordFound(db, adapter, test, after, undefined);
}

/**
 * The risks that the stored data makes blocking, read inside the upload's transaction: the
 * records after `checkedUpTo` (every record when it is 0), and the journals. Runs inside the
 * caller's transaction, which must keep new chunks and journals out until it commits.
 */
export async function blockingInTransaction(
  trx: Kysely<Database>,
  adapter: DialectAdapter,
  risks: readonly StoredDataRisk[],
  checkedUpTo: number,
): Promise<BlockingChange[]> {
  const blocking: BlockingChange[] = [];
  for (const risk of risks)
    if (await found(trx, adapter, risk.test, checkedUpTo)) blocking.push(blockingOf(risk));
  return blocking;
}
