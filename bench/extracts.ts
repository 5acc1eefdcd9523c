import { performance } from 'node:perf_hooks';
import { type Filler, fillerOf, series } from './direct-fill.js';
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
  expectStatus,
  percentile,
  sampleResidentBytes,
  uploadBenchConfiguration,
  withService,
} from './service.js';

/**
 * Issue 25's targets: a streamed extract of 1 million journal lines at ≥ 100,000 lines/s on
 * SQLite with the service's peak RSS under 300 MiB, and an incremental read of the last 1,000
 * rows in ≤ 20 ms at 10 million rows.
 */
const STREAM_LINES = 1_000_000;
const STREAM_LINES_PER_S_TARGET = 100_000;
const RSS_BYTES_MAX = 300 * 1024 * 1024;
const RSS_SAMPLE_INTERVAL_MS = 100;
export const EXTRACT_INCREMENTAL_JOURNALS_DEFAULT = 10_000_000;
const INCREMENT_ROWS = 1000;
const INCREMENTAL_READ_MS_TARGET = 20;
/** Incremental reads timed, each after 1,000 new journals; the first ones warm up. */
const INCREMENTAL_ROUNDS = 25;
const INCREMENTAL_WARMUP = 5;
/** Journals inserted per statement of the fill, so a statement never holds gigabytes of undo. */
const FILL_BATCH = 1_000_000;

function journalId(dialect: Dialect, value: string): string {
  return dialect === 'postgres'
    ? `'00000000-0000-4000-8000-' || lpad(cast(${value} as text), 12, '0')`
    : `'00000000-0000-4000-8000-' || substr('000000000000' || cast(${value} as text), -12)`;
}

/** Posted journals numbered `from` to `from + count - 1`, with `lines` balanced lines each. */
async function fillJournals(filler: Filler, dialect: Dialect, from: number, count: number, lines: number) {
  for (let start = from; start < from + count; start += FILL_BATCH) {
    const size = Math.min(FILL_BATCH, from + count - start);
    const i = `(i + ${start})`;
    await filler.run(`insert into journals (journal_id, ingestion_id, record_id, core_date, original_core_date,
        journal_type, accounting_config, node, posted, reverses, reversed_by, origin_journal_id, line_count,
        created_at)
      select ${journalId(dialect, i)}, 'in_bench_extracts', ${i} + 1, '2026-11-20', null, 'STANDARD', 'ACC0',
        '{"legalEntity":"LE0"}', 1, null, null, null, ${lines}, '2026-11-20T12:00:00.000Z'
      from ${series(dialect, size)}`);
    // SQLite: the writers of journals log them for extracts (storage/extract-journal-log.ts).
    if (dialect === 'sqlite')
      await filler.run(`insert into extract_journal_log (journal_id, posted)
        select ${journalId(dialect, i)}, 1 from ${series(dialect, size)}`);
    if (lines === 0) continue;
    const amount = `case when l % 2 = 0 then '' else '-' end || cast(${i} % 100000 as text) || '.25'`;
    await filler.run(`insert into journal_lines (line_id, journal_id, line_no, account, amount, currency, extras)
      select ${journalId(dialect, `(${i} * ${lines} + l)`)}, ${journalId(dialect, i)}, l + 1,
        case when l % 2 = 0 then '1000' else '2000' end,
        ${dialect === 'postgres' ? `cast(${amount} as numeric)` : amount}, 'EUR', '{}'
      from ${series(dialect, size)} cross join (select 0 as l union all select 1) as ls`);
  }
}

async function openSession(filler: Filler): Promise<void> {
  await filler.run(`insert into ingestions (ingestion_id, ingestion_name, namespace, entity, state, timeout,
      timeout_ms, opened_by, opened_on, closed_by, closed_on, close_reason, last_activity_on, expires_at_ms,
      chunk_seq_next, chunks, api_calls, total_rows, success_rows, failed_rows, processed_rows,
      processing_failed_rows, counted)
    values ('in_bench_extracts', null, 'bench', 'trade', 'closed', 'PT1H', 3600000, 'bench', '2026-11-20T08:00:00.000Z',
      'bench', '2026-11-20T09:00:00.000Z', 'manual', '2026-11-20T09:00:00.000Z', 0, 1, 1, 1, 0, 0, 0, 0, 0, 1)`);
}

