import { runAdmin } from './admin.js';
import { runFlows } from './flows.js';
import { runIngestion } from './ingestion.js';
import { benchCommand, currentMachine, describeMachine } from './machine.js';
import { runProcessing } from './processing.js';
import { BENCHMARKS_DOC_PATH, type RunContext, type Section, updateBenchmarksDoc } from './report.js';
import type { Dialect } from './service.js';
import { runToken } from './token.js';
import { runValidator } from './validator.js';

/**
 * `npm run bench [-- part...] [--dialect sqlite|postgres|both]`: builds the service, runs the
 * named parts (all by default) against `node --no-node-snapshot dist/main.js`, prints every figure with its machine
 * and command, and updates docs/benchmarks.md with the sections measured.
 */

const PARTS = {
  validator: (context: RunContext) => runValidator(context),
  token: runToken,
  ingestion: runIngestion,
  processing: runProcessing,
  flows: runFlows,
  admin: runAdmin,
} satisfies Record<string, (context: RunContext, dialects: readonly Dialect[]) => Promise<Section[]>>;
type Part = keyof typeof PARTS;

const DIALECTS: Record<string, readonly Dialect[]> = {
  sqlite: ['sqlite'],
  postgres: ['postgres'],
  both: ['sqlite', 'postgres'],
};

const USAGE = `usage: npm run bench -- [${Object.keys(PARTS).join('|')}]... [--dialect sqlite|postgres|both]`;

function isPart(name: string): name is Part {
  return Object.hasOwn(PARTS, name);
}

function parseArgs(args: readonly string[]): { parts: Part[]; dialects: readonly Dialect[] } {
  const parts: Part[] = [];
  let dialects = DIALECTS.both;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (arg === '--dialect' || arg.startsWith('--dialect=')) {
      const value = arg === '--dialect' ? args[++i] : arg.slice('--dialect='.length);
      dialects = value === undefined ? undefined : DIALECTS[value];
      if (dialects === undefined) throw new Error(`unknown dialect ${value ?? '(none)'}\n${USAGE}`);
    } else if (isPart(arg)) {
      if (!parts.includes(arg)) parts.push(arg);
    } else {
      throw new Error(`unknown argument ${arg}\n${USAGE}`);
    }
  }
  return { parts: parts.length > 0 ? parts : (Object.keys(PARTS) as Part[]), dialects: dialects ?? [] };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const { parts, dialects } = parseArgs(args);
  const context: RunContext = { machine: currentMachine(), command: benchCommand(args) };
  console.log(`machine: ${describeMachine(context.machine)}`);
  console.log(`command: ${context.command}`);
  console.log(`parts: ${parts.join(', ')}; dialects: ${dialects.join(', ')}\n`);
  let failed = false;
  for (const part of parts) {
    const startMs = Date.now();
    try {
      const sections = await PARTS[part](context, dialects);
      updateBenchmarksDoc(sections);
      console.log(
        `${part}: done in ${Math.round((Date.now() - startMs) / 1000)} s; ${BENCHMARKS_DOC_PATH} updated`,
      );
    } catch (error) {
      failed = true;
      console.error(
        `${part}: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
  }
  if (failed) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 2;
});
