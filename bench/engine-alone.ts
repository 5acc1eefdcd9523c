import { performance } from 'node:perf_hooks';
import { validateConfiguration } from '../src/composition/configuration-checks.js';
import type { ProcessingContext } from '../src/modules/accounting/journal-draft.js';
import { prepareAccounting } from '../src/modules/accounting/prepare.js';
import { processChunk } from '../src/modules/accounting/processor.js';
import type { ClaimedChunk } from '../src/modules/accounting/store.js';
import { BUSINESS_EVENT_ENTITY_NAME, LEDGER_NAMESPACE } from '../src/modules/configuration/model.js';
import { benchConfiguration, businessEventChunks } from './data.js';

/**
 * The accounting engine alone, for profiles and instruction counts of one process:
 * `node --import tsx bench/engine-alone.ts [EVENTS]` runs `processChunk` once over EVENTS
 * (default 200,000) business events of the processing benchmark, already parsed, in chunks of
 * 2,000, and prints the wall-clock and CPU time. Ids come from a counter and the clock is read
 * once, so two runs do the same work. For instruction counts, run it compiled, so that no
 * transpiling is counted (`bench/out` is ignored by git):
 *
 *   npx tsc --noEmit false --outDir bench/out && mkdir -p bench/out/docs &&
 *   cp -r docs/examples bench/out/docs/ &&
 *   valgrind --tool=callgrind node bench/out/bench/engine-alone.js 30000
 *
 * and subtract a run of 10,000 events: what is left is 20,000 events of the engine with its code
 * compiled (docs/benchmarks.md).
 */

const EVENTS_DEFAULT = 200_000;
const EVENTS_PER_CHUNK = 2_000;
const MS_PER_SECOND = 1000;
const US_PER_MS = 1000;

const events = Number(process.argv[2] ?? EVENTS_DEFAULT);
if (!Number.isSafeInteger(events) || events < 0 || events % EVENTS_PER_CHUNK !== 0) {
  throw new Error(`usage: bench/engine-alone.ts [EVENTS, a multiple of ${EVENTS_PER_CHUNK}]`);
}
const validation = validateConfiguration(benchConfiguration());
if (!validation.ok) throw new Error(`bench configuration refused: ${JSON.stringify(validation.errors)}`);
const prepared = { revision: 1, accounting: prepareAccounting(validation.document.configuration) };
const chunks: ClaimedChunk[] = businessEventChunks(events, events / EVENTS_PER_CHUNK).map((body, index) => ({
  ingestionId: 'in_engine',
  chunkSeq: index + 1,
  namespace: LEDGER_NAMESPACE,
  entity: BUSINESS_EVENT_ENTITY_NAME,
  records: (JSON.parse(body.body.toString('utf8')) as { data: Record<string, unknown>[] }).data.map(
    (data, position) => ({ recordId: index * EVENTS_PER_CHUNK + position + 1, index: position, data }),
  ),
  seenOriginJournalIds: new Set(),
  bookedOriginJournals: new Map(),
}));
let id = 0;
const ctx: ProcessingContext = {
  ingestionId: 'in_engine',
  now: new Date(),
  newId: () => {
    id += 1;
    return `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`;
  },
};
let journals = 0;
const startCpu = process.cpuUsage();
const startMs = performance.now();
for (const chunk of chunks) {
  const outcome = processChunk(prepared, chunk, ctx);
  if (outcome.errors.length > 0) throw new Error(`processing errors: ${JSON.stringify(outcome.errors[0])}`);
  journals += outcome.journals.length;
}
const ms = performance.now() - startMs;
const cpu = process.cpuUsage(startCpu);
const cpuMs = (cpu.user + cpu.system) / US_PER_MS;
console.log(
  `${events} events, ${journals} journals in ${ms.toFixed(0)} ms (${cpuMs.toFixed(0)} ms of CPU): ` +
    `${Math.round((events / ms) * MS_PER_SECOND)} events/s`,
);
