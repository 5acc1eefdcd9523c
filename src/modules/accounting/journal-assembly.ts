/**
 * The steps every journal goes through, whether generated from a business event or ingested
 * directly (docs/domain/accounting.md, sections Balance, Periods, Posting, Journal records and
 * Reversals): the line limit, the balance per currency, the period and posting rules, system ids,
 * the journal records and the reversal. The caller builds candidates; this module turns all of
 * them into drafts or returns the first error, so a record produces all of its journals or none.
 */
import { add, type Decimal, negate, sign, toDecimalString, ZERO } from '../../lib/decimal.js';
import { type BusinessDateRule, businessDateRule, businessDayOf, localTimeOf } from './business-date.js';
import { formatIsoDate } from './dates.js';
import type {
  DrCr,
  JournalDraft,
  JournalLineDraft,
  ProcessingContext,
  ProcessingOutcome,
} from './journal-draft.js';
import { lineRecord } from './line-record.js';
import { fiscalPeriodOf, isInClosedPeriod, openPeriodsAt } from './periods.js';
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
  /** Signed: debit positive, credit negative; never zero. */
  amount: Decimal;
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
  /** Names the journal in messages: its posting components or its origin journal id. */
  label: string;
  /** Whether journal fields without a role copy only business event attributes. */
  copyEventAttributesOnly: boolean;
  lines: CandidateLine[];
}

/** Where a checked journal lands in time. */
interface Placement {
  coreDay: number;
  originalCoreDay: number | undefined;
  businessDay: number;
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
    const placement = placeInOpenPeriod(prepared, candidate, rule, ctx.now.getTime());
    if ('code' in placement) return { ok: false, error: placement };
    placements.push(placement);
  }
  const journals: JournalDraft[] = [];
  candidates.forEach((candidate, index) => {
    const placement = placements[index];
    if (placement !== undefined) journals.push(...buildDrafts(prepared, candidate, placement, ctx));
  });
  return { ok: true, journals };
}

