/**
 * How each dialect numbers the rows of extract sources (docs/adr/0022-gap-free-extract-
 * offsets.md), in one place per dialect: PostgreSQL positions are transaction ids (`xid8`) and a
 * window is read against two snapshots (`positions-postgres.ts`); SQLite positions are numbers
 * handed out by its one writer, and journals are numbered in an append-only log
 * (`positions-sqlite.ts`). `source-reads.ts` writes each source's statement once, with these.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ExtractSource, RowKey, SourceWindow } from '../../modules/extracts/store.js';
import type { Database } from '../schema.js';

/** A line of a posted journal with the journal values a line record holds, and its position. */
export interface LineRow {
  journal_id: string;
  ingestion_id: string;
  core_date: string;
  journal_type: string;
  accounting_config: string;
  node: string;
  reverses: string | null;
  reversed_by: string | null;
  origin_journal_id: string | null;
  position: string;
  line_id: string;
  line_no: number;
  account: string;
  amount: string;
  currency: string;
  extras: string;
}

/** Where the journals of a source are read, the column of their position, and which rows are theirs. */
export interface JournalSource {
  from: RawBuilder<unknown>;
  column: string;
  condition: RawBuilder<unknown>;
}

/** The key of the rows of a table whose rows are numbered as they are written (errors, records). */
export interface WrittenKey {
  /** The column of the position. */
  column: string;
  /** The rows after the key `after` (position, id). */
  after(after: RowKey): RawBuilder<unknown>;
  /** The order of the key. */
  order: RawBuilder<unknown>;
}

export interface ExtractPositions {
  /** Where every offset starts: before every row. */
  readonly start: string;
  /** The position that ends a new window of `source`, as an SQL expression. */
  bound(source: ExtractSource): RawBuilder<string>;
  /** The rows of the position column `column` in `window`. */
  inWindow(column: string, window: SourceWindow): RawBuilder<unknown>;
  /** The position column as text. */
  positionText(column: string): RawBuilder<string>;
  /** Where the posted journals, or those written unposted, are read. */
  journalSource(posted: boolean): JournalSource;
  /** The journals after the journal key `after` (position, journal id), or from it. */
  afterJournal(column: string, after: RowKey, orEqual: boolean): RawBuilder<unknown>;
  /**
   * Up to `limit + 1` lines of the posted journals that meet `journalConditions`, after the line
   * key `after` (position, journal id, line number), in key order.
   */
  linePage(
    db: Kysely<Database>,
    journalConditions: readonly RawBuilder<unknown>[],
    after: RowKey | undefined,
    limit: number,
  ): Promise<LineRow[]>;
  /** The key of the table `alias`, whose rows are numbered by `idColumn`. */
  writtenKey(alias: string, idColumn: string): WrittenKey;
}

/** Joins conditions with `and`; `true` when there are none. */
export function allOf(conditions: readonly RawBuilder<unknown>[]): RawBuilder<unknown> {
  return conditions.length === 0 ? sql`1 = 1` : sql.join([...conditions], sql` and `);
}
