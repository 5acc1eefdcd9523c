import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describeMachine, type Machine } from './machine.js';
import type { Dialect } from './service.js';

/** The document every run updates: one section per benchmark and storage dialect. */
export const BENCHMARKS_DOC_PATH = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));

/** How a section's title names its storage. */
export const DIALECT_TITLE: Record<Dialect, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** One benchmark's results, as Markdown, under a stable id (`ingestion-sqlite`, ...). */
export interface Section {
  id: string;
  markdown: string;
}

/** Sections appear in this order, whatever order they were run in; unknown ids go last. */
const SECTION_ORDER = [
  'validator',
  'token-sqlite',
  'token-postgres',
  'ingestion-sqlite',
  'ingestion-postgres',
  'processing-sqlite',
  'processing-postgres',
  'processing-limit-sqlite',
  'processing-limit-postgres',
  'processing-speed-sqlite',
  'processing-speed-postgres',
  'processing-speed-notes',
  'ingestion-under-processing-sqlite',
  'ingestion-under-processing-postgres',
  'flows-sqlite',
  'flows-postgres',
  'engine-before-after',
  'admin-sqlite',
  'admin-postgres',
  'reprocess-sqlite',
  'reprocess-postgres',
  'reverse-sqlite',
  'reverse-postgres',
  'rollback-sqlite',
  'rollback-postgres',
  'extracts-sqlite',
  'extracts-postgres',
  'reads-sqlite',
  'reads-postgres',
  'soak-sqlite',
  'soak-postgres',
  'soak-notes',
];

const INTRO = `# Benchmarks

Written by \`npm run bench\` (\`bench/run.ts\`); do not edit the sections by hand, run the benchmark
again. The exceptions are the sections written by hand, which say so in their title (the
accounting engine before and after a change, and what stops the processing targets that are not
met): a run measures one commit, so those comparisons are kept as they are by every run.
\`npm run bench\` builds the service and runs every part but the soak on SQLite and PostgreSQL;
\`npm run bench -- validator|token|ingestion|processing|processing-limit|ingestion-under-processing|processing-speed|flows|admin|reads|reprocess|reverse|rollback|extracts|soak\`
runs the parts named and \`--dialect sqlite|postgres|both\` picks the storage. The soak runs 10
minutes per dialect, or \`--soak-minutes N\`. It needs room on the disk of its store: once
processed, a record of the soak with its two journals, their four lines and every index takes
about 2.5 KiB on SQLite and 4 KiB on PostgreSQL, and 64 clients send tens of millions of records
in 10 minutes, so a 10-minute soak needs over 100 GiB free. It stops, and fails, when less than
4 GiB is left, during the load or after it. A run replaces only the sections it measured, so
each section names its own machine, date and command.

The service always runs as \`npm start\` runs it: \`MALLOC_ARENA_MAX=2 node --no-node-snapshot --max-semi-space-size=4 dist/main.js\` as a child process with
\`PORT=0\`, \`LOG_LEVEL=warn\`, \`RATE_LIMIT_MAX=1000000000\` (a part measures one client at full
speed, which the default per-client limit would stop; raised rather than off, so the limiter's
cost is in the figures), a fresh database (a temporary SQLite file, or a new PostgreSQL
database that is dropped afterwards), reached over HTTP on 127.0.0.1 only. The load generator runs
in the benchmark process on the same machine, so client and service share its cores. To see
where the service spends its time, \`SERVICE_CPU_PROFILE_DIR=DIR npm run bench -- …\` writes V8 CPU
profiles of it and of its worker threads into DIR when it stops.

How the targets read here: the ingestion target compares the service on SQLite
with the single-core limit (JSON.parse, type check, SQLite insert); the PostgreSQL run is
reported against the same SQLite limit, as the target asks, so its ratio compares across
dialects and is information, not the target. The processing target (processing at least 0.5
of the ingestion rate of the same events in the same run) is read on the events of one session,
sent and processed at once. The processing limit target (the engine takes at most a quarter of
the time of the stored events' work: reading, engine, inserts, commits, so that storage sets the
pace) is read per dialect as the median share of three rounds. The processing-speed part
(processing as fast as storage allows) measures its five figures in rounds of one run per dialect, each ratio between
measurements of the same round. The administration target (a page answers in well under a
second on a store of a million records) is read as a p95 of at most 300 ms per page. The rollback
part posts 20,000 business events, then sends the same events as \`ledger/businessEventRollback\`
records and compares the two rates, each from the first chunk sent to the session processed,
against the same half-of-processing target as reversals; a chunk's twins are found by their
fingerprints in one read of the \`journals_event_fingerprint\` index. The machine
is shared with other work; each section records the load average at its start, and figures of
the same code varied by up to 40 % between runs.
`;

