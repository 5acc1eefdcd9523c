import { runAdmin } from './admin.js';
import { EXTRACT_INCREMENTAL_JOURNALS_DEFAULT, runExtracts } from './extracts.js';
import { runFlows } from './flows.js';
import { runIngestion } from './ingestion.js';
import { runIngestionUnderProcessing } from './ingestion-under-processing.js';
import { benchCommand, currentMachine, describeMachine } from './machine.js';
import { runProcessing, runProcessingLimit } from './processing.js';
import { runProcessingSpeed } from './processing-speed.js';
import { READS_JOURNALS_DEFAULT, runReads } from './reads.js';
import { BENCHMARKS_DOC_PATH, type RunContext, type Section, updateBenchmarksDoc } from './report.js';
import { REPROCESS_EVENTS_DEFAULT, runReprocess } from './reprocess.js';
import { runReverse } from './reverse.js';
import { runRollback } from './rollback.js';
import type { Dialect } from './service.js';
import { runSoak, SOAK_MINUTES_DEFAULT } from './soak.js';
import { runToken } from './token.js';
import { runValidator } from './validator.js';
import { runWebhooks } from './webhooks.js';

/**
 * `npm run bench [-- part...] [--dialect sqlite|postgres|both] [--soak-minutes N] [--reads-journals N]`: builds the
 * service, runs the named parts (all but the soak by default) against `MALLOC_ARENA_MAX=2 node --no-node-snapshot --max-semi-space-size=4 dist/main.js`,
 * prints every figure with its machine and command, and updates docs/benchmarks.md with the
 * sections measured.
 */

/** What a run was asked for beyond its parts and dialects. */
interface Options {
  soakMinutes: number;
  /** The store sizes the reads part measures, in journals. */
  readsJournals: number[];
  /** The failed events the reprocess part reprocesses. */
  reprocessEvents: number;
  /** The store size the extracts part reads its incremental answers at, in journals. */
  extractsJournals: number;
}

const PARTS = {
  validator: (context: RunContext) => runValidator(context),
  token: runToken,
  ingestion: runIngestion,
  processing: runProcessing,
  'processing-limit': runProcessingLimit,
  'ingestion-under-processing': runIngestionUnderProcessing,
  'processing-speed': runProcessingSpeed,
  flows: runFlows,
  admin: runAdmin,
  reads: (context, dialects, options) => runReads(context, dialects, options.readsJournals),
  soak: (context, dialects, options) => runSoak(context, dialects, options.soakMinutes),
  reprocess: (context, dialects, options) => runReprocess(context, dialects, options.reprocessEvents),
  reverse: (context, dialects) => runReverse(context, dialects),
  rollback: (context, dialects) => runRollback(context, dialects),
  extracts: (context, dialects, options) => runExtracts(context, dialects, options.extractsJournals),
  webhooks: (context, dialects) => runWebhooks(context, dialects),
} satisfies Record<
  string,
  (context: RunContext, dialects: readonly Dialect[], options: Options) => Promise<Section[]>
>;
type Part = keyof typeof PARTS;
/** The soak takes ten minutes per dialect, so it runs only when named. */
const DEFAULT_PARTS: readonly Part[] = (Object.keys(PARTS) as Part[]).filter((part) => part !== 'soak');
/**
 * Longest soak `--soak-minutes` accepts: processing catches up after the load for several times
 * as long as the load, and the benchmark's own access token, which checks the stored counts after
 * that wait, lives a day (`bench/service.ts`).
 */
const SOAK_MINUTES_MAX = 30;
/** Largest store `--reads-journals` accepts: the curve goes to ten million journals. */
const READS_JOURNALS_MAX = 10_000_000;

const DIALECTS: Record<string, readonly Dialect[]> = {
  sqlite: ['sqlite'],
  postgres: ['postgres'],
  both: ['sqlite', 'postgres'],
};

/** An error with the chain of its causes (a failed fetch says why only in its cause). */
function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const text = error.stack ?? error.message;
  return error.cause === undefined ? text : `${text}\ncaused by: ${describeFailure(error.cause)}`;
}

const USAGE = `usage: npm run bench -- [${Object.keys(PARTS).join('|')}]... [--dialect sqlite|postgres|both] [--soak-minutes N] [--reads-journals N] [--reprocess-events N] [--extracts-journals N]`;

/** Largest `--reprocess-events`: a run queues at most 200,000 records. */
const REPROCESS_EVENTS_MAX = 200_000;

function isPart(name: string): name is Part {
  return Object.hasOwn(PARTS, name);
}

