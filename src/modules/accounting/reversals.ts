/**
 * Reversals by selection (docs/reference.md, Reversals; docs/domain/accounting.md, Corrections;
 * docs/adr/0020-corrections-as-reversal-journals.md). A request names journals (by id, by
 * session, by origin journal id, or by accounting configuration and core-date range) and a
 * reason; each selected journal not yet withdrawn gets one reversal journal
 * (`reversal-journals.ts`), through the change runner (`reversal-change.ts`): in one
 * transaction with the request's record, its audit entry and its event. A journal is withdrawn
 * at most once, whoever asks and however many instances share the store. A dry run answers the
 * same counts and writes nothing. An idempotency key makes a retry of the same request answer
 * the first answer again. A request that reverses nothing (every selected
 * journal reversed already, or a reversal journal itself) records nothing either: no reversal,
 * no audit entry, no event; its answer gives the counts only. An explicit posting date in a
 * closed or locked period of any selected journal's node and accounting configuration is
 * refused, naming the period, its state and the node; it is never moved to an open day.
 */
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { requestDigest } from '../../lib/idempotency.js';
import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import type { AuditActor } from '../audit/store.js';
import { BindingMoved, type ChangeRunner, type Outcome } from '../changes/runner.js';
import { revisionMovedDetail } from '../configuration/bound-changes.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import { parseIsoDate } from './dates.js';
import { nodeOpenPeriods } from './node-business-date.js';
import type { PreparedAccountingRevision } from './prepare.js';
import {
  NothingNew,
  PreparedUnderOldStates,
  type ReversalChangeInput,
  type ReversalChangeTables,
  type ReversalRequest,
  type ReversalView,
  reversalChange,
} from './reversal-change.js';
import { type ClosedPeriodOfDay, closedPeriodOf } from './reversal-journals.js';
import {
  type OpenWindowOf,
  REVERSAL_IDS_LISTED_MAX,
  type ReversalCounts,
  type ReversalKey,
  type ReversalStore,
  type StoredReversal,
} from './reversal-store.js';

export type { ReversalRequest, ReversalView } from './reversal-change.js';

export { REVERSAL_IDS_LISTED_MAX, REVERSAL_JOURNALS_PER_REQUEST_MAX } from './reversal-store.js';

/** Journal ids a `journalIds` selection may name. */
export const REVERSAL_JOURNAL_IDS_MAX = 1000;
/** The longest reason. */
export const REVERSAL_REASON_LENGTH_MAX = 500;
/** Attempts of a request whose configuration changed while it was prepared. */
const STALE_CONFIGURATION_ATTEMPTS_MAX = 3;

/**
 * What a request came to: `stored`, the reversal, and whether it is the replay of an earlier
 * answer; `nothing-new`, no selected journal needed a reversal journal (each was reversed
 * already, or is a reversal journal itself), so nothing was written and no reversal recorded:
 * the counts say why.
 */
export type ReversalAnswer =
  | { kind: 'stored'; reversal: ReversalView; replayed: boolean }
  | { kind: 'nothing-new'; counts: ReversalCounts };

/** The open windows a reversal is prepared with, and the versions of what they were read from. */
type Windows = Pick<ReversalChangeInput, 'revision' | 'periodsVersion' | 'openWindowOf'>;

/**
 * The checks a schema cannot say, and those of a request that reaches the service without one
 * (an administration form). Errors: `validation-failed` naming the member.
 */
function checkRequest(request: ReversalRequest): void {
  const { selection } = request;
  if (request.postingDate !== undefined && parseIsoDate(request.postingDate) === undefined)
    throw new AppError('validation-failed', `postingDate ${request.postingDate} is not a date`, {
      errors: [{ path: '/postingDate', message: 'must be a date YYYY-MM-DD' }],
    });
  if ('from' in selection && selection.from > selection.to)
    throw new AppError('validation-failed', 'the selection must end on or after the day it starts', {
      errors: [{ path: '/selection/to', message: 'must be on or after from' }],
    });
  if (request.reason.trim() === '')
    throw new AppError('validation-failed', 'a reason is required', {
      errors: [{ path: '/reason', message: 'must not be blank' }],
    });
}

/** How a refusal names the state of a period. */
function stateText(closed: ClosedPeriodOfDay): string {
  if (closed.state === 'locked') return 'locked';
  return closed.byHand ? 'closed by hand' : 'closed by the calendar';
}

/**
 * The refusal of a posting date in the closed or locked period `closed` of `node` and
 * `accountingConfig`: the period (`YYYY-MM`), its state and the node are named, and so is the
 * first open period after it, a date the request could ask for instead.
 */
