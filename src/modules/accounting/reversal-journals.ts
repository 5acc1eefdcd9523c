/**
 * The reversal journal of an original (docs/domain/accounting.md, Corrections): the same lines
 * with their sides swapped, `reverses` naming the original, the original's session, node,
 * accounting configuration, journal type and origin journal id, dated by the rule below, and the
 * totals of a set of reversal journals. Pure: the caller supplies the open window of the
 * original's node and the ids; reversals by selection and business-event rollbacks both build
 * their journals here.
 *
 * Dating rule: the reversal takes the original's core date when that date is in an open period
 * of the original's node and accounting configuration (a later period is open too: a reversal of
 * an unposted journal waits unposted with it and posts on the same day), otherwise the first day
 * of the first open period after it (closed or locked periods, by the calendar or by hand, are
 * skipped). A posting date asked for replaces both, and must be in an open period (else
 * `closedPeriodOf` names the period it is in) and not before the original's core date: it is
 * refused, never moved. The reversal always records the original's core date as its
 * `originalCoreDate`.
 */
import { add, type Decimal, decimal, negate, toDecimalString, ZERO } from '../../lib/decimal.js';
import { isPosted } from './business-date.js';
import { formatIsoDate, parseIsoDate } from './dates.js';
import type { JournalDraft, JournalLineDraft, JournalStatus } from './journal-draft.js';
import type { StoredLineValues } from './line-record.js';
import { firstOpenDayAfter, isInClosedPeriod, type ManualPeriod, type PeriodWindow } from './periods.js';

/** Characters of a month `YYYY-MM`, the head of an ISO date: how a message names a period. */
const ISO_MONTH_LENGTH = 7;

/** The open window of a node and accounting configuration at the instant of a reversal. */
export interface ReversalWindow {
  /** The node's business date: a reversal dated after it waits unposted. */
  businessDate: string;
  /** The first day of the earliest open period of the calendar; days before it are in closed periods. */
  earliestOpenFirstDay: string;
  /** The periods closed, locked or reopened by hand, which the calendar yields to; none when absent. */
  manual?: readonly ManualPeriod[];
}

/** A stored journal as a reversal is made from it. */
export interface ReversibleJournal {
  journalId: string;
  ingestionId: string;
  coreDate: string;
  journalType: string;
  accountingConfig: string;
  node: Readonly<Record<string, string>>;
  originJournalId: string | null;
  lines: readonly StoredLineValues[];
}

/** Why a posting date asked for cannot date a reversal. */
export type PostingDateRefusal = 'posting-date-in-closed-period' | 'posting-date-before-original';

/** The date and status of a reversal journal, or why the posting date asked for is refused. */
export type ReversalDating =
  | { ok: true; coreDate: string; status: JournalStatus }
  | { ok: false; refusal: PostingDateRefusal; firstOpenDay: string };

/**
 * The period a day falls in when no reversal may be dated there: its month (`YYYY-MM`), its state
 * (`locked` by hand, or `closed` by the calendar or by hand) and the first day of the first open
 * period after it.
 */
export interface ClosedPeriodOfDay {
  period: string;
  state: 'closed' | 'locked';
  /** Whether a manual state decides (closed or locked by hand), rather than the calendar. */
  byHand: boolean;
  firstOpenDay: string;
}

function periodWindowOf(window: ReversalWindow): PeriodWindow {
  return {
    earliestOpenFirstDay: parseIsoDate(window.earliestOpenFirstDay) ?? 0,
    manual: window.manual ?? [],
  };
}

/**
 * The closed or locked period of `window` that holds `day` (an ISO date), or `undefined` when the
 * period is open. What an explicit posting date is checked against, for every journal a reversal
 * selects, so that a posting date is refused with the period named rather than moved. Throws a
 * `RangeError` when `day` is not an ISO date: the caller checks the request first.
 */
export function closedPeriodOf(day: string, window: ReversalWindow): ClosedPeriodOfDay | undefined {
  const dayNumber = parseIsoDate(day);
  if (dayNumber === undefined) throw new RangeError(`not an ISO date: ${JSON.stringify(day)}`);
  const open = periodWindowOf(window);
  if (!isInClosedPeriod(open, dayNumber)) return undefined;
  const manual = open.manual.find((p) => dayNumber >= p.firstDay && dayNumber <= p.lastDay);
  return {
    period: day.slice(0, ISO_MONTH_LENGTH),
    state: manual?.state === 'locked' ? 'locked' : 'closed',
    byHand: manual !== undefined,
    firstOpenDay: formatIsoDate(firstOpenDayAfter(open, dayNumber)),
  };
}

