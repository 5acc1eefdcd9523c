import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareConfiguration } from '../../../src/composition/prepared-configuration.js';
import type { ClaimedChunk } from '../../../src/modules/accounting/store.js';
import type { Configuration } from '../../../src/modules/configuration/model.js';
import { FlowRunner } from '../../../src/modules/flows/runner.js';
import { realisticConfiguration } from '../../helpers/fixtures.js';
import { loanRecord } from '../../helpers/records.js';

/** The Script step of the realistic fixture's flow. */
const SCRIPT_STEP = '5d2e7c4a-8b1f-4e3a-a6c9-7f0e1d2b3c02';
const PUBLISH_EVENT_TYPE =
  "publish('eventType', { DISBURSE: 'LOAN_DISBURSEMENT', ACCRUE: 'INTEREST_ACCRUAL', FEE: 'FEE_CHARGED' }[input.transactionType]);";

/** The fixture prepared as configuration revision `revision`, with the flow's script replaced. */
function revisionWith(revision: number, script: string) {
  const document = realisticConfiguration();
  const [flow] = document.configuration.flows as {
    graph: { nodes: Record<string, { step: { script?: string } }> };
  }[];
  const step = flow?.graph.nodes[SCRIPT_STEP]?.step;
  if (step === undefined) throw new Error('the fixture has a Script step');
  step.script = script;
  return prepareConfiguration({
    revision,
    version: document.version,
    configuration: document.configuration as unknown as Configuration,
    updatedAt: null,
    updatedBy: null,
  });
}

function chunkOf(count: number): ClaimedChunk {
  return {
    ingestionId: randomUUID(),
    chunkSeq: 1,
    namespace: 'loans',
    entity: 'loanTransaction',
    records: Array.from({ length: count }, (_, i) => ({
      recordId: i + 1,
      index: i,
      data: loanRecord(i + 1),
    })),
    seenOriginJournalIds: new Set(),
    bookedOriginJournals: new Map(),
  };
}

const CONTEXT = { ingestionId: '', now: new Date('2026-01-15T12:00:00Z'), newId: randomUUID };

const runners: FlowRunner[] = [];
afterEach(() => {
  for (const runner of runners.splice(0)) runner.close();
});

describe('the flow runner', () => {
  it('a newer revision disposes the isolates of the older one: its chunk in flight rejects, no record is script-memory', async () => {
    const runner = new FlowRunner({ timeoutMs: 10_000, memoryMb: 32 });
    runners.push(runner);
    const older = runner.process(revisionWith(1, 'for (;;) {}'), chunkOf(2), CONTEXT);
    const newer = runner.process(revisionWith(2, PUBLISH_EVENT_TYPE), chunkOf(2), CONTEXT);
    await expect(older).rejects.toThrow(
      'the isolate of step "Classify event" was disposed before its records were run',
    );
    const outcome = await newer;
    expect(outcome.errors).toEqual([]);
    expect(outcome.journals.length).toBeGreaterThan(0);
  });

  it('gives every record of two chunks the same outputs, whatever a record did to the built-ins', async () => {
    const runner = new FlowRunner({ timeoutMs: 1_000, memoryMb: 32 });
    runners.push(runner);
    const prepared = revisionWith(
      1,
      `try { Object.prototype.n = (Object.prototype.n ?? 0) + 1; } catch {}\nif (Object.prototype.n !== undefined) throw new Error('state leaked');\n${PUBLISH_EVENT_TYPE}`,
    );
    for (const chunk of [chunkOf(3), chunkOf(2)]) {
      const outcome = await runner.process(prepared, chunk, { ...CONTEXT, ingestionId: chunk.ingestionId });
      expect(outcome.errors).toEqual([]);
      expect(new Set(outcome.journals.map((j) => j.recordId))).toEqual(
        new Set(chunk.records.map((r) => r.recordId)),
      );
    }
  });
});
