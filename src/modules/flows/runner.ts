/**
 * Runs flows over claimed chunks (docs/reference.md, Flows; docs/domain/accounting.md, Flows).
 * For the records of one chunk: each Script step once for the whole chunk in its isolate
 * (`sandbox.ts`), then per record the published values are checked against the step's
 * `outputDefinition`, each AccountingEngine step builds its business event from its mapping,
 * the event is checked against `businessEventDefinition`, and the accounting engine turns it into
 * journals, which the processor's transaction stores and posts. All or nothing per record: the
 * first error of any step is the processing error of the input record and keeps every journal of
 * that record out.
 */
import { processBusinessEvent } from '../accounting/engine.js';
import { giveUpWhenStopping, type ProcessingContext } from '../accounting/journal-draft.js';
import type { PreparedAccountingRevision } from '../accounting/prepare.js';
import type { ProcessingErrorCode } from '../accounting/processing-error.js';
import type { ChunkOutcome, ClaimedChunk } from '../accounting/store.js';
import { BUSINESS_EVENT_ENTITY_NAME, LEDGER_NAMESPACE } from '../configuration/model.js';
import { entityKey, type PreparedEntities } from '../entities/prepared-entity.js';
import type { EnginePlan, FlowPlan, PreparedFlows, ScriptPlan } from './plan.js';
import { type ScriptLimits, ScriptSandbox } from './sandbox.js';
import type { ScriptRecordResult } from './script-results.js';

/** What the runner reads of a prepared configuration revision. */
export type FlowRevision = PreparedFlows & PreparedEntities & PreparedAccountingRevision;

type RecordOutcome =
  | { ok: true; journals: ChunkOutcome['journals'] }
  | { ok: false; code: ProcessingErrorCode; message: string };

/**
 * Holds the isolates of the current revision's Script steps (made on first use, reused for every
 * chunk, dropped when a newer revision runs) and processes the chunks of entities that flows read.
 */
export class FlowRunner {
  readonly #limits: ScriptLimits;
  #revision = -1;
  #sandboxes = new Map<string, ScriptSandbox>();

  constructor(limits: ScriptLimits) {
    this.#limits = limits;
  }

  /** Whether a flow of `prepared` reads the entity of `chunk`. */
  reads(prepared: PreparedFlows, chunk: Pick<ClaimedChunk, 'namespace' | 'entity'>): boolean {
    return prepared.flows.has(entityKey(chunk.namespace, chunk.entity));
  }

