/**
 * The steps every journal goes through, whether generated from a business event or ingested
 * directly (docs/domain/accounting.md, sections Balance, Periods, Posting, Journal records and
 * Reversals): the line limit, the balance per currency, the period and posting rules, system ids,
 * the journal records and the reversal. The caller builds candidates; this module turns all of
 * them into drafts or returns the first error, so a record produces all of its journals or none.
 */
import {
  add,
  type Decimal,
  type DecimalText,
  decimal,
  negate,
  sign,
  toDecimalString,
  ZERO,
} from '../../lib/decimal.js';
import { type BusinessDateRule, businessDateRule, businessDayOf, localTimeOf } from './business-date.js';
import { formatIsoDate } from './dates.js';
import type {
  JournalDraft,
  JournalLineDraft,
  ProcessingContext,
  ProcessingOutcome,
} from './journal-draft.js';
import {
  CALENDAR_ONLY,
  firstOpenDayAfter,
  fiscalPeriodOf,
  isInClosedPeriod,
  manualPeriodsOf,
  type OpenWindowMemo,
  openPeriodsAt,
  type PeriodStates,
} from './periods.js';
import type {
  PreparedAccounting,
  PreparedAccountingConfig,
  PreparedJournalType,
  PreparedNode,
  PreparedNodeConfig,
} from './prepare.js';
import { type ProcessingError, processingError } from './processing-error.js';

/** Lines one journal may have; a larger journal is `too-many-lines`. */
export const JOURNAL_LINES_MAX = 10_000;

/** A journal line before ids, dates and records are assigned. */
export interface CandidateLine {
  account: string;
  /** Signed: debit positive, credit negative; never zero. Read as text, printed as it is. */
  amount: DecimalText;
  currency: string;
  /** Values for journal fields without a role (the event, or the sender's line). */
  source: Readonly<Record<string, unknown>>;
  /** The sender's line id of a directly ingested line. */
  originJournalLineId?: unknown;
}

/** A journal before checks: lines of one core date, node, accounting configuration and type. */
export interface JournalCandidate {
  coreDay: number;
  node: PreparedNode;
  nodeConfig: PreparedNodeConfig;
  accountingConfig: PreparedAccountingConfig;
  journalType: PreparedJournalType;
  /** The sender's journal id (docs/domain/accounting.md, Direct journals). */
  originJournalId?: string;
  /** The posting components of a business event's journal, which name it in messages. */
  components: string[];
  /** Whether journal fields without a role copy only business event attributes. */
  copyEventAttributesOnly: boolean;
  lines: CandidateLine[];
}

/** Where a checked journal lands in time, and its reversal when its type is reversing. */
interface Placement {
  coreDay: number;
  originalCoreDay: number | undefined;
  businessDay: number;
  reversal: { coreDay: number; originalCoreDay: number | undefined } | undefined;
}

/**
 * Checks every candidate (line limit, balance, period) and, when all pass, assigns ids and builds
 * the drafts, each reversing journal followed by its reversal. Returns the first error otherwise;
 * no id is drawn for a record that fails. Throws a `RangeError` when `ctx.businessDatePinned` is
 * set but not an ISO date: the caller validates `BUSINESS_DATE` at start-up.
 */
export function assembleJournals(
  prepared: PreparedAccounting,
  candidates: readonly JournalCandidate[],
  ctx: ProcessingContext,
): ProcessingOutcome {
  const placements: Placement[] = [];
  const rule = businessDateRule(prepared.businessDateShiftDays, ctx.businessDatePinned);
  for (const candidate of candidates) {
    const error = checkLineCount(candidate) ?? checkBalance(candidate);
    if (error !== undefined) return { ok: false, error };
    const placement = placeInOpenPeriod(prepared, candidate, rule, ctx);
    if ('code' in placement) return { ok: false, error: placement };
    placements.push(placement);
  }
  const journals: JournalDraft[] = [];
  for (let index = 0; index < candidates.length; index += 1) {
    const candidate = candidates[index];
    const placement = placements[index];
    if (candidate !== undefined && placement !== undefined)
      addDrafts(journals, prepared, candidate, placement, ctx);
  }
  return { ok: true, journals };
}