/** The date and status of the reversal of a journal of `originalCoreDate` (the rule in the header). */
export function reversalDateOf(
  originalCoreDate: string,
  window: ReversalWindow,
  postingDate: string | undefined,
): ReversalDating {
  const open = periodWindowOf(window);
  let coreDate: string;
  if (postingDate !== undefined) {
    const day = parseIsoDate(postingDate) ?? 0;
    if (isInClosedPeriod(open, day))
      return {
        ok: false,
        refusal: 'posting-date-in-closed-period',
        firstOpenDay: formatIsoDate(firstOpenDayAfter(open, day)),
      };
    if (postingDate < originalCoreDate)
      return { ok: false, refusal: 'posting-date-before-original', firstOpenDay: postingDate };
    coreDate = postingDate;
  } else {
    const day = parseIsoDate(originalCoreDate) ?? 0;
    coreDate = isInClosedPeriod(open, day) ? formatIsoDate(firstOpenDayAfter(open, day)) : originalCoreDate;
  }
  return { ok: true, coreDate, status: isPosted(coreDate, window.businessDate) ? 'posted' : 'unposted' };
}

/**
 * The negation of a stored line amount: lines are never zero and are stored in plain notation,
 * so the sign is the first character and flipping it is exact.
 */
function negatedText(amount: string): string {
  return amount.startsWith('-') ? amount.slice(1) : `-${amount}`;
}

/**
 * The reversal journal of `original`, dated by `dating`, with journal id `ids.journalId` and one
 * line id per line from `ids.newId`. Its lines are the original's in the same order, with the
 * same account, currency and other fields, and the amount negated.
 */
export function reversalJournalOf(
  original: ReversibleJournal,
  dating: { coreDate: string; status: JournalStatus },
  ids: { journalId: string; newId: () => string },
): JournalDraft {
  const draft: JournalDraft = {
    journalId: ids.journalId,
    coreDate: dating.coreDate,
    originalCoreDate: original.coreDate,
    journalType: original.journalType,
    accountingConfig: original.accountingConfig,
    node: original.node,
    ingestionId: original.ingestionId,
    status: dating.status,
    reverses: original.journalId,
    lines: original.lines.map((line): JournalLineDraft => {
      const amount = negatedText(line.amount);
      return {
        lineId: ids.newId(),
        lineNo: line.lineNo,
        account: line.account,
        amount,
        currency: line.currency,
        drCr: amount.startsWith('-') ? 'CR' : 'DR',
        extras: { ...line.extras },
      };
    }),
  };
  if (original.originJournalId !== null) draft.originJournalId = original.originJournalId;
  return draft;
}

/** The debits and credits of reversal lines of one accounting configuration, account and currency. */
export interface ReversalTotal {
  accountingConfig: string;
  account: string;
  currency: string;
  /** Sum of the debit lines, exact. */
  debit: string;
  /** Sum of the credit lines as a positive amount, exact. */
  credit: string;
}

/** Running totals of reversal lines; `rows()` answers them sorted by their key. */
export class ReversalTotals {
  readonly #sums = new Map<string, { key: [string, string, string]; debit: Decimal; credit: Decimal }>();

  /** Adds the lines of the reversal of `original`: each line's side swapped. */
  addReversalOf(original: Pick<ReversibleJournal, 'accountingConfig' | 'lines'>): void {
    for (const line of original.lines) {
      const id = `${original.accountingConfig}\u0000${line.account}\u0000${line.currency}`;
      let sum = this.#sums.get(id);
      if (sum === undefined) {
        sum = { key: [original.accountingConfig, line.account, line.currency], debit: ZERO, credit: ZERO };
        this.#sums.set(id, sum);
      }
      // A credit line of the original is a debit of its reversal, and the other way round.
      if (line.amount.startsWith('-')) sum.debit = add(sum.debit, negate(decimal(line.amount)));
      else sum.credit = add(sum.credit, decimal(line.amount));
    }
  }

  rows(): ReversalTotal[] {
    return [...this.#sums.values()]
      .sort((a, b) => {
        for (let i = 0; i < 3; i += 1) {
          const x = a.key[i] ?? '';
          const y = b.key[i] ?? '';
          if (x !== y) return x < y ? -1 : 1;
        }
        return 0;
      })
      .map(({ key: [accountingConfig, account, currency], debit, credit }) => ({
        accountingConfig,
        account,
        currency,
        debit: toDecimalString(debit),
        credit: toDecimalString(credit),
      }));
  }
}
