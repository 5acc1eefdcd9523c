/**
 * The canonical text of a trial-balance snapshot and its SHA-256 (docs/domain/accounting.md,
 * Trial-balance snapshots), so that anyone holding a snapshot's lines can check its hash: the
 * same balances give the same text, whatever the dialect that summed them or the order they were
 * read in. Pure.
 */
import { createHash } from 'node:crypto';

/** The first line of the canonical text; a new layout would get a new one. */
export const TRIAL_BALANCE_TEXT_VERSION = 'ledgerflow trial balance 1';

/** One balance of a snapshot. */
export interface TrialBalanceLine {
  account: string;
  currency: string;
  /** Exact decimal text, as the kept balances hold it. */
  balance: string;
}

/** What a snapshot is the trial balance of. */
export interface TrialBalanceScope {
  accountingConfig: string;
  /** The node's canonical JSON (member names sorted). */
  node: string;
  firstDay: string;
  lastDay: string;
}

/** Code-unit order, the same in every runtime (no locale). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The canonical text: the version line, then one line of the scope (accounting configuration,
 * node, first and last day), then one line per balance sorted by account and currency; every
 * value JSON-quoted and the values of a line joined by tabs, each line ended by a line feed, so
 * no value can be mistaken for a separator.
 */
export function trialBalanceText(scope: TrialBalanceScope, lines: readonly TrialBalanceLine[]): string {
  const sorted = [...lines].sort(
    (a, b) => compareText(a.account, b.account) || compareText(a.currency, b.currency),
  );
  const rows = [
    TRIAL_BALANCE_TEXT_VERSION,
    [scope.accountingConfig, scope.node, scope.firstDay, scope.lastDay]
      .map((v) => JSON.stringify(v))
      .join('\t'),
    ...sorted.map((l) => [l.account, l.currency, l.balance].map((v) => JSON.stringify(v)).join('\t')),
  ];
  return `${rows.join('\n')}\n`;
}

/** The SHA-256 (lowercase hex) of the canonical text of a snapshot. */
export function trialBalanceHash(scope: TrialBalanceScope, lines: readonly TrialBalanceLine[]): string {
  return createHash('sha256').update(trialBalanceText(scope, lines), 'utf8').digest('hex');
}
