import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { BUSINESS_EVENT_ENTITY_NAME, LEDGER_NAMESPACE } from '../src/modules/configuration/model.js';
import { FLOW_SCRIPT_TIMEOUT_MS_DEFAULT } from '../src/modules/flows/sandbox.js';
import { benchConfiguration, type ChunkBody, chunkOf } from './data.js';
import {
  DIALECT_TITLE,
  formatNumber,
  type RunContext,
  type Section,
  sectionHead,
  stampNow,
  table,
  verdictOf,
} from './report.js';
import {
  awaitProcessed,
  type BenchService,
  closeSession,
  type Dialect,
  expectStatus,
  openSession,
  postChunks,
  withService,
} from './service.js';

/** Records per kind: business events first, then as many loan records through the flow. */
const RECORDS = 40_000;
const CHUNKS = 20;
const CLIENTS = 4;
/** Records of the chunk that carries one hostile record. */
const HOSTILE_CHUNK_RECORDS = 2_000;
/** Clean and hostile runs of that chunk, alternately. */
const HOSTILE_REPETITIONS = 5;
const POLL_INTERVAL_MS = 50;
const PROCESSING_DEADLINE_MS = 300_000;
/** The flow processes at least half as many records per second as the engine processes events. */
const FLOW_RATIO_MIN = 0.5;
const FLOW_RATIO_GOAL = 1.0;
const MS_PER_SECOND = 1000;
const LOAN_NAMESPACE = 'loans';
const LOAN_ENTITY = 'loanTransaction';
/** The same event types, in turn, for both kinds, so each record makes as many journals. */
const KINDS = [
  { transactionType: 'DISBURSE', eventType: 'LOAN_DISBURSEMENT' },
  { transactionType: 'ACCRUE', eventType: 'INTEREST_ACCRUAL' },
  { transactionType: 'FEE', eventType: 'FEE_CHARGED' },
] as const;

/**
 * A two-output script: the event type from the transaction type, and the amount with its sign
 * checked. `LOOP` never ends: the hostile record.
 */
const SCRIPT = [
  "const eventTypes = { DISBURSE: 'LOAN_DISBURSEMENT', ACCRUE: 'INTEREST_ACCRUAL', FEE: 'FEE_CHARGED' };",
  "if (input.transactionType === 'LOOP') { for (;;) {} }",
  "if (!Object.hasOwn(eventTypes, input.transactionType)) throw new Error('unknown transactionType');",
  "publish('eventType', eventTypes[input.transactionType]);",
  "publish('amount', input.amount.startsWith('-') ? input.amount.slice(1) : input.amount);",
].join('\n');

interface FlowStep {
  type: string;
  script?: string;
  outputDefinition?: unknown[];
  mapping?: { source: { group: string; path: string[] }; target: { path: string[] } }[];
}

/** The bench configuration with the fixture's flow given the two-output script. */
function flowConfiguration(): ReturnType<typeof benchConfiguration> {
  const document = benchConfiguration();
  const flows = document.configuration.flows as { graph: { nodes: Record<string, { step: FlowStep }> } }[];
  for (const flow of flows) {
    for (const { step } of Object.values(flow.graph.nodes)) {
      if (step.type === 'Script') {
        step.script = SCRIPT;
        step.outputDefinition = [
          { name: 'eventType', type: { type: 'Primitive', primitive: 'TEXT' } },
          { name: 'amount', type: { type: 'Primitive', primitive: 'DECIMAL' } },
        ];
      }
      if (step.type === 'AccountingEngine') {
        for (const m of step.mapping ?? []) {
          if (m.target.path[0] === 'amount') m.source = { group: 'SCRIPT', path: ['amount'] };
        }
      }
    }
  }
  return document;
}

interface Fixture {
  nodes: { fields: Record<string, string> }[];
}

function amountOf(index: number): string {
  return `${1 + (index % 99_999)}.${String(index % 100).padStart(2, '0')}`;
}

