import { add, type Decimal, parseDecimal, toDecimalString, ZERO } from '../../lib/decimal.js';
import { type Html, html } from './html.js';

/**
 * How the administration interface shows amounts: the digits before the point grouped by three
 * with commas, a point before the decimals, a leading minus for negative amounts
 * (`-1,234,567.89`). The grouping is the same whatever the browser's language, so a figure reads
 * the same on every screen and in every screenshot. Amounts are formatted as text, digit by
 * digit, never through a binary float, so every digit stored is shown.
 */
const PLAIN_DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;

/** Digits of one thousands group. */
const GROUP_DIGITS = 3;

/**
 * `amount` (plain decimal notation, as amounts are stored) with thousands separators: the digits
 * after the point are kept as they are, leading zeros of the integer part dropped, and a
 * negative zero shown as zero. Text that is not plain decimal notation is returned unchanged, so
 * nothing is ever hidden.
 */
export function formatAmount(amount: string): string {
  const match = PLAIN_DECIMAL.exec(amount);
  if (match === null) return amount;
  const integer = (match[2] ?? '').replace(/^0+(?=\d)/, '');
  const fraction = match[3];
  const zero = !/[1-9]/.test(integer + (fraction ?? ''));
  let grouped = '';
  for (let end = integer.length; end > 0; end -= GROUP_DIGITS) {
    const group = integer.slice(Math.max(0, end - GROUP_DIGITS), end);
    grouped = grouped === '' ? group : `${group},${grouped}`;
  }
  const sign = match[1] === '-' && !zero ? '-' : '';
  return `${sign}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** A count (of rows, lines, chunks) grouped as amounts are: `12,345`. */
export function formatCount(count: number): string {
  return formatAmount(String(count));
}

/**
 * An amount as a page shows it: formatted by {@link formatAmount}, followed by its currency, with
 * the stored value in a `data` element so that sorting reads the exact figure.
 */
export function amountHtml(amount: string, currency: string): Html {
  return html`<data class="amount" value="${amount}">${formatAmount(amount)}</data>&nbsp;<span class="currency">${currency}</span>`;
}

/** The amount without its sign (`-12.50` gives `12.50`). */
export function magnitudeOf(amount: string): string {
  return amount.startsWith('-') || amount.startsWith('+') ? amount.slice(1) : amount;
}

/**
 * Exact sums of amounts per currency, in the order the currencies first occur. A currency one of
 * whose amounts is not a decimal sums to `undefined` (shown as unknown) rather than to a wrong
 * figure.
 */
export function sumsByCurrency(
  amounts: Iterable<{ amount: string; currency: string }>,
): Map<string, Decimal | undefined> {
  const sums = new Map<string, Decimal | undefined>();
  for (const { amount, currency } of amounts) {
    const value = parseDecimal(amount);
    const before = sums.has(currency) ? sums.get(currency) : ZERO;
    sums.set(currency, value === undefined || before === undefined ? undefined : add(before, value));
  }
  return sums;
}

/** Sums per currency as a list of amounts, one a line; `—` for a sum that cannot be made. */
export function currencySumsHtml(sums: ReadonlyMap<string, Decimal | undefined>): Html {
  return html`${[...sums].map(
    ([currency, total]) =>
      html`<span class="amount-line">${
        total === undefined
          ? html`<span title="An amount of this currency is not a decimal">—</span>&nbsp;<span class="currency">${currency}</span>`
          : amountHtml(toDecimalString(total), currency)
      }</span>`,
  )}`;
}
