import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { cursorOf } from '../src/http/api/cursor.js';
import { TRADE_ENTITY, TRADE_NAMESPACE } from './data.js';
import { ADMIN_EMAIL, type Filler, fillerOf, series, signIn } from './direct-fill.js';
import {
  DIALECT_TITLE,
  formatNumber,
  type RunContext,
  type Section,
  sectionHead,
  stampNow,
  table,
} from './report.js';
import {
  type BenchService,
  type Dialect,
  percentile,
  uploadBenchConfiguration,
  withService,
} from './service.js';

/**
 * The `reads` part ("reads that stay fast as the books grow"): the p50 and p95 of the
 * API's read endpoints and the administration's dashboard and balances pages on stores of
 * 0.1 M and 1 M journals (and more with `--reads-journals`), so the curve shows whether a read
 * costs the journals stored or only the accounts and the page asked for. The store is written
 * straight into the service's database with set-based SQL, as `bench/admin.ts` does: a million
 * journals through the API would take hours and measure the write path, not the reads.
 */

/** The store sizes every run measures; `--reads-journals N` adds another. */
export const READS_JOURNALS_DEFAULT: readonly number[] = [100_000, 1_000_000];
/** Journals per ingestion session, so the sessions list grows with the books too. */
const JOURNALS_PER_SESSION = 100;
/** Core dates spread over a year that ends this many days after the run: those are future-dated. */
const DAYS = 365;
const FUTURE_DAYS = 30;
/** Every this many journals one is unposted. */
const UNPOSTED_EVERY = 10;
const ACCOUNTING_CONFIGS = 3;
const NODES = 5;
const CURRENCIES = ['EUR', 'USD', 'GBP'] as const;
/** Debit accounts the first line of a journal goes to; the second line always goes to `2000`. */
const DEBIT_ACCOUNTS = 7;
/** Calls per endpoint: the first ones warm caches and plans and are not counted. */
const WARMUP_REQUESTS = 3;
const TIMED_REQUESTS = 30;
/** Where the deep cursor of a list starts: after this share of its rows. */
const DEEP_SHARE = 0.9;
const PAGE_LIMIT = 50;
/** The issue's targets, as p95. */
const API_READ_MS_TARGET = 20;
const ADMIN_PAGE_MS_TARGET = 100;
const DAY_MS = 86_400_000;
/** The pause after a fill before the next request (see `measureSize`). */
const FILL_SETTLE_MS = 100;

/** The day `offset` (an SQL expression) days after `first` (YYYY-MM-DD), as YYYY-MM-DD text. */
function dayAfter(dialect: Dialect, first: string, offset: string): string {
  return dialect === 'postgres'
    ? `to_char(date '${first}' + cast(${offset} as integer), 'YYYY-MM-DD')`
    : `date('${first}', '+' || cast(${offset} as text) || ' days')`;
}

/** The text `value` (an SQL integer expression) left-padded with zeros to `width` digits. */
function padded(dialect: Dialect, value: string, width: number): string {
  return dialect === 'postgres'
    ? `lpad(cast(${value} as text), ${width}, '0')`
    : `substr('${'0'.repeat(width)}' || cast(${value} as text), -${width})`;
}

/** The id of journal (or line) number `value` (an SQL expression): a UUID, as the service makes them. */
function journalId(dialect: Dialect, value: string): string {
  return `'00000000-0000-4000-8000-' || ${padded(dialect, value, 12)}`;
}

/** The first core date of the store and the mid-year day balances are read as of. */
interface Calendar {
  first: string;
  midYear: string;
}

function calendarNow(): Calendar {
  const firstMs = Date.now() - (DAYS - FUTURE_DAYS) * DAY_MS;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { first: day(firstMs), midYear: day(firstMs + Math.floor(DAYS / 2) * DAY_MS) };
}