const SECTION_PATTERN = /<!-- bench:([\w-]+) -->\n([\s\S]*?)<!-- \/bench:\1 -->\n?/g;

/** What every section starts with: what was measured, where, when and by which command. */
export interface SectionHead {
  title: string;
  machine: Machine;
  storage: string;
  command: string;
  stamp: Stamp;
}

/** When a measurement started, and how busy the machine was then (other processes included). */
export interface Stamp {
  at: Date;
  loadAverage1m: number;
}

/** The time and 1-minute load average now; take it just before measuring. */
export function stampNow(): Stamp {
  return { at: new Date(), loadAverage1m: loadavg()[0] ?? 0 };
}

/** The heading and provenance lines of a section. */
export function sectionHead(head: SectionHead): string[] {
  return [
    `## ${head.title}`,
    '',
    `- Machine: ${describeMachine(head.machine)}`,
    `- Storage: ${head.storage}`,
    `- Date: ${head.stamp.at.toISOString().replace(/\.\d+Z$/, 'Z')}; 1-minute load average at the start: ${head.stamp.loadAverage1m.toFixed(2)} on ${head.machine.cpuCount} cores`,
    `- Command: \`${head.command}\``,
    '',
  ];
}

/** A Markdown table. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${headers.join(' | ')} |`,
    `|${headers.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
}

/** A number with thousands separators and at most `fractionDigits` decimals. */
export function formatNumber(value: number, fractionDigits = 0): string {
  return value.toLocaleString('en-US', {
    minimumFractionDigits: fractionDigits,
    maximumFractionDigits: fractionDigits,
  });
}

/**
 * Replaces the given sections of docs/benchmarks.md (creating the file when needed) and keeps
 * every other section as it was, so a partial run never erases the figures of another part.
 */
export function updateBenchmarksDoc(sections: readonly Section[]): void {
  const existing = new Map<string, string>();
  if (existsSync(BENCHMARKS_DOC_PATH)) {
    for (const match of readFileSync(BENCHMARKS_DOC_PATH, 'utf8').matchAll(SECTION_PATTERN)) {
      const [, id, markdown] = match;
      if (id !== undefined && markdown !== undefined) existing.set(id, markdown);
    }
  }
  for (const section of sections) existing.set(section.id, `${section.markdown.trimEnd()}\n`);
  const rank = (id: string) => {
    const index = SECTION_ORDER.indexOf(id);
    return index < 0 ? SECTION_ORDER.length : index;
  };
  const ids = [...existing.keys()].sort((a, b) => rank(a) - rank(b));
  const body = ids.map((id) => `<!-- bench:${id} -->\n${existing.get(id) ?? ''}<!-- /bench:${id} -->\n`);
  writeFileSync(BENCHMARKS_DOC_PATH, `${INTRO}\n${body.join('\n')}`);
}

/** What every part is given: the machine and the command of this run. */
export interface RunContext {
  machine: Machine;
  command: string;
}

/** How a ratio compares to a minimum and a goal. */
export function verdictOf(value: number, minimum: number, goal: number): string {
  if (value >= goal) return 'met, goal met';
  if (value >= minimum) return 'met, goal not met';
  return '**not met**';
}