function postingDateClosed(
  postingDate: string,
  closed: ClosedPeriodOfDay,
  node: Readonly<Record<string, string>>,
  accountingConfig: string,
): AppError {
  const where = `period ${closed.period} of node ${JSON.stringify(node)} and accounting configuration ${accountingConfig}`;
  return new AppError(
    'posting-date-closed',
    `postingDate ${postingDate} is in ${where}, which is ${stateText(closed)}: no reversal is dated in it; the first open period after it starts ${closed.firstOpenDay}`,
    {
      errors: [
        {
          path: '/postingDate',
          message: `must be in an open period: ${where} is ${stateText(closed)}; the first open period after it starts ${closed.firstOpenDay}`,
        },
      ],
    },
  );
}

/**
 * The refusal of an approval of a reversal that reverses no journal: every selected journal is
 * reversed already (or is a reversal journal), so there is nothing to approve or to record.
 */
function nothingNewToApprove(): AppError {
  return new AppError(
    'nothing-to-reverse',
    'every selected journal is reversed already or is itself a reversal journal: there is nothing to reverse',
  );
}

/** Reversals by selection (see the header). */
export class ReversalService<T extends PreparedAccountingRevision> {
  readonly #store: ReversalStore;
  readonly #runner: ChangeRunner<ReversalChangeTables>;
  readonly #snapshots: ConfigurationSnapshots<T>;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly #businessDatePinned: string | undefined;

  constructor(
    store: ReversalStore,
    runner: ChangeRunner<ReversalChangeTables>,
    snapshots: ConfigurationSnapshots<T>,
    clock: Clock,
    options: { newId: () => string; businessDatePinned: string | undefined },
  ) {
    this.#store = store;
    this.#runner = runner;
    this.#snapshots = snapshots;
    this.#clock = clock;
    this.#newId = options.newId;
    this.#businessDatePinned = options.businessDatePinned;
  }

  /**
   * The open windows of the current configuration and period states at `now`, worked out once per
   * node and basis; the change refuses to run under states the store no longer holds. With a
   * `postingDate`, the window of a node and accounting configuration whose period holding that
   * date is closed or locked is refused instead (`posting-date-closed`, naming the period, its
   * state and the node): the change asks for the window of every selected journal before it
   * reverses any, so the refusal does not depend on which journals were reversed already.
   */
  async #windows(now: Date, postingDate: string | undefined): Promise<Windows> {
    const { prepared } = await this.#snapshots.current();
    const periods = await this.#store.periodStates();
    const clock = {
      now,
      ...(this.#businessDatePinned === undefined ? {} : { businessDatePinned: this.#businessDatePinned }),
    };
    const memo = new Map<string, ReturnType<OpenWindowOf>>();
    const openWindowOf: OpenWindowOf = (node, accountingConfig) => {
      const key = JSON.stringify([node, accountingConfig]);
      if (memo.has(key)) return memo.get(key);
      const open = nodeOpenPeriods(prepared.accounting, node, accountingConfig, clock, periods);
      const window =
        open === undefined
          ? undefined
          : {
              businessDate: open.businessDate,
              earliestOpenFirstDay: open.earliestOpenFirstDay,
              manual: open.manual,
            };
      if (postingDate !== undefined && window !== undefined) {
        const closed = closedPeriodOf(postingDate, window);
        if (closed !== undefined) throw postingDateClosed(postingDate, closed, node, accountingConfig);
      }
      memo.set(key, window);
      return window;
    };
    return { revision: prepared.revision, periodsVersion: periods.version, openWindowOf };
  }