/**
 * Writes `journals` journals of two balanced lines into the store, in closed sessions of
 * `JOURNALS_PER_SESSION` each, over `DAYS` core dates (the last `FUTURE_DAYS` after today), a
 * tenth unposted; then fills the kept balances from the posted lines with the two
 * `insert … select` of the 0012 migration's backfill, and sets the sessions' counters as the
 * service keeps them (the statistics read those counters and the journals themselves).
 */
async function fill(filler: Filler, dialect: Dialect, journals: number, calendar: Calendar): Promise<void> {
  const sessions = Math.ceil(journals / JOURNALS_PER_SESSION);
  const openedOn = `${dayAfter(dialect, calendar.first, `i % ${DAYS}`)} || 'T08:00:00.000Z'`;
  const closedOn = `${dayAfter(dialect, calendar.first, `i % ${DAYS}`)} || 'T09:00:00.000Z'`;
  await filler.run(`insert into ingestions (ingestion_id, ingestion_name, namespace, entity, state, timeout,
      timeout_ms, opened_by, opened_on, closed_by, closed_on, close_reason, last_activity_on, expires_at_ms,
      chunk_seq_next, chunks, api_calls, total_rows, success_rows, failed_rows, processed_rows,
      processing_failed_rows, counted)
    select 'in_' || ${padded(dialect, 'i', 32)}, null, '${TRADE_NAMESPACE}', '${TRADE_ENTITY}', 'closed', 'PT1H', 3600000,
      '${ADMIN_EMAIL}', ${openedOn}, '${ADMIN_EMAIL}', ${closedOn}, 'manual', ${closedOn}, 0,
      1, 1, 2, ${JOURNALS_PER_SESSION}, ${JOURNALS_PER_SESSION}, 0, ${JOURNALS_PER_SESSION}, 0, 1
    from ${series(dialect, sessions)}`);
  // The closed sessions in the session counters, as the 0016 migration's backfill counts them
  // (into the first stripe, as the 0020 migration moves them).
  await filler.run(`insert into session_day_counts
      (day, stripe, sessions, closed, expired, chunks, api_calls, total_rows, success_rows, failed_rows)
    select substr(opened_on, 1, 10), 0, count(*), count(*), 0, sum(chunks), sum(api_calls),
      sum(total_rows), sum(success_rows), sum(failed_rows)
    from ingestions where counted = 1 group by substr(opened_on, 1, 10)`);
  await filler.run(`insert into session_entity_counts (namespace, entity, stripe, sessions, closed, expired)
    select namespace, entity, 0, count(*), count(*), 0
    from ingestions where counted = 1 group by namespace, entity`);
  const coreDate = dayAfter(dialect, calendar.first, `i % ${DAYS}`);
  await filler.run(`insert into journals (journal_id, ingestion_id, record_id, core_date, original_core_date,
      journal_type, accounting_config, node, posted, reverses, reversed_by, origin_journal_id, line_count,
      created_at)
    select ${journalId(dialect, 'i')}, 'in_' || ${padded(dialect, `i / ${JOURNALS_PER_SESSION}`, 32)},
      i + 1, ${coreDate}, null, 'STANDARD', 'ACC' || cast(i % ${ACCOUNTING_CONFIGS} as text),
      '{"legalEntity":"LE' || cast(i % ${NODES} as text) || '"}',
      case when i % ${UNPOSTED_EVERY} = 0 then 0 else 1 end, null, null, null, 2,
      ${coreDate} || 'T12:00:00.000Z'
    from ${series(dialect, journals)}`);
  const amount = `case when i % 2 = 0 then '' else '-' end || cast(i / 2 % 100000 as text) || '.25'`;
  const currency = `case i / 2 % ${CURRENCIES.length} ${CURRENCIES.map((c, n) => `when ${n} then '${c}'`).join(' ')} end`;
  await filler.run(`insert into journal_lines (line_id, journal_id, line_no, account, amount, currency, extras)
    select ${journalId(dialect, 'i')}, ${journalId(dialect, 'i / 2')}, i % 2 + 1,
      case when i % 2 = 0 then '1000' || cast(i / 2 % ${DEBIT_ACCOUNTS} as text) else '2000' end,
      ${dialect === 'postgres' ? `cast(${amount} as numeric)` : amount}, ${currency}, '{}'
    from ${series(dialect, journals * 2)}`);
  const total = dialect === 'postgres' ? 'sum' : 'decimal_sum';
  await filler.run(`insert into balance_moves (accounting_config, node, account, currency, core_date, amount)
    select j.accounting_config, j.node, l.account, l.currency, j.core_date, ${total}(l.amount)
    from journal_lines as l join journals as j on j.journal_id = l.journal_id
    where j.posted = 1
    group by j.accounting_config, j.node, l.account, l.currency, j.core_date`);
  await filler.run(`insert into balances (accounting_config, node, account, currency, amount)
    select accounting_config, node, account, currency, ${total}(amount)
    from balance_moves
    group by accounting_config, node, account, currency`);
  // The journal counters the statistics and the list totals read, as the 0015 migration's
  // backfill fills them (the store holds no records nor processing errors, so their counters
  // stay empty, as on a store whose journals came from nowhere).
  await filler.run(`insert into journal_day_counts (core_date, posted, accounting_config, journals, lines)
    select core_date, posted, accounting_config, count(*), coalesce(sum(line_count), 0)
    from journals group by core_date, posted, accounting_config`);
  // PostgreSQL's autovacuum analyses tables this size on its own; done here so the plans are
  // those of a store that has been running. The service never runs ANALYZE on SQLite.
  if (dialect === 'postgres') await filler.run('analyze');
}