async function activeConfiguration(service: BenchService, body: Record<string, unknown>): Promise<number> {
  const created = await service.request('POST', '/api/v1/extraction-configurations', body);
  expectStatus(created, 201, 'POST /api/v1/extraction-configurations');
  const id = (created.body as { id: number }).id;
  expectStatus(
    await service.request('PATCH', `/api/v1/extraction-configurations/${id}`, { state: 'Active' }),
    200,
    'PATCH /api/v1/extraction-configurations/{id}',
  );
  return id;
}

interface StreamRun {
  lines: number;
  bytes: number;
  ms: number;
  peakRssBytes: number;
  fillMs: number;
}

/** The streamed JSON Lines download of every line of 500,000 posted journals. */
async function measureStream(service: BenchService, dialect: Dialect): Promise<StreamRun> {
  await uploadBenchConfiguration(service);
  const filler = await fillerOf(dialect, service.databaseUrl);
  const fillStart = performance.now();
  try {
    await openSession(filler);
    await fillJournals(filler, dialect, 0, STREAM_LINES / 2, 2);
    if (dialect === 'postgres') await filler.run('analyze');
  } finally {
    await filler.close();
  }
  const fillMs = performance.now() - fillStart;
  const id = await activeConfiguration(service, {
    name: 'all lines',
    source: 'journal-lines',
    format: 'jsonl',
  });
  const sampler = sampleResidentBytes(service.pid, RSS_SAMPLE_INTERVAL_MS);
  const start = performance.now();
  const response = await fetch(`${service.url}/api/v1/extraction-configurations/${id}/extractions`, {
    headers: { authorization: `Bearer ${service.accessToken}` },
  });
  if (response.status !== 200 || response.body === null) throw new Error(`download: ${response.status}`);
  let lines = 0;
  let bytes = 0;
  for await (const chunk of response.body) {
    const part = chunk as Uint8Array;
    bytes += part.length;
    for (let at = part.indexOf(10); at !== -1; at = part.indexOf(10, at + 1)) lines += 1;
  }
  const ms = performance.now() - start;
  const peakRssBytes = sampler.stop();
  if (lines !== STREAM_LINES) throw new Error(`the extract had ${lines} lines, not ${STREAM_LINES}`);
  console.log(
    `extracts ${dialect}: ${formatNumber(lines)} lines in ${formatNumber(ms)} ms (${formatNumber((lines / ms) * 1000)} lines/s), peak RSS ${formatNumber(peakRssBytes / 1024 / 1024, 1)} MiB`,
  );
  return { lines, bytes, ms, peakRssBytes, fillMs };
}

interface IncrementalRun {
  journals: number;
  fillMs: number;
  latenciesMs: number[];
}

/**
 * An incremental posted-journals extract over `journals` journals, acknowledged to the end; then,
 * round after round, 1,000 new journals and the read that answers them (its first page, which
 * fixes the answer, of 1,000 rows), timed, and its acknowledgement.
 */
async function measureIncremental(
  service: BenchService,
  dialect: Dialect,
  journals: number,
): Promise<IncrementalRun> {
  await uploadBenchConfiguration(service);
  const filler = await fillerOf(dialect, service.databaseUrl);
  const fillStart = performance.now();
  try {
    await openSession(filler);
    await fillJournals(filler, dialect, 0, journals, 0);
    if (dialect === 'postgres') await filler.run('analyze');
  } finally {
    await filler.close();
  }
  const fillMs = performance.now() - fillStart;
  console.log(
    `extracts ${dialect}: ${formatNumber(journals)} journals generated in ${formatNumber(fillMs / 1000, 1)} s`,
  );
  const id = await activeConfiguration(service, {
    name: 'new journals',
    source: 'posted-journals',
    fields: ['journalId', 'coreDate', 'accountingConfig'],
    incremental: true,
  });
  const page = `/api/v1/extraction-configurations/${id}/extractions/paginated?limit=${INCREMENT_ROWS}`;
  // Everything stored so far, acknowledged: the first read fixes its end, the increment moves past it.
  expectStatus(
    await service.request('GET', page.replace(`limit=${INCREMENT_ROWS}`, 'limit=1')),
    200,
    'first read',
  );
  expectStatus(
    await service.request('POST', `/api/v1/extraction-configurations/${id}/increment`),
    200,
    'increment',
  );
  const latenciesMs: number[] = [];
  const inserter = await fillerOf(dialect, service.databaseUrl);
  try {
    for (let round = 0; round < INCREMENTAL_ROUNDS; round += 1) {
      await fillJournals(inserter, dialect, journals + round * INCREMENT_ROWS, INCREMENT_ROWS, 0);
      const start = performance.now();
      const answer = await service.request('GET', page);
      const ms = performance.now() - start;
      expectStatus(answer, 200, 'incremental read');
      const rows = (answer.body as { data: unknown[] }).data.length;
      if (rows !== INCREMENT_ROWS)
        throw new Error(`the incremental read answered ${rows} rows, not ${INCREMENT_ROWS}`);
      expectStatus(
        await service.request('POST', `/api/v1/extraction-configurations/${id}/increment`),
        200,
        'increment',
      );
      if (round >= INCREMENTAL_WARMUP) latenciesMs.push(ms);
    }
  } finally {
    await inserter.close();
  }
  console.log(
    `extracts ${dialect}: incremental read of ${INCREMENT_ROWS} rows at ${formatNumber(journals)}: p50 ${formatNumber(percentile(latenciesMs, 0.5), 1)} ms, p95 ${formatNumber(percentile(latenciesMs, 0.95), 1)} ms`,
  );
  return { journals, fillMs, latenciesMs };
}