  /**
   * Runs the flow that reads the chunk's entity over its records and returns the journals and
   * processing errors, as the processor's transaction writes them. Codes: `script-error`,
   * `script-timeout`, `script-memory`, `script-output`, `invalid-business-event`, then those of
   * the accounting engine. Rejects when an isolate cannot be made at all, or when `close` (or a
   * newer revision) disposed it meanwhile: then no record was judged and the chunk waits.
   */
  async process(prepared: FlowRevision, chunk: ClaimedChunk, ctx: ProcessingContext): Promise<ChunkOutcome> {
    const plan = prepared.flows.get(entityKey(chunk.namespace, chunk.entity));
    const outcome: ChunkOutcome = { journals: [], errors: [] };
    if (plan === undefined) return outcome;
    const inputs = chunk.records.map((r) => r.data);
    const json = JSON.stringify(inputs);
    const scriptResults: ScriptRecordResult[][] = [];
    for (const script of plan.scripts) {
      scriptResults.push(await this.#sandbox(prepared.revision, script).run(json, inputs.length));
    }
    chunk.records.forEach((record, i) => {
      giveUpWhenStopping(ctx);
      const result = processRecord(prepared, plan, record.data, i, scriptResults, ctx, record.recordId);
      if (result.ok) outcome.journals.push(...result.journals);
      else
        outcome.errors.push({
          recordId: record.recordId,
          code: result.code,
          message: result.message,
          record: record.data,
        });
    });
    return outcome;
  }

  /** Disposes every isolate. */
  close(): void {
    for (const sandbox of this.#sandboxes.values()) sandbox.dispose();
    this.#sandboxes = new Map();
  }

  #sandbox(revision: number, script: ScriptPlan): ScriptSandbox {
    if (revision !== this.#revision) {
      // Another configuration runs now; the isolates of the old one are of no further use.
      this.close();
      this.#revision = revision;
    }
    let sandbox = this.#sandboxes.get(script.key);
    if (sandbox === undefined) {
      sandbox = new ScriptSandbox(script.source, script.stepName, this.#limits);
      this.#sandboxes.set(script.key, sandbox);
    }
    return sandbox;
  }
}

/** One input record through the flow's steps, all or nothing. */
function processRecord(
  prepared: FlowRevision,
  plan: FlowPlan,
  record: Record<string, unknown>,
  index: number,
  scriptResults: readonly ScriptRecordResult[][],
  ctx: ProcessingContext,
  recordId: number,
): RecordOutcome {
  const published: Record<string, unknown>[] = [];
  for (const [s, script] of plan.scripts.entries()) {
    const result = scriptResults[s]?.[index];
    if (result === undefined || !result.ok) {
      return result === undefined
        ? {
            ok: false,
            code: 'script-error',
            message: `script of step "${script.stepName}" returned no result`,
          }
        : result;
    }
    const checked = checkedOutputs(script, result);
    if (!checked.ok) return checked;
    published.push(checked.values);
  }
  const journals: ChunkOutcome['journals'] = [];
  const events = prepared.entities.get(entityKey(LEDGER_NAMESPACE, BUSINESS_EVENT_ENTITY_NAME));
  for (const engine of plan.engines) {
    const built = buildEvent(engine, record, published);
    if (events === undefined) {
      return {
        ok: false,
        code: 'invalid-business-event',
        message: `step "${engine.stepName}" builds a business event, but businessEventDefinition is inactive or has no attributes`,
      };
    }
    const checked = events.validator.validate(built);
    if (!checked.ok) {
      const first = checked.errors[0];
      const more = checked.errors.length > 1 ? ` (and ${checked.errors.length - 1} more)` : '';
      return {
        ok: false,
        code: 'invalid-business-event',
        message: `the business event built by step "${engine.stepName}" is not valid: ${first?.message ?? ''}${more}`,
      };
    }
    const result = processBusinessEvent(prepared.accounting, checked.value, ctx);
    if (!result.ok) {
      return {
        ok: false,
        code: result.error.code,
        message: `step "${engine.stepName}": ${result.error.message}`,
      };
    }
    for (const draft of result.journals) journals.push({ recordId, draft });
  }
  return { ok: true, journals };
}

/** The published values of one record, checked and converted, or a `script-output` error. */
function checkedOutputs(
  script: ScriptPlan,
  result: Extract<ScriptRecordResult, { ok: true }>,
): { ok: true; values: Record<string, unknown> } | { ok: false; code: 'script-output'; message: string } {
  const fail = (why: string) => ({
    ok: false as const,
    code: 'script-output' as const,
    message: `script of step "${script.stepName}" ${why}`,
  });
  const [unpublishable] = result.unpublishable;
  if (unpublishable !== undefined) {
    return fail(
      `published "${unpublishable[0]}" as ${unpublishable[1]}: a value is a string, a finite number, a boolean or null`,
    );
  }
  const values: Record<string, unknown> = {};
  for (const [name, value] of result.published) {
    if (name === '__proto__') return fail('published "__proto__", which is no output name');
    values[name] = value;
  }
  const checked = script.outputs.validate(values);
  if (!checked.ok) {
    const first = checked.errors[0];
    const message =
      first?.code === 'unknown-field'
        ? `published "${first.field}", which is not in its outputDefinition`
        : `published a value its outputDefinition does not allow: ${first?.message ?? ''}`;
    return fail(message);
  }
  return { ok: true, values: checked.value };
}

/** The business event of one AccountingEngine step: each mapping copies one value. */
function buildEvent(
  engine: EnginePlan,
  record: Record<string, unknown>,
  published: readonly Record<string, unknown>[],
): Record<string, unknown> {
  const scriptValues: Record<string, unknown> = {};
  for (const s of engine.upstreamScripts) Object.assign(scriptValues, published[s]);
  const event: Record<string, unknown> = {};
  for (const m of engine.mapping) {
    const value = valueAt(m.fromScript ? scriptValues : record, m.sourcePath);
    if (value !== undefined) setAt(event, m.targetPath, value);
  }
  return event;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function setAt(root: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let current = root;
  path.forEach((segment, i) => {
    if (i === path.length - 1) {
      Object.defineProperty(current, segment, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return;
    }
    const next = Object.hasOwn(current, segment) ? current[segment] : undefined;
    if (typeof next === 'object' && next !== null && !Array.isArray(next)) {
      current = next as Record<string, unknown>;
    } else {
      const created: Record<string, unknown> = {};
      Object.defineProperty(current, segment, {
        value: created,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      current = created;
    }
  });
}
