import type { ReversalCounts } from '../../modules/accounting/reversal-store.js';
import { type Html, html } from './html.js';
import { table } from './layout.js';
import { amountHtml, formatCount } from './money.js';
import { journalLink } from './words.js';

/**
 * What a reversal writes, as its dry run, its approval request and the reversal itself show it:
 * the counts, the journals left as they are, and the lines summed per account.
 */

/** The reversal lines summed per accounting configuration, account and currency. */
export function totalsTable(counts: ReversalCounts): Html | string {
  if (counts.totals.length === 0) return '';
  return table(
    'reversal-totals',
    [
      'Accounting configuration',
      'Account',
      { label: 'Debit', kind: 'num' },
      { label: 'Credit', kind: 'num' },
    ],
    counts.totals.map((t) => [
      t.accountingConfig,
      t.account,
      amountHtml(t.debit, t.currency),
      amountHtml(t.credit, t.currency),
    ]),
  );
}

/** The first journals of a count, linked, and how many more there are. */
function idsHtml(ids: readonly string[], total: number): Html | string {
  if (ids.length === 0) return '';
  const more = total > ids.length ? ` and ${formatCount(total - ids.length)} more` : '';
  return html`: ${ids.map((id, i) => html`${i === 0 ? '' : ', '}${journalLink(id)}`)}${more}`;
}

/** The counts of a reversal, or of its dry run, as labelled facts; `id` names the list. */
export function countFacts(counts: ReversalCounts, id: string): Html {
  return html`<dl class="facts" id="${id}">
  <dt>Reversal journals</dt><dd>${formatCount(counts.journals)} (${formatCount(counts.lines)} lines)</dd>
  <dt>Already reversed, left as they are</dt><dd>${formatCount(counts.alreadyReversed)}${idsHtml(counts.alreadyReversedIds, counts.alreadyReversed)}</dd>
  <dt>Reversal journals selected, not reversed again</dt><dd>${formatCount(counts.notReversible)}${idsHtml(counts.notReversibleIds, counts.notReversible)}</dd>
</dl>`;
}