/** Names the journal in messages: its origin journal id, or its posting components. */
function labelOf(candidate: JournalCandidate): string {
  if (candidate.originJournalId !== undefined) return `origin journal "${candidate.originJournalId}"`;
  const codes = candidate.components;
  return `journal of posting component${codes.length > 1 ? 's' : ''} ${codes.map((code) => `"${code}"`).join(', ')}`;
}

function describe(candidate: JournalCandidate): string {
  return (
    `${labelOf(candidate)} (accounting configuration "${candidate.accountingConfig.name}", ` +
    `journal type "${candidate.journalType.code}", core date ${formatIsoDate(candidate.coreDay)})`
  );
}

function checkLineCount(candidate: JournalCandidate): ProcessingError | undefined {
  if (candidate.lines.length <= JOURNAL_LINES_MAX) return undefined;
  return processingError(
    'too-many-lines',
    `${describe(candidate)} has ${candidate.lines.length} lines; at most ${JOURNAL_LINES_MAX} are allowed`,
  );
}

/**
 * Per currency, debits equal credits exactly and there is a debit and a credit
 * (docs/domain/accounting.md, Balance). Lines are never zero, so a currency whose signed sum is
 * zero has both sides; the side check still runs as an assertion of that.
 */
function checkBalance(candidate: JournalCandidate): ProcessingError | undefined {
  const { lines } = candidate;
  const first = lines[0];
  if (first === undefined) return undefined;
  // The usual journal, one currency and one scale, sums its lines' integer units, which is exact
  // while every partial sum is a safe integer: debits equal credits exactly when the signed sum
  // is zero, and the sides are there when some line is positive and some negative. Anything
  // else is summed as decimals.
  let units = first.amount.units;
  let debit = first.amount.sign > 0;
  let credit = first.amount.sign < 0;
  for (let index = 1; index < lines.length && Number.isSafeInteger(units); index += 1) {
    const line = lines[index];
    if (line === undefined) continue;
    units =
      line.currency === first.currency && line.amount.scale === first.amount.scale
        ? units + line.amount.units
        : Number.NaN;
    debit ||= line.amount.sign > 0;
    credit ||= line.amount.sign < 0;
  }
  if (units === 0 && debit && credit) return undefined;
  return balanceError(candidate);
}

/** The first currency of a journal that does not balance, summed as decimals, with its totals. */
function balanceError(candidate: JournalCandidate): ProcessingError | undefined {
  const totals = new Map<string, { debit: Decimal; credit: Decimal }>();
  for (const line of candidate.lines) {
    const amount = decimal(line.amount.text);
    const total = totals.get(line.currency) ?? { debit: ZERO, credit: ZERO };
    if (sign(amount) > 0) total.debit = add(total.debit, amount);
    else total.credit = add(total.credit, negate(amount));
    totals.set(line.currency, total);
  }
  for (const [currency, { debit, credit }] of totals) {
    if (!debit.value.equals(credit.value) || sign(debit) === 0 || sign(credit) === 0) {
      return processingError(
        'unbalanced',
        `${describe(candidate)} does not balance in ${currency}: debits ${toDecimalString(debit)}, ` +
          `credits ${toDecimalString(credit)}`,
      );
    }
  }
  return undefined;
}

/**
 * The business day, the earliest open period of the calendar and the manual period states of a
 * node and accounting configuration at `nowMs` (docs/domain/accounting.md, Business date,
 * Periods), kept in the node config's memo so that the journals of one chunk compute it once: the
 * memo is computed again only when the clock reading or the `states` object changes, so the manual
 * states cost the hot path one identity comparison. `invalid-time-zone` when the node's zone is
 * not known. A rollback dates its reversals with it too (event-rollback.ts).
 */
export function openWindowOf(
  node: PreparedNode,
  nodeConfig: PreparedNodeConfig,
  rule: BusinessDateRule,
  nowMs: number,
  states: PeriodStates,
): OpenWindowMemo | ProcessingError {
  if (node.clock === undefined) {
    return processingError(
      'invalid-time-zone',
      `node ${JSON.stringify(node.fields)} has time zone "${node.timeZone}", which is not a known IANA zone`,
    );
  }
  const open = nodeConfig.openWindow;
  if (open.states !== states) {
    open.states = states;
    open.manual = manualPeriodsOf(states, node.key, nodeConfig.accountingConfigName);
  }
  if (open.nowMs !== nowMs || open.pinnedDay !== rule.pinnedDay) {
    const local = localTimeOf(node.clock, nowMs);
    open.businessDay = businessDayOf(local, rule);
    open.earliestOpenFirstDay = openPeriodsAt(
      open.businessDay,
      rule.pinnedDay ?? local.dayNumber,
      local.msOfDay,
      nodeConfig.graceMs,
    ).earliestOpenFirstDay;
    open.nowMs = nowMs;
    open.pinnedDay = rule.pinnedDay;
  }
  return open;
}