function chunks(
  recordOf: (index: number, today: string, node: Record<string, string>) => unknown,
): ChunkBody[] {
  const nodes = (benchConfiguration().configuration as unknown as Fixture).nodes.map((n) => n.fields);
  const today = new Date().toISOString().slice(0, 10);
  const perChunk = RECORDS / CHUNKS;
  return Array.from({ length: CHUNKS }, (_, chunk) =>
    chunkOf(
      `chunk-${chunk}`,
      Array.from({ length: perChunk }, (_, offset) => {
        const index = chunk * perChunk + offset;
        return recordOf(index, today, nodes[index % nodes.length] ?? {});
      }),
    ),
  );
}

function loanRecord(index: number, today: string, node: Record<string, string>, transactionType?: string) {
  return {
    transactionId: randomUUID(),
    transactionType: transactionType ?? KINDS[index % KINDS.length]?.transactionType,
    valueDate: today,
    amount: amountOf(index),
    currency: 'EUR',
    ...node,
    productCode: 'MORTGAGE',
    installmentNumber: index,
  };
}

/** Sends the chunks to a new session, closes it and waits until it is processed. */
async function timedSession(
  service: BenchService,
  namespace: string,
  entity: string,
  bodies: readonly ChunkBody[],
): Promise<{ ms: number; status: string }> {
  const ingestionId = await openSession(service, namespace, entity);
  const timing = await postChunks(service, ingestionId, bodies, CLIENTS);
  await closeSession(service, ingestionId);
  const processed = await awaitProcessed(service, ingestionId, timing.startMs, {
    pollMs: POLL_INTERVAL_MS,
    deadlineMs: PROCESSING_DEADLINE_MS,
  });
  if (processed === undefined) throw new Error(`${entity}: not processed in time`);
  return { ms: processed.atMs - timing.startMs, status: processed.status };
}

interface FlowRun {
  storage: string;
  events: { ms: number; status: string };
  flow: { ms: number; status: string };
  clean: { ms: number; status: string };
  hostile: { ms: number; status: string };
  /** Health requests answered while the hostile chunk was processed: count and slowest. */
  probes: { count: number; slowestMs: number };
}

async function measure(service: BenchService): Promise<FlowRun> {
  expectStatus(
    await service.request('PUT', '/api/v1/configuration/bulk', flowConfiguration()),
    200,
    'PUT /api/v1/configuration/bulk',
  );
  const events = await timedSession(
    service,
    LEDGER_NAMESPACE,
    BUSINESS_EVENT_ENTITY_NAME,
    chunks((index, today, node) => ({
      eventType: KINDS[index % KINDS.length]?.eventType,
      effectiveDate: today,
      amount: amountOf(index),
      currency: 'EUR',
      ...node,
      productCode: 'MORTGAGE',
    })),
  );
  const flow = await timedSession(service, LOAN_NAMESPACE, LOAN_ENTITY, chunks(loanRecord));
  // One chunk alone, then the same chunk with one record whose script never ends.
  const today = new Date().toISOString().slice(0, 10);
  const single = (hostile: boolean) => [
    chunkOf(
      'single',
      Array.from({ length: HOSTILE_CHUNK_RECORDS }, (_, i) =>
        loanRecord(
          i,
          today,
          { legalEntity: 'LF_NL', branch: 'AMS' },
          hostile && i === 1000 ? 'LOOP' : undefined,
        ),
      ),
    ),
  ];
  // Alternately clean and hostile, the median of each: one pair alone is within the noise.
  const cleanRuns: { ms: number; status: string }[] = [];
  const hostileRuns: { ms: number; status: string }[] = [];
  let probing = true;
  const probes = { count: 0, slowestMs: 0 };
  const prober = (async () => {
    while (probing) {
      const startMs = performance.now();
      await service.request('GET', '/api/v1/ingestions?limit=1');
      probes.count += 1;
      probes.slowestMs = Math.max(probes.slowestMs, performance.now() - startMs);
      await sleep(10);
    }
  })();
  for (let i = 0; i < HOSTILE_REPETITIONS; i += 1) {
    cleanRuns.push(await timedSession(service, LOAN_NAMESPACE, LOAN_ENTITY, single(false)));
    hostileRuns.push(await timedSession(service, LOAN_NAMESPACE, LOAN_ENTITY, single(true)));
  }
  probing = false;
  await prober;
  return {
    storage: service.storage,
    events,
    flow,
    clean: median(cleanRuns),
    hostile: median(hostileRuns),
    probes,
  };
}