/** What is read and how: an API call with the bearer token, or a page with the admin cookie. */
interface Read {
  what: string;
  path: string;
  kind: 'api' | 'admin';
}

/**
 * The cursors after the row that ends the page-number page holding `share` of the rows, of the
 * journals and of the sessions lists, read from the store on their sort keys (as the service
 * makes a `next`). Asking the service for that page would read every row before it: page
 * paging costs its offset, which is why the lists page by cursor (at 10 M journals on
 * PostgreSQL, past the statement timeout).
 */
async function deepCursors(
  filler: Filler,
  journals: number,
  sessions: number,
  share: number,
): Promise<{ journals: string; sessions: string }> {
  const offsetOf = (rows: number) => Math.max(0, Math.floor((rows * share) / PAGE_LIMIT) * PAGE_LIMIT - 1);
  const journal = await filler.first(
    `select core_date, created_at, journal_id from journals
     order by core_date, created_at, journal_id limit 1 offset ${offsetOf(journals)}`,
  );
  const session = await filler.first(
    `select opened_on, ingestion_id from ingestions
     order by opened_on desc, ingestion_id desc limit 1 offset ${offsetOf(sessions)}`,
  );
  if (journal === undefined || session === undefined) throw new Error('no row at the deep cursor');
  return {
    journals: cursorOf('journals', [
      String(journal.core_date),
      String(journal.created_at),
      String(journal.journal_id),
    ]),
    sessions: cursorOf('ingestions', [String(session.opened_on), String(session.ingestion_id)]),
  };
}

/** Calls `read` `WARMUP_REQUESTS + TIMED_REQUESTS` times one after the other; the timed latencies. */
async function timeRead(service: BenchService, cookie: string, read: Read): Promise<number[]> {
  const headers: Record<string, string> =
    read.kind === 'api' ? { authorization: `Bearer ${service.accessToken}` } : { cookie };
  const latenciesMs: number[] = [];
  for (let n = 0; n < WARMUP_REQUESTS + TIMED_REQUESTS; n += 1) {
    const startMs = performance.now();
    const response = await fetch(`${service.url}${read.path}`, { headers, redirect: 'manual' });
    await response.text();
    const elapsedMs = performance.now() - startMs;
    if (response.status !== 200) throw new Error(`GET ${read.path}: expected 200, got ${response.status}`);
    if (n >= WARMUP_REQUESTS) latenciesMs.push(elapsedMs);
  }
  return latenciesMs;
}