/**
 * The journal's core date must not fall in a period that is not open for its node and accounting
 * configuration (docs/domain/accounting.md, Periods: by the calendar, or closed or locked by
 * hand), unless the node config overrides the posting date and the feature flag is on; then the
 * journal moves to the first day of the first open period after its own (Posting date override),
 * which is never a closed or locked one.
 */
function placeInOpenPeriod(
  prepared: PreparedAccounting,
  candidate: JournalCandidate,
  rule: BusinessDateRule,
  ctx: ProcessingContext,
): Placement | ProcessingError {
  const { node, nodeConfig, coreDay } = candidate;
  const open = openWindowOf(node, nodeConfig, rule, ctx.now.getTime(), ctx.periods ?? CALENDAR_ONLY);
  if ('code' in open) return open;
  const { businessDay } = open;
  if (!isInClosedPeriod(open, coreDay))
    return {
      coreDay,
      originalCoreDay: undefined,
      businessDay,
      reversal: reversalOf(candidate, open, coreDay),
    };
  if (nodeConfig.overridePostingDate && prepared.postingDateOverride) {
    const moved = firstOpenDayAfter(open, coreDay);
    return {
      coreDay: moved,
      originalCoreDay: coreDay,
      businessDay,
      reversal: reversalOf(candidate, open, moved),
    };
  }
  const manual = open.manual.find((p) => coreDay >= p.firstDay && coreDay <= p.lastDay);
  const calendar = candidate.accountingConfig.fiscalCalendar;
  let period = '';
  if (calendar !== undefined) {
    const { fiscalYear, number } = fiscalPeriodOf(calendar, coreDay);
    period = ` (fiscal calendar "${calendar.name}", fiscal year ${fiscalYear} period ${number})`;
  }
  if (manual !== undefined)
    return processingError(
      'closed-period',
      `${describe(candidate)} falls in a period ${manual.state} by hand${period} for node ` +
        `${JSON.stringify(node.fields)}: it opens again only when reopened; the first open period ` +
        `after it starts ${formatIsoDate(firstOpenDayAfter(open, coreDay))} ` +
        `(overridePostingDate ${nodeConfig.overridePostingDate ? 'set' : 'none'}, ` +
        `feature flag posting-date-override ${prepared.postingDateOverride ? 'on' : 'off'})`,
    );
  return processingError(
    'closed-period',
    `${describe(candidate)} falls in a closed period${period}: the earliest open period of node ` +
      `${JSON.stringify(node.fields)} starts ${formatIsoDate(open.earliestOpenFirstDay)} ` +
      `(business date ${formatIsoDate(businessDay)}, grace ${nodeConfig.graceDays} days ` +
      `${nodeConfig.graceHours} hours, overridePostingDate ${nodeConfig.overridePostingDate ? 'set' : 'none'}, ` +
      `feature flag posting-date-override ${prepared.postingDateOverride ? 'on' : 'off'})`,
  );
}

/**
 * Where the automatic reversal of a journal of a reversing type dated `coreDay` lands: the next
 * day, or, when that day is in a period closed or locked (by the calendar or by hand), the first
 * day of the first open period after it, keeping the next day as its original core date
 * (docs/domain/accounting.md, Reversals). A journal on the last day of a reopened period is then
 * never taken back inside a closed or locked one.
 */
function reversalOf(
  candidate: JournalCandidate,
  open: OpenWindowMemo,
  coreDay: number,
): Placement['reversal'] {
  if (!candidate.journalType.reversing) return undefined;
  const day = coreDay + candidate.journalType.reversalOffsetDays;
  if (!isInClosedPeriod(open, day)) return { coreDay: day, originalCoreDay: undefined };
  return { coreDay: firstOpenDayAfter(open, day), originalCoreDay: day };
}