/** The value of `--name value` or `--name=value` at `args[i]`, and the index of the last argument read. */
function optionValue(
  args: readonly string[],
  i: number,
  name: string,
): { value: string | undefined; last: number } {
  const arg = args[i] ?? '';
  return arg === name ? { value: args[i + 1], last: i + 1 } : { value: arg.slice(name.length + 1), last: i };
}

function parseArgs(args: readonly string[]): {
  parts: Part[];
  dialects: readonly Dialect[];
  options: Options;
} {
  const parts: Part[] = [];
  let dialects = DIALECTS.both;
  const options: Options = {
    soakMinutes: SOAK_MINUTES_DEFAULT,
    readsJournals: [...READS_JOURNALS_DEFAULT],
    reprocessEvents: REPROCESS_EVENTS_DEFAULT,
    extractsJournals: EXTRACT_INCREMENTAL_JOURNALS_DEFAULT,
  };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (arg === '--soak-minutes' || arg.startsWith('--soak-minutes=')) {
      const { value, last } = optionValue(args, i, '--soak-minutes');
      i = last;
      const minutes = Number(value);
      if (!Number.isInteger(minutes) || minutes < 1 || minutes > SOAK_MINUTES_MAX) {
        throw new Error(`--soak-minutes takes a whole number from 1 to ${SOAK_MINUTES_MAX}\n${USAGE}`);
      }
      options.soakMinutes = minutes;
    } else if (arg === '--reads-journals' || arg.startsWith('--reads-journals=')) {
      const { value, last } = optionValue(args, i, '--reads-journals');
      i = last;
      const journals = Number(value);
      if (!Number.isInteger(journals) || journals < 1 || journals > READS_JOURNALS_MAX) {
        throw new Error(`--reads-journals takes a whole number from 1 to ${READS_JOURNALS_MAX}\n${USAGE}`);
      }
      if (!options.readsJournals.includes(journals)) {
        options.readsJournals = [...options.readsJournals, journals].sort((a, b) => a - b);
      }
    } else if (arg === '--extracts-journals' || arg.startsWith('--extracts-journals=')) {
      const { value, last } = optionValue(args, i, '--extracts-journals');
      i = last;
      const journals = Number(value);
      if (!Number.isInteger(journals) || journals < 1 || journals > READS_JOURNALS_MAX) {
        throw new Error(`--extracts-journals takes a whole number from 1 to ${READS_JOURNALS_MAX}\n${USAGE}`);
      }
      options.extractsJournals = journals;
    } else if (arg === '--reprocess-events' || arg.startsWith('--reprocess-events=')) {
      const { value, last } = optionValue(args, i, '--reprocess-events');
      i = last;
      const events = Number(value);
      if (!Number.isInteger(events) || events < 1 || events > REPROCESS_EVENTS_MAX) {
        throw new Error(
          `--reprocess-events takes a whole number from 1 to ${REPROCESS_EVENTS_MAX}\n${USAGE}`,
        );
      }
      options.reprocessEvents = events;
    } else if (arg === '--dialect' || arg.startsWith('--dialect=')) {
      const { value, last } = optionValue(args, i, '--dialect');
      i = last;
      dialects = value === undefined ? undefined : DIALECTS[value];
      if (dialects === undefined) throw new Error(`unknown dialect ${value ?? '(none)'}\n${USAGE}`);
    } else if (isPart(arg)) {
      if (!parts.includes(arg)) parts.push(arg);
    } else {
      throw new Error(`unknown argument ${arg}\n${USAGE}`);
    }
  }
  return { parts: parts.length > 0 ? parts : [...DEFAULT_PARTS], dialects: dialects ?? [], options };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const { parts, dialects, options } = parseArgs(args);
  const context: RunContext = { machine: currentMachine(), command: benchCommand(args) };
  console.log(`machine: ${describeMachine(context.machine)}`);
  console.log(`command: ${context.command}`);
  console.log(`parts: ${parts.join(', ')}; dialects: ${dialects.join(', ')}\n`);
  let failed = false;
  for (const part of parts) {
    const startMs = Date.now();
    try {
      const sections = await PARTS[part](context, dialects, options);
      updateBenchmarksDoc(sections);
      console.log(
        `${part}: done in ${Math.round((Date.now() - startMs) / 1000)} s; ${BENCHMARKS_DOC_PATH} updated`,
      );
    } catch (error) {
      failed = true;
      console.error(`${part}: failed: ${describeFailure(error)}`);
    }
  }
  if (failed) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 2;
});