/** The p95 target of a read, in milliseconds. */
function targetOf(read: Read): number {
  return read.kind === 'admin' ? ADMIN_PAGE_MS_TARGET : API_READ_MS_TARGET;
}

interface SizeRun {
  journals: number;
  fillMs: number;
  timings: { read: Read; latenciesMs: number[] }[];
}

async function measureSize(
  service: BenchService,
  dialect: Dialect,
  journals: number,
  password: string,
): Promise<SizeRun> {
  await uploadBenchConfiguration(service);
  const calendar = calendarNow();
  const filler = await fillerOf(dialect, service.databaseUrl);
  const fillStartMs = performance.now();
  const sessions = Math.ceil(journals / JOURNALS_PER_SESSION);
  let deep: { journals: string; sessions: string };
  try {
    await fill(filler, dialect, journals, calendar);
    deep = await deepCursors(filler, journals, sessions, DEEP_SHARE);
  } finally {
    await filler.close();
  }
  const fillMs = performance.now() - fillStartMs;
  console.log(
    `reads ${dialect} ${formatNumber(journals)}: store generated in ${formatNumber(fillMs / 1000, 1)} s`,
  );
  // A SQLite fill runs on this thread and holds its event loop for minutes, while the service
  // closes the idle keep-alive connection of the upload; one turn of the loop lets the HTTP
  // client see that close, so the next request does not write to the dead socket (EPIPE).
  await sleep(FILL_SETTLE_MS);
  const cookie = await signIn(service, password);
  const statistics = '/api/v1/statistics/operational-dashboard';
  const reads: Read[] = [
    { what: 'balances now', path: '/api/v1/balances', kind: 'api' },
    { what: 'balances as of mid-year', path: `/api/v1/balances?asOf=${calendar.midYear}`, kind: 'api' },
    { what: 'journals, first page', path: `/api/v1/journals?limit=${PAGE_LIMIT}`, kind: 'api' },
    {
      what: `journals, cursor after ${DEEP_SHARE * 100} %`,
      path: `/api/v1/journals?limit=${PAGE_LIMIT}&after=${deep.journals}`,
      kind: 'api',
    },
    { what: 'sessions, first page', path: `/api/v1/ingestions?limit=${PAGE_LIMIT}`, kind: 'api' },
    {
      what: `sessions, cursor after ${DEEP_SHARE * 100} %`,
      path: `/api/v1/ingestions?limit=${PAGE_LIMIT}&after=${deep.sessions}`,
      kind: 'api',
    },
    { what: 'statistics: ingestion metrics', path: `${statistics}/ingestion-metrics`, kind: 'api' },
    { what: 'statistics: journal metrics', path: `${statistics}/journal-metrics`, kind: 'api' },
    { what: 'statistics: journal metrics by day', path: `${statistics}/journal-metrics-by-day`, kind: 'api' },
    { what: 'statistics: processing', path: '/api/v1/statistics/processing', kind: 'api' },
    { what: 'admin dashboard', path: '/admin/dashboard', kind: 'admin' },
    { what: 'admin balances', path: '/admin/balances', kind: 'admin' },
  ];
  const timings: SizeRun['timings'] = [];
  for (const read of reads) {
    const latenciesMs = await timeRead(service, cookie, read);
    console.log(
      `reads ${dialect} ${formatNumber(journals)}: ${read.what}: p50 ${formatNumber(percentile(latenciesMs, 0.5), 1)} ms, p95 ${formatNumber(percentile(latenciesMs, 0.95), 1)} ms`,
    );
    timings.push({ read, latenciesMs });
  }
  return { journals, fillMs, timings };
}

/** `100,000` as `0.1 M`: the column headings of the curve. */
function millions(journals: number): string {
  return `${formatNumber(journals / 1_000_000, journals < 1_000_000 ? 1 : 0)} M`;
}