/**
 * Adds the journal and, for a reversing type, its reversal to `journals`
 * (docs/domain/accounting.md, Reversals).
 */
function addDrafts(
  journals: JournalDraft[],
  prepared: PreparedAccounting,
  candidate: JournalCandidate,
  placement: Placement,
  ctx: ProcessingContext,
): void {
  const journalId = ctx.newId();
  const lineIds = candidate.lines.map(() => ctx.newId());
  const { reversal } = placement;
  const reversalId = reversal === undefined ? undefined : ctx.newId();
  const reversalLineIds = reversal === undefined ? [] : candidate.lines.map(() => ctx.newId());

  const original = draftOf(prepared, candidate, ctx, {
    journalId,
    lineIds,
    coreDay: placement.coreDay,
    businessDay: placement.businessDay,
    negateLines: false,
    reverses: undefined,
    reversedBy: reversalId,
  });
  if (placement.originalCoreDay !== undefined)
    original.originalCoreDate = formatIsoDate(placement.originalCoreDay);
  journals.push(original);
  if (reversal === undefined || reversalId === undefined) return;
  const reversalDraft = draftOf(prepared, candidate, ctx, {
    journalId: reversalId,
    lineIds: reversalLineIds,
    coreDay: reversal.coreDay,
    businessDay: placement.businessDay,
    negateLines: true,
    reverses: journalId,
    reversedBy: undefined,
  });
  if (reversal.originalCoreDay !== undefined)
    reversalDraft.originalCoreDate = formatIsoDate(reversal.originalCoreDay);
  journals.push(reversalDraft);
}

interface DraftShape {
  journalId: string;
  lineIds: readonly string[];
  coreDay: number;
  businessDay: number;
  negateLines: boolean;
  reverses: string | undefined;
  reversedBy: string | undefined;
}

/**
 * The negation of a line amount as printed: lines are never zero, so the sign is the first
 * character and flipping it is exact.
 */
function negatedText(amount: string): string {
  return amount.startsWith('-') ? amount.slice(1) : `-${amount}`;
}

/**
 * One journal draft with its lines. A line carries the values of the fields no column holds
 * (copied event attributes, the sender's origin line id and fields), set here by the journal
 * definition's plan; its record keyed by every field is rebuilt from the draft by the same plan
 * (`lineRecord` in line-record.ts), so a journal reads back as it was made.
 */
function draftOf(
  prepared: PreparedAccounting,
  candidate: JournalCandidate,
  ctx: ProcessingContext,
  shape: DraftShape,
): JournalDraft {
  const draft: JournalDraft = {
    journalId: shape.journalId,
    coreDate: formatIsoDate(shape.coreDay),
    journalType: candidate.journalType.code,
    accountingConfig: candidate.accountingConfig.name,
    node: candidate.node.fields,
    ingestionId: ctx.ingestionId,
    status: shape.coreDay <= shape.businessDay ? 'posted' : 'unposted',
    lines: [],
  };
  if (shape.reverses !== undefined) draft.reverses = shape.reverses;
  if (shape.reversedBy !== undefined) draft.reversedBy = shape.reversedBy;
  if (candidate.originJournalId !== undefined) draft.originJournalId = candidate.originJournalId;
  const { extraFields } = prepared.journalDefinition.plan;
  const copySenderFields = !candidate.copyEventAttributesOnly;
  // Mapped, not pushed: the lines stay as long as the chunk's journals, in an array of their size.
  draft.lines = candidate.lines.map((line, index): JournalLineDraft => {
    const amount = shape.negateLines ? negatedText(line.amount.text) : line.amount.text;
    const extras: Record<string, unknown> = {};
    for (const { name, source } of extraFields) {
      const value =
        source === 'originJournalLineId'
          ? line.originJournalLineId
          : source === 'eventAttribute' || copySenderFields
            ? line.source[name]
            : undefined;
      if (value !== null && value !== undefined) extras[name] = value;
    }
    return {
      lineId: shape.lineIds[index] ?? '',
      lineNo: index + 1,
      account: line.account,
      amount,
      currency: line.currency,
      drCr: amount.startsWith('-') ? 'CR' : 'DR',
      extras,
    };
  });
  return draft;
}
