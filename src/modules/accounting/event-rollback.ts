/**
 * Rollback of business events (docs/domain/accounting.md, Rollback of business events;
 * docs/adr/0021-business-event-rollback.md): a `ledger/businessEventRollback` record repeats a
 * business event processed before, and the journals its twin produced are withdrawn by reversal
 * journals. This module decides, purely: the fingerprint of each rollback record, which of the
 * journals the store reads back form the twin, and the reversal drafts with their dates. The store
 * looks the twin up and writes the reversals inside the claim's transaction
 * (`storage/accounting/rollback-write.ts`), so the lookup and the withdrawal see the same state.
 */

import { businessDateRule } from './business-date.js';
import { formatIsoDate, parseIsoDate } from './dates.js';
import { eventFingerprints, type FingerprintAttribute } from './event-fingerprint.js';
import { openWindowOf } from './journal-assembly.js';
import type { JournalDraft, ProcessingContext } from './journal-draft.js';
import { CALENDAR_ONLY, firstOpenDayAfter, isInClosedPeriod } from './periods.js';
import { nodeKeyOf, type PreparedAccounting, type PreparedAccountingRevision } from './prepare.js';
import { type ProcessingError, processingError } from './processing-error.js';
import type {
  ChunkOutcome,
  ClaimedChunk,
  LegacyEventForm,
  RollbackRequest,
  RollbackReversal,
  TwinJournal,
} from './store.js';

/** Attribute values a rollback error quotes to name its event, besides the event type. */
const NAMED_ATTRIBUTES_MAX = 6;
/** Withdrawn journals an `already-rolled-back` message names. */
export const WITHDRAWN_NAMED_MAX = 5;

/**
 * The rollback requests of a claimed chunk of `ledger/businessEventRollback` records: each
 * record's fingerprint, with what the store needs to settle it in its transaction. Nothing fails
 * here; every error of a rollback depends on the journals stored, so the write path finds it.
 */
export function processRollbackChunk(
  prepared: PreparedAccountingRevision,
  chunk: ClaimedChunk,
  ctx: ProcessingContext,
): ChunkOutcome {
  const accounting = prepared.accounting;
  const legacyPlans = (chunk.legacyEventForms ?? []).map(legacyPlanOf);
  return {
    journals: [],
    errors: [],
    rollbacks: chunk.records.map((record) =>
      rollbackRequest(accounting, legacyPlans, record.recordId, record.data, ctx),
    ),
  };
}

/** A stored first-form attribute plan as the fingerprint reads it. */
function legacyPlanOf(form: LegacyEventForm): FingerprintAttribute[] {
  return form.map(({ name, decimal }) => ({ name, decimal, key: JSON.stringify(name) }));
}

function rollbackRequest(
  prepared: PreparedAccounting,
  legacyPlans: readonly (readonly FingerprintAttribute[])[],
  recordId: number,
  event: Record<string, unknown>,
  ctx: ProcessingContext,
): RollbackRequest {
  const fingerprints = eventFingerprints(prepared.fingerprintAttributes, legacyPlans, event);
  const fingerprint = fingerprints[0] ?? '';
  return {
    recordId,
    record: event,
    fingerprints,
    reverse: (journals) => reversalsOf(prepared, journals, ctx),
    notFound: () =>
      processingError(
        'rollback-target-not-found',
        `no business event identical to this one was processed (${eventName(prepared, event, fingerprint)}); ` +
          'identical means every attribute of businessEventDefinition equal, decimals by value',
      ),
    alreadyRolledBack: (withdrawn) =>
      processingError(
        'already-rolled-back',
        `every business event identical to this one (${eventName(prepared, event, fingerprint)}) is rolled back ` +
          `already: ${withdrawn
            .slice(0, WITHDRAWN_NAMED_MAX)
            .map((j) => `journal ${j.journalId} withdrawn by ${j.withdrawnBy}`)
            .join(', ')}${withdrawn.length > WITHDRAWN_NAMED_MAX ? ', …' : ''}`,
      ),
  };
}