function resultTable(runs: readonly SizeRun[]): string[] {
  const first = runs[0];
  if (first === undefined) return [];
  const headers = [
    'read',
    'path',
    ...runs.flatMap((run) => [`p50 ${millions(run.journals)}`, `p95 ${millions(run.journals)}`]),
    'target (p95)',
    'met',
  ];
  const rows = first.timings.map(({ read }, index) => {
    const target = targetOf(read);
    const p95s = runs.map((run) => percentile(run.timings[index]?.latenciesMs ?? [], 0.95));
    return [
      read.what,
      `\`${read.path.replace(/after=[\w-]+/, 'after={cursor}').replace(/asOf=[\d-]+/, 'asOf={mid-year}')}\``,
      ...runs.flatMap((run, n) => [
        `${formatNumber(percentile(run.timings[index]?.latenciesMs ?? [], 0.5), 1)} ms`,
        `${formatNumber(p95s[n] ?? 0, 1)} ms`,
      ]),
      `≤ ${target} ms`,
      p95s.every((p95) => p95 <= target) ? 'met' : '**not met**',
    ];
  });
  return table(headers, rows);
}

/**
 * Times the read endpoints on each store size and dialect: a fresh service and database per
 * size, so every size is read as a store of that size that has just been written.
 */
export async function runReads(
  context: RunContext,
  dialects: readonly Dialect[],
  sizes: readonly number[],
): Promise<Section[]> {
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const runs: SizeRun[] = [];
    let storage = '';
    for (const journals of sizes) {
      const password = randomBytes(18).toString('base64url');
      runs.push(
        await withService(
          dialect,
          (service) => {
            storage = service.storage;
            return measureSize(service, dialect, journals, password);
          },
          { ADMIN_EMAIL, ADMIN_PASSWORD: password },
        ),
      );
    }
    const generation = runs
      .map((run) => `${millions(run.journals)} in ${formatNumber(run.fillMs / 1000, 1)} s`)
      .join(', ');
    const markdown = [
      ...sectionHead({
        title: `Reads as the books grow, ${DIALECT_TITLE[dialect]}`,
        machine: context.machine,
        storage,
        command: context.command,
        stamp,
      }),
      ...resultTable(runs),
      '',
      `Store. For each size a fresh database, migrated by the service, with the benchmark configuration uploaded through the API; then, straight into the database with \`insert … select\` over a number series (${dialect === 'postgres' ? '`generate_series`' : 'a recursive CTE'}): one closed session per ${formatNumber(JOURNALS_PER_SESSION)} journals with its counters set and counted in the session counters (as the 0016 migration's backfill counts closed sessions), the journals of two balanced lines (${ACCOUNTING_CONFIGS} accounting configurations, ${NODES} nodes, ${DEBIT_ACCOUNTS + 1} accounts, ${CURRENCIES.length} currencies, one unposted in ${UNPOSTED_EVERY}, core dates over ${DAYS} days of which the last ${FUTURE_DAYS} are after the run), and the kept balances (\`balance_moves\`, \`balances\`) filled from the posted lines with one \`insert … select\` each, as the 0012 migration's backfill does, and the journal counters of the statistics and list totals as the 0015 migration's does${dialect === 'postgres' ? '; then `analyze` (as autovacuum would)' : ''}. Generation, not measured: ${generation}.`,
      '',
      `Method. Each read is called ${WARMUP_REQUESTS + TIMED_REQUESTS} times one after the other (API reads with the bearer token, admin pages signed in with e-mail and password); the first ${WARMUP_REQUESTS} are not counted, p50 and p95 are over the other ${TIMED_REQUESTS}, from sending the request to the last byte. Lists ask for ${PAGE_LIMIT} rows; the deep cursor is the \`next\` of the page-number page that ends after ${DEEP_SHARE * 100} % of the rows, made from the sort key of that page's last row read straight from the store (the page itself would cost its offset). Targets: balances and statistics p95 ≤ ${API_READ_MS_TARGET} ms, journals and sessions listings p95 ≤ ${API_READ_MS_TARGET} ms at any cursor position, admin dashboard and balances pages p95 ≤ ${ADMIN_PAGE_MS_TARGET} ms; "met" means at every size measured.`,
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `reads-${dialect}`, markdown });
  }
  return sections;
}