/** Issue 25: a streamed extract of 1 million lines, and an incremental read at `journals` journals. */
export async function runExtracts(
  context: RunContext,
  dialects: readonly Dialect[],
  journals: number,
): Promise<Section[]> {
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    let storage = '';
    const stream = await withService(dialect, (service) => {
      storage = service.storage;
      return measureStream(service, dialect);
    });
    const incremental = await withService(dialect, (service) =>
      measureIncremental(service, dialect, journals),
    );
    const linesPerS = (stream.lines / stream.ms) * 1000;
    const p95 = percentile(incremental.latenciesMs, 0.95);
    const mib = (bytes: number) => `${formatNumber(bytes / 1024 / 1024, 1)} MiB`;
    const markdown = [
      ...sectionHead({
        title: `Extracts, ${DIALECT_TITLE[dialect]}`,
        machine: context.machine,
        storage,
        command: context.command,
        stamp,
      }),
      ...table(
        ['measure', 'result', 'target', 'verdict'],
        [
          [
            `streamed JSON Lines download of ${formatNumber(stream.lines)} journal lines (${mib(stream.bytes)})`,
            `${formatNumber(linesPerS)} lines/s (${formatNumber(stream.ms)} ms)`,
            dialect === 'sqlite' ? `≥ ${formatNumber(STREAM_LINES_PER_S_TARGET)} lines/s` : '',
            dialect === 'sqlite' ? (linesPerS >= STREAM_LINES_PER_S_TARGET ? 'met' : '**not met**') : '',
          ],
          [
            `peak RSS of the service during the download, sampled every ${RSS_SAMPLE_INTERVAL_MS} ms`,
            mib(stream.peakRssBytes),
            `< ${mib(RSS_BYTES_MAX)}`,
            stream.peakRssBytes < RSS_BYTES_MAX ? 'met' : '**not met**',
          ],
          [
            `incremental read of the last ${formatNumber(INCREMENT_ROWS)} posted journals at ${formatNumber(incremental.journals)} journals, p50 / p95 of ${INCREMENTAL_ROUNDS - INCREMENTAL_WARMUP}`,
            `${formatNumber(percentile(incremental.latenciesMs, 0.5), 1)} ms / ${formatNumber(p95, 1)} ms`,
            `≤ ${INCREMENTAL_READ_MS_TARGET} ms`,
            p95 <= INCREMENTAL_READ_MS_TARGET ? 'met' : '**not met**',
          ],
        ],
      ),
      '',
      `Method. Each measure on a fresh service and database with the benchmark configuration uploaded. The download: ${formatNumber(STREAM_LINES / 2)} posted journals of two lines written straight into the database (generated in ${formatNumber(stream.fillMs / 1000, 1)} s, not measured), a non-incremental \`journal-lines\` configuration in JSON Lines, and \`GET …/extractions\` read to its last byte, counting lines. The incremental read: ${formatNumber(incremental.journals)} posted journals written straight into the database (in ${formatNumber(incremental.fillMs / 1000, 1)} s, not measured), an incremental \`posted-journals\` configuration whose first answer is acknowledged at once; then ${INCREMENTAL_ROUNDS} rounds of ${formatNumber(INCREMENT_ROWS)} new posted journals written in one statement and \`GET …/extractions/paginated?limit=${INCREMENT_ROWS}\` (the first read after an acknowledgement: it fixes the answer and reads it), timed from the request to the last byte, then \`increment\`; the first ${INCREMENTAL_WARMUP} rounds are not counted.`,
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `extracts-${dialect}`, markdown });
  }
  return sections;
}