  /**
   * Runs the reversal change for `request` as `actor`, prepared again while the configuration or
   * the period states move under it; `bound`, for an approved request, is checked before each
   * attempt. Errors: those of the change, and `conflict` when the states kept moving.
   */
  async #run(
    request: ReversalRequest,
    options: { actor: AuditActor; idempotencyKey?: string | undefined; approvalRequestId?: string },
    bound?: { revision: number; counts: ReversalCounts },
  ): Promise<Outcome<ReversalView>> {
    for (let attempt = 1; ; attempt += 1) {
      const windows = await this.#windows(this.#clock.now(), request.postingDate);
      if (bound !== undefined && windows.revision !== bound.revision)
        throw new BindingMoved(revisionMovedDetail(bound.revision, windows.revision));
      const input = {
        request,
        reversalId: this.#newId(),
        newId: this.#newId,
        ...windows,
        boundCounts: bound?.counts,
      };
      try {
        return await this.#runner.run(reversalChange, input, options);
      } catch (error) {
        if (!(error instanceof PreparedUnderOldStates)) throw error;
        if (attempt >= STALE_CONFIGURATION_ATTEMPTS_MAX)
          throw new AppError(
            'conflict',
            'the configuration or the period states kept changing while the reversal was prepared',
          );
      }
    }
  }

  /**
   * Reverses the journals `request` selects, as `actor`, all or nothing. With an idempotency
   * key, a repeat of an earlier request of the same client answers its first answer again, and
   * writes nothing. When no selected journal needs a reversal journal the answer is
   * `nothing-new` with the counts, and nothing is written: no reversal, no audit entry, no event,
   * and the idempotency key stays unused. Errors: `validation-failed` (a range that ends before
   * it starts, a blank reason, a posting date that is not a date), `nothing-to-reverse` (the
   * selection matched no journal), `reversal-too-large`, `posting-date-closed` (the posting date
   * is in a closed or locked period of a selected journal's node, whether that journal is
   * reversed already or not, or before the core date of a journal it would reverse),
   * `idempotency-key-reused`.
   */
  async reverse(
    request: ReversalRequest,
    actor: AuditActor,
    idempotencyKey: string | undefined,
  ): Promise<ReversalAnswer> {
    checkRequest(request);
    // A second attempt only under a key: the first may have found nothing new because a
    // concurrent request under the same key reversed it all, whose answer is this one's.
    for (let attempt = 1; ; attempt += 1) {
      try {
        const { answer, replayed } = await this.#run(request, { actor, idempotencyKey });
        return { kind: 'stored', reversal: answer, replayed };
      } catch (error) {
        if (!(error instanceof NothingNew)) throw error;
        if (idempotencyKey === undefined || attempt >= 2)
          return { kind: 'nothing-new', counts: error.counts };
      }
    }
  }

  /** What `reverse` would do now; writes nothing. Errors as `reverse`'s, but the key's. */
  async dryRun(request: ReversalRequest): Promise<ReversalCounts> {
    checkRequest(request);
    const { openWindowOf } = await this.#windows(this.#clock.now(), request.postingDate);
    return this.#store.dryRun({
      selection: request.selection,
      postingDate: request.postingDate,
      openWindowOf,
    });
  }

  /**
   * What an approver of a reversal is shown (docs/domain/approvals.md): the dry run, the
   * configuration revision it was worked out under and the request's digest. Writes nothing.
   * Errors as {@link dryRun}'s, and `nothing-to-reverse` when every selected journal is reversed
   * already: there is nothing to approve.
   */
  async review(
    request: ReversalRequest,
  ): Promise<{ revision: number; counts: ReversalCounts; digest: string }> {
    checkRequest(request);
    const { revision, openWindowOf } = await this.#windows(this.#clock.now(), request.postingDate);
    const counts = await this.#store.dryRun({
      selection: request.selection,
      postingDate: request.postingDate,
      openWindowOf,
    });
    // A request to approve must change something: without approval such a request records nothing.
    if (counts.journals === 0) throw nothingNewToApprove();
    return { revision, counts, digest: requestDigest(request) };
  }

  /**
   * The reversal of an approved request, as `actor` (the approver): the same change as
   * `reverse`, made only while the configuration is at `bound.revision` and the reversal comes
   * to exactly `bound.counts` (checked in its transaction, which marks the request `approved`),
   * else nothing is written and the answer is `moved`, saying what moved. Period states changed
   * meanwhile (a close, a lock, a reopen) do not move what was approved: the reversal is
   * prepared again under them. Errors as {@link reverse}'s, but the key's; and
   * `nothing-to-reverse` when nothing it selects needs a reversal journal, as was the case when
   * it was approved (an approved reversal of nothing makes no empty reversal).
   */
  async reverseBound(
    request: ReversalRequest,
    actor: AuditActor,
    bound: { revision: number; counts: ReversalCounts; approvalRequestId: string },
  ): Promise<{ kind: 'done'; reversal: ReversalView } | { kind: 'moved'; detail: string }> {
    checkRequest(request);
    try {
      const { revision, counts, approvalRequestId } = bound;
      const { answer } = await this.#run(request, { actor, approvalRequestId }, { revision, counts });
      return { kind: 'done', reversal: answer };
    } catch (error) {
      if (error instanceof BindingMoved) return { kind: 'moved', detail: error.detail };
      if (error instanceof NothingNew) throw nothingNewToApprove();
      throw error;
    }
  }

  /** One reversal with its first reversal journal ids. Errors: `not-found`. */
  async get(reversalId: string): Promise<ReversalView> {
    const found = await this.#store.find(reversalId);
    if (found === undefined) throw new AppError('not-found', `no reversal ${reversalId}`);
    return {
      ...found,
      reversalJournalIds: await this.#store.reversalJournalIds(reversalId, REVERSAL_IDS_LISTED_MAX),
    };
  }

  /** A page of reversals, newest first; with page paging, their number too. */
  async list(
    start: PageStart<ReversalKey>,
    limit: number,
  ): Promise<KeyedPage<StoredReversal, ReversalKey> & { total?: number }> {
    const page = await this.#store.list(start, limit);
    return 'page' in start ? { ...page, total: await this.#store.count() } : page;
  }
}