/** The event type, the fingerprint and a few attribute values, to name an event in a message. */
function eventName(
  prepared: PreparedAccounting,
  event: Record<string, unknown>,
  fingerprint: string,
): string {
  const typeAttribute = prepared.eventTypeAttribute;
  const type = typeAttribute === undefined ? null : (event[typeAttribute] ?? null);
  const shown: string[] = [];
  for (const { name } of prepared.fingerprintAttributes) {
    if (shown.length >= NAMED_ATTRIBUTES_MAX) break;
    const value = event[name];
    if (name === typeAttribute || value === undefined || value === null) continue;
    shown.push(`${name} ${JSON.stringify(value)}`);
  }
  return `event type ${JSON.stringify(type)}, fingerprint ${fingerprint}${shown.length > 0 ? `, ${shown.join(', ')}` : ''}`;
}

/**
 * The journals of one record, split into the events that produced them. One event's journals
 * differ by (core date, accounting configuration, journal type), its automatic reversals too, so
 * in the order written a key seen again starts the next event: a flow that builds two identical
 * events from one record made two such runs of journals, and each is a twin of its own.
 */
export function eventsOf(journals: readonly TwinJournal[]): TwinJournal[][] {
  const events: TwinJournal[][] = [];
  let current: TwinJournal[] = [];
  const seen = new Set<string>();
  for (const journal of journals) {
    const key = `${journal.coreDate}\u0000${journal.accountingConfig}\u0000${journal.journalType}\u0000${journal.reverses === null ? 'o' : 'r'}`;
    if (seen.has(key)) {
      events.push(current);
      current = [];
      seen.clear();
    }
    seen.add(key);
    current.push(journal);
  }
  if (current.length > 0) events.push(current);
  return events;
}

/**
 * The reversals that roll back the earliest event among `journals` (one record's) that still has
 * a journal not withdrawn: one per such journal, its automatic reversal included (so the two
 * cancel out as well). Each is dated as a reversal by selection is: on the original's core date
 * when its period is open, else on the first day of the first open period after it; it records the
 * original's date either way, and it is unposted while its date is after the node's business date, and posts
 * with the journals of that day. A journal whose node or accounting configuration is no longer
 * assigned cannot be dated: `unknown-node`.
 */
function reversalsOf(
  prepared: PreparedAccounting,
  journals: readonly TwinJournal[],
  ctx: ProcessingContext,
): RollbackReversal[] | ProcessingError {
  const twin = eventsOf(journals).find((event) => event.some((j) => j.withdrawnBy === null)) ?? [];
  const rule = businessDateRule(prepared.businessDateShiftDays, ctx.businessDatePinned);
  const nowMs = ctx.now.getTime();
  const reversals: RollbackReversal[] = [];
  for (const original of twin) {
    if (original.withdrawnBy !== null) continue;
    const node = prepared.nodesByKey.get(nodeKeyOf(original.node));
    const nodeConfig = node?.configs.get(original.accountingConfig);
    const coreDay = parseIsoDate(original.coreDate);
    if (node === undefined || nodeConfig === undefined || coreDay === undefined) {
      return processingError(
        'unknown-node',
        `journal ${original.journalId} of the business event to roll back has node ${JSON.stringify(original.node)} ` +
          `and accounting configuration "${original.accountingConfig}", which the configuration no longer assigns ` +
          'to each other, so its reversal cannot be dated',
      );
    }
    const open = openWindowOf(node, nodeConfig, rule, nowMs, ctx.periods ?? CALENDAR_ONLY);
    if ('code' in open) return open;
    const closed = isInClosedPeriod(open, coreDay);
    const day = closed ? firstOpenDayAfter(open, coreDay) : coreDay;
    const draft: JournalDraft = {
      journalId: ctx.newId(),
      coreDate: formatIsoDate(day),
      journalType: original.journalType,
      accountingConfig: original.accountingConfig,
      node: original.node,
      // The reversal belongs to the original's session, so the session's journals show both.
      ingestionId: original.ingestionId,
      status: day <= open.businessDay ? 'posted' : 'unposted',
      reverses: original.journalId,
      lines: original.lines.map((line, index) => {
        const amount = line.amount.startsWith('-') ? line.amount.slice(1) : `-${line.amount}`;
        return {
          lineId: ctx.newId(),
          lineNo: index + 1,
          account: line.account,
          amount,
          currency: line.currency,
          drCr: amount.startsWith('-') ? 'CR' : 'DR',
          extras: line.extras,
        };
      }),
    };
    // The reversal records both dates: its own, and the one of the journal it withdraws.
    draft.originalCoreDate = original.coreDate;
    reversals.push({ original: original.journalId, draft });
  }
  return reversals;
}