function describe(candidate: JournalCandidate): string {
  return (
    `${candidate.label} (accounting configuration "${candidate.accountingConfig.name}", ` +
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
  const totals = new Map<string, { debit: Decimal; credit: Decimal }>();
  for (const line of candidate.lines) {
    const total = totals.get(line.currency) ?? { debit: ZERO, credit: ZERO };
    if (sign(line.amount) > 0) total.debit = add(total.debit, line.amount);
    else total.credit = add(total.credit, negate(line.amount));
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
 * The journal's core date must not fall in a closed period of its node and accounting configuration
 * (docs/domain/accounting.md, Periods), unless the node config overrides the posting date and the
 * feature flag is on; then the journal moves to the first day of the earliest open period (Posting
 * date override).
 */
function placeInOpenPeriod(
  prepared: PreparedAccounting,
  candidate: JournalCandidate,
  rule: BusinessDateRule,
  nowMs: number,
): Placement | ProcessingError {
  const { node, nodeConfig, coreDay } = candidate;
  if (node.clock === undefined) {
    return processingError(
      'invalid-time-zone',
      `node ${JSON.stringify(node.fields)} has time zone "${node.timeZone}", which is not a known IANA zone`,
    );
  }
  const local = localTimeOf(node.clock, nowMs);
  const businessDay = businessDayOf(local, rule);
  const open = openPeriodsAt(
    businessDay,
    rule.pinnedDay ?? local.dayNumber,
    local.msOfDay,
    nodeConfig.graceMs,
  );
  if (!isInClosedPeriod(open, coreDay)) return { coreDay, originalCoreDay: undefined, businessDay };
  if (nodeConfig.overridePostingDate && prepared.postingDateOverride) {
    return { coreDay: open.earliestOpenFirstDay, originalCoreDay: coreDay, businessDay };
  }
  const calendar = candidate.accountingConfig.fiscalCalendar;
  let period = '';
  if (calendar !== undefined) {
    const { fiscalYear, number } = fiscalPeriodOf(calendar, coreDay);
    period = ` (fiscal calendar "${calendar.name}", fiscal year ${fiscalYear} period ${number})`;
  }
  return processingError(
    'closed-period',
    `${describe(candidate)} falls in a closed period${period}: the earliest open period of node ` +
      `${JSON.stringify(node.fields)} starts ${formatIsoDate(open.earliestOpenFirstDay)} ` +
      `(business date ${formatIsoDate(businessDay)}, grace ${nodeConfig.graceDays} days ` +
      `${nodeConfig.graceHours} hours, overridePostingDate ${nodeConfig.overridePostingDate ? 'set' : 'none'}, ` +
      `feature flag posting-date-override ${prepared.postingDateOverride ? 'on' : 'off'})`,
  );
}

/** The journal and, for a reversing type, its reversal (docs/domain/accounting.md, Reversals). */
function buildDrafts(
  prepared: PreparedAccounting,
  candidate: JournalCandidate,
  placement: Placement,
  ctx: ProcessingContext,
): JournalDraft[] {
  const journalId = ctx.newId();
  const lineIds = candidate.lines.map(() => ctx.newId());
  const reversing = candidate.journalType.reversing;
  const reversalId = reversing ? ctx.newId() : undefined;
  const reversalLineIds = reversing ? candidate.lines.map(() => ctx.newId()) : [];

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
  if (reversalId === undefined) return [original];
  const reversal = draftOf(prepared, candidate, ctx, {
    journalId: reversalId,
    lineIds: reversalLineIds,
    coreDay: placement.coreDay + candidate.journalType.reversalOffsetDays,
    businessDay: placement.businessDay,
    negateLines: true,
    reverses: journalId,
    reversedBy: undefined,
  });
  return [original, reversal];
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

function draftOf(
  prepared: PreparedAccounting,
  candidate: JournalCandidate,
  ctx: ProcessingContext,
  shape: DraftShape,
): JournalDraft {
  const coreDate = formatIsoDate(shape.coreDay);
  const draft: JournalDraft = {
    journalId: shape.journalId,
    coreDate,
    journalType: candidate.journalType.code,
    accountingConfig: candidate.accountingConfig.name,
    node: { ...candidate.node.fields },
    ingestionId: ctx.ingestionId,
    status: shape.coreDay <= shape.businessDay ? 'posted' : 'unposted',
    lines: [],
  };
  if (shape.reverses !== undefined) draft.reverses = shape.reverses;
  if (shape.reversedBy !== undefined) draft.reversedBy = shape.reversedBy;
  if (candidate.originJournalId !== undefined) draft.originJournalId = candidate.originJournalId;
  candidate.lines.forEach((line, index) => {
    const amount = shape.negateLines ? negate(line.amount) : line.amount;
    const drCr: DrCr = sign(amount) > 0 ? 'DR' : 'CR';
    const lineDraft: JournalLineDraft = {
      lineId: shape.lineIds[index] ?? '',
      lineNo: index + 1,
      account: line.account,
      amount: toDecimalString(amount),
      currency: line.currency,
      drCr,
      record: {},
    };
    lineDraft.record = recordOf(prepared, candidate, draft, lineDraft, line);
    draft.lines.push(lineDraft);
  });
  return draft;
}

/**
 * The line as a record keyed by the journal definition's field names (docs/domain/accounting.md,
 * Journal records). The values of fields with a role come from the journal and the line; the others
 * (copied event attributes, the sender's origin line id) are the line's extras. `lineRecord` builds
 * it, the same function that rebuilds stored lines, so a journal reads back as it was made.
 */
function recordOf(
  prepared: PreparedAccounting,
  candidate: JournalCandidate,
  journal: JournalDraft,
  line: JournalLineDraft,
  source: CandidateLine,
): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  for (const field of prepared.journalDefinition.fields) {
    if (field.role === 'originJournalLineId') extras[field.name] = source.originJournalLineId;
    else if (field.role === undefined && (field.copiesEventAttribute || !candidate.copyEventAttributesOnly)) {
      extras[field.name] = source.source[field.name];
    }
  }
  return lineRecord(
    prepared.journalDefinition,
    {
      ...journal,
      reverses: journal.reverses ?? null,
      reversedBy: journal.reversedBy ?? null,
      originJournalId: journal.originJournalId ?? null,
    },
    { ...line, extras },
  );
}
