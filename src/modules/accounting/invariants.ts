/**
 * The invariants of the journals a change writes (docs/domain/accounting.md, Invariants),
 * asserted where journals become rows, whatever made them: processing, a rollback, a reversal.
 * The rules that make journals already refuse what breaks them, as processing errors a user can
 * fix (`journal-assembly.ts`, `direct-journals.ts`); these assertions are the second line, for a
 * fault of the service's own code, and stop the change before anything is written.
 */
import { DECIMAL_SCALE_MAX } from '../../lib/decimal.js';
import { invariant } from '../../lib/invariant.js';
import type { JournalDraft } from './journal-draft.js';

/** A stored amount: plain decimal notation, at most DECIMAL_SCALE_MAX digits after the point. */
const AMOUNT_PATTERN = new RegExp(`^([+-]?)(\\d+)(?:\\.(\\d{1,${DECIMAL_SCALE_MAX}}))?$`);

/** `text` in units of 10^-DECIMAL_SCALE_MAX, exactly; undefined when it is not a stored amount. */
function scaledUnits(text: string): bigint | undefined {
  const parts = AMOUNT_PATTERN.exec(text);
  if (parts === null) return undefined;
  const [, minus, whole = '', fraction = ''] = parts;
  const units = BigInt(whole + fraction.padEnd(DECIMAL_SCALE_MAX, '0'));
  return minus === '-' ? -units : units;
}

/**
 * Asserts that `draft` has lines, that every amount is an exact decimal, and that its lines sum
 * to zero in each currency (debits positive, credits negative): a journal balances per currency.
 */
export function assertJournalBalances(draft: JournalDraft): void {
  invariant(draft.lines.length > 0, 'a journal has lines', () => `journal ${draft.journalId} has none`);
  const sums = new Map<string, bigint>();
  for (const line of draft.lines) {
    const units = scaledUnits(line.amount);
    invariant(
      units !== undefined,
      'an amount is an exact decimal',
      () => `line ${line.lineNo} of journal ${draft.journalId} has amount ${JSON.stringify(line.amount)}`,
    );
    sums.set(line.currency, (sums.get(line.currency) ?? 0n) + units);
  }
  for (const [currency, sum] of sums)
    invariant(
      sum === 0n,
      'a journal balances in each currency',
      () => `journal ${draft.journalId} is off by ${sum} units of 10^-${DECIMAL_SCALE_MAX} ${currency}`,
    );
}
