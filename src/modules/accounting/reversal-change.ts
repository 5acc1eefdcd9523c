/**
 * A reversal by selection as the change runner (`modules/changes/runner.ts`) makes it
 * (docs/adr/0020-corrections-as-reversal-journals.md). The service checks the request and
 * prepares the open windows of the configuration and period states it reads (`reversals.ts`);
 * the change, in the runner's transaction, holds the configuration revision and the period
 * states' version and refuses to go on when either moved since ({@link PreparedUnderOldStates}:
 * the service prepares again), reads the selection, withdraws its journals, and records the
 * reversal, its audit entry and its `reversal.completed` event. A change that reverses no journal
 * (each selected one reversed already, or a reversal journal itself) throws {@link NothingNew}:
 * nothing is recorded, audited or announced, and an `Idempotency-Key` stays unused. A change run
 * for an approved request makes the reversal only when it comes to the counts the approver saw,
 * else it throws `BindingMoved`.
 */
import { AppError } from '../../lib/errors.js';
import { signedInClientIdOf } from '../audit/entry.js';
import { BindingMoved, type Change } from '../changes/runner.js';
import { changeEventOf } from '../events/types.js';
import {
  type OpenWindowOf,
  REVERSAL_IDS_LISTED_MAX,
  type ReversalCounts,
  type ReversalSelection,
  type ReversalTables,
  type StoredReversal,
} from './reversal-store.js';

/** The tables a reversal writes. */
export interface ReversalChangeTables {
  reversals: ReversalTables;
}

/** What a caller asks. */
export interface ReversalRequest {
  selection: ReversalSelection;
  reason: string;
  postingDate?: string;
}

/** A stored reversal as answered: with its first reversal journal ids. */
export type ReversalView = StoredReversal & { reversalJournalIds: string[] };

/** A reversal as the service prepared it: the request checked, the open windows worked out. */
export interface ReversalChangeInput {
  request: ReversalRequest;
  reversalId: string;
  /** The configuration revision and the period states' version `openWindowOf` was prepared under. */
  revision: number;
  periodsVersion: number;
  openWindowOf: OpenWindowOf;
  newId: () => string;
  /** For an approved request: the counts and totals the approver saw. */
  boundCounts?: ReversalCounts | undefined;
}

/**
 * Thrown when the configuration or the period states moved since the change was prepared: nothing
 * is changed, and the service prepares it again under the new ones.
 */
export class PreparedUnderOldStates extends Error {
  constructor() {
    super('the configuration or the period states moved since the reversal was prepared');
    this.name = 'PreparedUnderOldStates';
  }
}

/** Thrown when no selected journal needed a reversal journal; the counts say why. Nothing is changed. */
export class NothingNew extends Error {
  constructor(readonly counts: ReversalCounts) {
    super('no selected journal needs a reversal journal');
    this.name = 'NothingNew';
  }
}

/** The counts and totals of a reversal in one comparable text, whatever the order of its totals. */
function countsText(counts: ReversalCounts): string {
  const totals = counts.totals.map((total) => JSON.stringify(Object.entries(total).sort())).sort();
  return JSON.stringify([
    counts.journals,
    counts.lines,
    counts.alreadyReversed,
    counts.notReversible,
    totals,
  ]);
}

/** How the counts moved from those an approval was bound to. */
function countsMoved(now: ReversalCounts, bound: ReversalCounts): string {
  return `the journals it would reverse changed: ${now.journals} journal(s) and ${now.lines} line(s) now, ${bound.journals} and ${bound.lines} when approved`;
}

/** The reversal `reversalId` as answered, read in `tx`. */
async function viewIn(tx: ReversalChangeTables, reversalId: string): Promise<ReversalView> {
  const reversal = await tx.reversals.find(reversalId);
  // A change of the configuration that wipes the processing data takes the reversals with it.
  if (reversal === undefined)
    throw new AppError(
      'not-found',
      `the reversal ${reversalId} made under this Idempotency-Key was deleted with the processing data by a change of the configuration; send a new request under a new key`,
    );
  return {
    ...reversal,
    reversalJournalIds: await tx.reversals.reversalJournalIds(reversalId, REVERSAL_IDS_LISTED_MAX),
  };
}

/** The reversal change (see the header). */
export const reversalChange: Change<ReversalChangeInput, ReversalView, ReversalChangeTables> = {
  action: 'journals.reverse',
  // The windows, versions and ids are read or drawn for this attempt.
  requestOf: ({ request }) => request,
  keeping: {
    toKept: (view) => ({ reversalId: view.reversalId }),
    fromKept: (kept, tx) => viewIn(tx, (kept as { reversalId: string }).reversalId),
  },
  async apply(tx, input, { at, actor }) {
    const { request, reversalId } = input;
    const postingDate = request.postingDate;
    const versions = await tx.reversals.heldVersions();
    if (versions.revision !== input.revision || versions.periodsVersion !== input.periodsVersion)
      throw new PreparedUnderOldStates();
    const ids = await tx.reversals.selectedIds(request.selection);
    const { revision, openWindowOf, newId } = input;
    const counts = await tx.reversals.withdraw(ids, {
      reversalId,
      at,
      revision,
      postingDate,
      openWindowOf,
      newId,
    });
    if (input.boundCounts !== undefined && countsText(counts) !== countsText(input.boundCounts))
      throw new BindingMoved(countsMoved(counts, input.boundCounts));
    if (counts.journals === 0) throw new NothingNew(counts);
    const clientId = actor.clientId ?? signedInClientIdOf(actor.user);
    const common = { reversalId, reason: request.reason, postingDate: postingDate ?? null };
    await tx.reversals.record({
      ...common,
      ...counts,
      selection: request.selection,
      createdBy: actor.user,
      clientId,
      createdAt: at,
      revision,
    });
    const { journals, lines, alreadyReversed, notReversible } = counts;
    const numbers = { journals, lines, alreadyReversed, notReversible };
    return {
      answer: await viewIn(tx, reversalId),
      audit: {
        before: null,
        after: { reversalId, journals, lines },
        configuration: { version: null, revision, sections: {}, deleted: null },
        details: { ...common, clientId, selection: request.selection, ...numbers },
      },
      events: [changeEventOf('reversal.completed', { ...common, createdBy: actor.user, ...numbers })],
    };
  },
};
