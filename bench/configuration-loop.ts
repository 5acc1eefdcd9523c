import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { validateConfiguration } from '../src/composition/configuration-checks.js';
import { configurationReader } from '../src/composition/configuration-reader.js';
import { prepareConfiguration } from '../src/composition/prepared-configuration.js';
import { canonicalConfiguration, canonicalConfigurationText } from '../src/modules/configuration/document.js';
import type { Configuration } from '../src/modules/configuration/model.js';
import { compileRecordValidator } from '../src/modules/entities/record-validator.js';
import { largeConfiguration } from '../test/helpers/large-configuration.js';

/**
 * How long each step of a configuration upload and download holds the event loop, for a document
 * of about 1 MB and about 8 MB (the realistic example with entities and flows copied), before and
 * after moving the work off it (docs/adr/0017-configuration-off-the-event-loop.md, whose figures
 * come from here): `node --import tsx bench/configuration-loop.ts`. Not part of `npm run bench`.
 */

/** Milliseconds `run` takes on this thread. */
function timed(run: () => unknown): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

/** The longest time the event loop was held while `run` was under way, in milliseconds. */
async function loopHeldMs(run: () => Promise<unknown>): Promise<number> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  await run();
  delay.disable();
  return delay.max / 1e6;
}

const row = (label: string, ms: number) =>
  console.log(`  ${label.padEnd(58)} ${ms.toFixed(1).padStart(8)} ms`);

const reader = configurationReader();
// Starts the worker thread, so its start is not counted below.
await reader.validate(Buffer.from(JSON.stringify(largeConfiguration(30))));
for (const copies of [350, 2800]) {
  const text = JSON.stringify(largeConfiguration(copies));
  const body = JSON.parse(text) as unknown;
  const validation = validateConfiguration(body);
  if (!validation.ok) throw new Error(JSON.stringify(validation.errors.slice(0, 3)));
  const stored = { ...validation.document, revision: 1, updatedAt: null, updatedBy: '' };
  const configuration = stored.configuration as Configuration;
  console.log(`${(text.length / 1e6).toFixed(1)} MB (${copies} more entities and ${copies / 2} flows)`);
  console.log(' before: every step in one go on the event loop');
  row(
    'upload: JSON.parse',
    timed(() => JSON.parse(text)),
  );
  row(
    'upload: structure and semantic checks',
    timed(() => validateConfiguration(body)),
  );
  const prepared = prepareConfiguration(stored);
  row(
    'prepare: every entity validator compiled',
    timed(() => {
      for (const entity of prepared.entities.values()) compileRecordValidator(entity.definition);
    }),
  );
  row(
    'download: canonical order and JSON.stringify',
    timed(() => JSON.stringify(canonicalConfiguration(configuration))),
  );
  console.log(' after');
  row(
    'upload read on the worker: longest hold of the loop',
    await loopHeldMs(() => reader.validate(Buffer.from(text))),
  );
  row(
    'prepare: validators compiled on first use (flows and accounting)',
    timed(() => prepareConfiguration(stored)),
  );
  row(
    'download in 64 KiB turns: longest turn',
    Math.max(
      ...(await (async () => {
        const turns: number[] = [];
        let started = performance.now();
        let batch = '';
        for (const piece of canonicalConfigurationText(configuration)) {
          batch += piece;
          if (batch.length < 64 * 1024) continue;
          turns.push(performance.now() - started);
          batch = '';
          await nextTurn();
          started = performance.now();
        }
        return turns;
      })()),
    ),
  );
  const storedText = JSON.stringify(configuration);
  console.log(' still in one go, in the store (not changed here)');
  row(
    'upload: JSON.stringify of the document',
    timed(() => JSON.stringify(configuration)),
  );
  row(
    'first use of a new revision: JSON.parse of the document',
    timed(() => JSON.parse(storedText)),
  );
}
await reader.close();