function median(runs: { ms: number; status: string }[]): { ms: number; status: string } {
  const sorted = [...runs].sort((a, b) => a.ms - b.ms);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('no runs');
  return middle;
}

function rows(run: FlowRun): string[][] {
  const eventRate = (RECORDS / run.events.ms) * MS_PER_SECOND;
  const flowRate = (RECORDS / run.flow.ms) * MS_PER_SECOND;
  const ratio = flowRate / eventRate;
  const extraMs = run.hostile.ms - run.clean.ms;
  return [
    [
      `business events: ${formatNumber(RECORDS)} in ${CHUNKS} chunks, first chunk sent until \`${run.events.status}\``,
      `${formatNumber(eventRate)} records/s (${formatNumber(run.events.ms)} ms)`,
      '',
      '',
    ],
    [
      `loan records through the two-output script flow: the same, until \`${run.flow.status}\``,
      `${formatNumber(flowRate)} records/s (${formatNumber(run.flow.ms)} ms)`,
      '',
      '',
    ],
    [
      'flow / business events (records/s)',
      formatNumber(ratio, 2),
      `≥ ${formatNumber(FLOW_RATIO_MIN, 1)}`,
      verdictOf(ratio, FLOW_RATIO_MIN, FLOW_RATIO_GOAL),
    ],
    [
      `one chunk of ${formatNumber(HOSTILE_CHUNK_RECORDS)} loan records, sent until processed (median of ${HOSTILE_REPETITIONS}): clean / with one record that loops forever`,
      `${formatNumber(run.clean.ms)} ms / ${formatNumber(run.hostile.ms)} ms (\`${run.hostile.status}\`)`,
      '',
      '',
    ],
    [
      'what the looping record cost its chunk',
      `${formatNumber(extraMs)} ms`,
      `about 2 × ${FLOW_SCRIPT_TIMEOUT_MS_DEFAULT} ms (the time limit, in the batch and alone)`,
      extraMs <= 4 * FLOW_SCRIPT_TIMEOUT_MS_DEFAULT + 250 ? 'met' : '**not met**',
    ],
    [
      'requests answered during those chunks (GET /api/v1/ingestions, every 10 ms): count, slowest',
      `${formatNumber(run.probes.count)}, ${formatNumber(run.probes.slowestMs)} ms`,
      '',
      '',
    ],
  ];
}

/** Runs the flow benchmark on each dialect. */
export async function runFlows(context: RunContext, dialects: readonly Dialect[]): Promise<Section[]> {
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const run = await withService(dialect, measure);
    const markdown = [
      ...sectionHead({
        title: `Flows: records through a script flow against business events, ${DIALECT_TITLE[dialect]}`,
        machine: context.machine,
        storage: run.storage,
        command: context.command,
        stamp,
      }),
      ...table(['measure', 'result', 'target', 'verdict'], rows(run)),
      '',
      `Method. One freshly started service with the realistic fixture, whose flow on \`${LOAN_NAMESPACE}/${LOAN_ENTITY}\` is given a two-output script (the event type from the transaction type, and the amount). First ${formatNumber(RECORDS)} business events, then ${formatNumber(RECORDS)} loan records, each in ${CHUNKS} chunks from ${CLIENTS} clients to a session of its own, closed after the last 201 and polled every ${POLL_INTERVAL_MS} ms until processed; both kinds cycle through the same three event types, so each record makes as many journals (two, and two reversals for accruals). The flow's time includes its script, run once per chunk in the step's isolate, the mapping, the event check and the same engine. Then one chunk of ${formatNumber(HOSTILE_CHUNK_RECORDS)} loan records ${HOSTILE_REPETITIONS} times clean and ${HOSTILE_REPETITIONS} times with record 1,000 looping forever (default time limit, ${FLOW_SCRIPT_TIMEOUT_MS_DEFAULT} ms), alternately, while another client reads the session list every 10 ms; the slowest of those reads includes the engine's work on the chunk, which runs on the same thread.`,
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `flows-${dialect}`, markdown });
  }
  return sections;
}
