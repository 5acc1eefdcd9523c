import type { Clock } from '../../lib/clock.js';
import { AppError, PROBLEMS, type ProblemCode } from '../../lib/errors.js';
import { assertSameRequest, requestDigest } from '../../lib/idempotency.js';
import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import { actorOfCaller } from '../audit/entry.js';
import type { ChangeOptions, ChangeRunner, Outcome } from '../changes/runner.js';
import {
  type ApprovalCaller,
  type ApprovalChangeTables,
  approvalDecisions,
  type DecisionInput,
  notPending,
  samePerson,
} from './changes.js';
import { APPROVAL_PENDING_REQUESTS_MAX } from './inputs.js';
import type { ApprovalExecution, ApprovalKindName, ApprovalKinds } from './kinds.js';
import type { ApprovalKey, ApprovalStatus, ApprovalStore, StoredApprovalRequest } from './store.js';

export type { ApprovalCaller } from './changes.js';

/**
 * How long an approved action may run before its request, still `processing`, is taken for
 * interrupted (its instance stopped) and recovered as `failed`. Far longer than any action
 * takes, a wipe of millions of rows included; an action still running then cannot commit any
 * more (its transaction marks the request `approved` only while it is `processing`).
 */
export const APPROVAL_RUN_LEASE_MS = 30 * 60 * 1000;

/** A problem of an action as a request keeps it. */
function problemOf(error: unknown): { code: string; detail: string } {
  if (error instanceof AppError) return { code: error.code, detail: error.message };
  return { code: 'internal', detail: 'the action failed unexpectedly; the server log has the reason' };
}

/** The refusal of an approval whose bound data moved: nothing changed, the request is `invalid`. */
function invalidated(requestId: string, detail: string): AppError {
  return new AppError(
    'approval-invalidated',
    `nothing was changed and the request is invalid now: ${detail}; make the request again to have it reviewed anew`,
    { requestId, requestStatus: 'invalid' },
  );
}

/**
 * The first answer of an approval, given again from its request as it is now: a request that
 * became `invalid` or `failed` was answered with its problem, which is thrown again (the code and
 * detail kept with it); any other is answered as it is.
 */
function replayOf(claim: Outcome<StoredApprovalRequest>): Outcome<StoredApprovalRequest> {
  const { status, problem, requestId } = claim.answer;
  if (problem === null) return claim;
  if (status === 'invalid') throw invalidated(requestId, problem.detail);
  if (status === 'failed' && Object.hasOwn(PROBLEMS, problem.code))
    throw new AppError(problem.code as ProblemCode, problem.detail);
  return claim;
}

/**
 * Four-eyes approval (docs/domain/approvals.md): when the process settings require approval for
 * a kind of action (APPROVAL_REQUIRED), that action becomes a request instead of running; a
 * second user with `approvals:approve` approves (it runs, as the approver's action on behalf of
 * the maker) or rejects it, and its maker may cancel it. A request binds to the document hash,
 * revision and dry run its kind's `review` gave when it was made; the approved action runs only
 * while the stored data is still what that binding says, else the request becomes `invalid` and
 * nothing changes. Every change of status is a conditional update of the store, so however many
 * instances share it, a request is decided once and runs at most once.
 */
export class ApprovalService {
  readonly #store: ApprovalStore;
  readonly #runner: ChangeRunner<ApprovalChangeTables>;
  readonly #kinds: ApprovalKinds;
  readonly #required: ReadonlySet<ApprovalKindName>;
  readonly #clock: Clock;
  readonly #newId: () => string;

  constructor(
    store: ApprovalStore,
    runner: ChangeRunner<ApprovalChangeTables>,
    kinds: ApprovalKinds,
    required: readonly ApprovalKindName[],
    clock: Clock,
    newId: () => string,
  ) {
    this.#store = store;
    this.#runner = runner;
    this.#kinds = kinds;
    this.#required = new Set(required);
    this.#clock = clock;
    this.#newId = newId;
  }

  /** Whether actions of `kind` wait for approval (off unless the settings name the kind). */
  isRequired(kind: ApprovalKindName): boolean {
    return this.#required.has(kind);
  }

  /** The kinds that wait for approval, in registry order. */
  required(): ApprovalKindName[] {
    return [...this.#kinds.keys()].filter((kind) => this.#required.has(kind));
  }

  #kind(name: ApprovalKindName) {
    const kind = this.#kinds.get(name);
    if (kind === undefined) throw new Error(`no approval kind ${name} is registered`);
    return kind;
  }

  /**
   * Makes a request of `kind` for `payload` (what the kind executes), after its review: the
   * action's own request errors are thrown here, and nothing is stored. With an idempotency key,
   * a repeat of the same client with the same kind and payload answers its first request
   * (`replayed`); with another kind or payload it is refused (`idempotency-key-reused`), as the
   * action itself refuses it when approval is off.
   * Without one, the same action asked again by the same user while its request waits (the same
   * payload, reviewed to the same document and revision: a `PUT` retried after its answer was
   * lost, a form sent twice) answers that request too (`replayed`): one action, one request.
   * Errors: `idempotency-key-reused`; the kind's review errors; `conflict` when
   * APPROVAL_PENDING_REQUESTS_MAX requests already wait.
   */
  async request(
    kind: ApprovalKindName,
    payload: unknown,
    maker: ApprovalCaller,
    idempotencyKey: string | undefined,
  ): Promise<{ request: StoredApprovalRequest; replayed: boolean }> {
    if (idempotencyKey !== undefined) {
      const earlier = await this.#store.findByIdempotencyKey(maker.clientId, idempotencyKey);
      if (earlier !== undefined)
        return { request: await this.#sameRequest(earlier, kind, payload, idempotencyKey), replayed: true };
    }
    const review = await this.#kind(kind).review(payload);
    const same = (await this.#store.findPendingSame(kind, review, payload)).find((pending) =>
      samePerson(pending.makerEmail, maker.email),
    );
    if (same !== undefined) return { request: same, replayed: true };
    if ((await this.#store.count('pending-approval')) >= APPROVAL_PENDING_REQUESTS_MAX)
      throw new AppError(
        'conflict',
        `${APPROVAL_PENDING_REQUESTS_MAX} requests already wait for approval: decide some before making more`,
      );
    const { kind: stored, request } = await this.#store.create({
      ...review,
      requestId: this.#newId(),
      kind,
      makerEmail: maker.email,
      makerClientId: maker.clientId,
      at: this.#clock.now().toISOString(),
      idempotencyKey,
      payload,
    });
    // Another request under the same key was stored meanwhile (a concurrent repeat).
    if (stored === 'replay')
      return { request: await this.#sameRequest(request, kind, payload, idempotencyKey), replayed: true };
    return { request, replayed: false };
  }

  /**
   * `earlier`, stored under the caller's idempotency key, when it asked for the same action: the
   * same kind and the same payload, compared as canonical JSON. Errors: `idempotency-key-reused`.
   */
  async #sameRequest(
    earlier: StoredApprovalRequest,
    kind: ApprovalKindName,
    payload: unknown,
    idempotencyKey: string | undefined,
  ): Promise<StoredApprovalRequest> {
    assertSameRequest(
      idempotencyKey ?? '',
      requestDigest({ kind: earlier.kind, payload: await this.#store.payload(earlier.requestId) }),
      requestDigest({ kind, payload }),
      'this client',
      `approval request ${earlier.requestId}, ${earlier.kind}`,
    );
    return earlier;
  }

  /** One request. Errors: `not-found`. */
  async get(requestId: string): Promise<StoredApprovalRequest> {
    const found = await this.#store.find(requestId);
    if (found === undefined) throw new AppError('not-found', `no approval request ${requestId}`);
    return found;
  }

  /** A page of requests, newest first, of one status or all; with page paging, their number too. */
  async list(
    status: ApprovalStatus | undefined,
    start: PageStart<ApprovalKey>,
    limit: number,
  ): Promise<KeyedPage<StoredApprovalRequest, ApprovalKey> & { total?: number }> {
    const page = await this.#store.list(status, start, limit);
    return 'page' in start ? { ...page, total: await this.#store.count(status) } : page;
  }

  /**
   * Approves a pending request and runs it, as `approver`'s action on behalf of its maker. The
   * request is claimed through the change runner (`approvalDecisions.approve`): it moves to
   * `processing` by a conditional update, so only one approval of it, on any instance, runs it;
   * then to `approved` in the action's own transaction (its outcome is added after), to `invalid`
   * when the data it would change moved since it was made (and nothing changed), or to `failed`
   * with the action's problem. An instance that stops in between leaves it `processing` until
   * `recoverInterrupted`. A dry run checks the claim only, and runs nothing; a repeat of an
   * `Idempotency-Key` answers the first answer again from the request as it is (`replayOf`). Errors: `not-found`; `approval-not-pending`
   * (decided already, or another approval won); `approval-by-maker`; `approval-invalidated` (the
   * request is now `invalid`); the action's own errors (the request is now `failed`);
   * `idempotency-key-reused`.
   */
  async approve(
    requestId: string,
    approver: ApprovalCaller,
    options: Omit<ChangeOptions, 'actor'> = {},
  ): Promise<Outcome<StoredApprovalRequest>> {
    const claim = await this.#decide('approve', { requestId, decider: approver }, options);
    if (claim.dryRun) return claim;
    if (claim.replayed) return replayOf(claim);
    const found = claim.answer;
    const payload = await this.#store.payload(requestId);
    let execution: ApprovalExecution;
    try {
      execution = await this.#kind(found.kind).execute(payload, found, {
        approverEmail: approver.email,
        approverClientId: approver.clientId,
        makerEmail: found.makerEmail,
        requestId,
      });
    } catch (error) {
      // Recovered as interrupted while it ran (this instance was taken for stopped): undone.
      if (error instanceof AppError && error.code === 'approval-not-pending')
        throw notPending(await this.get(requestId));
      await this.#store.finish(requestId, {
        to: 'failed',
        at: this.#clock.now().toISOString(),
        problem: problemOf(error),
      });
      throw error;
    }
    if (execution.kind === 'moved') {
      await this.#store.finish(requestId, {
        to: 'invalid',
        at: this.#clock.now().toISOString(),
        problem: { code: 'approval-invalidated', detail: execution.detail },
      });
      throw invalidated(requestId, execution.detail);
    }
    const approved = await this.#store.finish(requestId, {
      to: 'approved',
      at: this.#clock.now().toISOString(),
      outcome: execution.outcome,
    });
    return { answer: approved, replayed: false, dryRun: false };
  }

  /**
   * Recovers the requests whose instance stopped while their approved action ran: those still
   * `processing` APPROVAL_RUN_LEASE_MS after their approval become `failed`
   * (`approval-interrupted`; nothing was changed, since an action that commits makes its request
   * `approved` in its own transaction). Safe on every instance at once. Answers how many.
   */
  async recoverInterrupted(): Promise<number> {
    const now = this.#clock.now().getTime();
    const recovered = await this.#store.recoverInterrupted(
      new Date(now - APPROVAL_RUN_LEASE_MS).toISOString(),
      new Date(now).toISOString(),
    );
    return recovered.length;
  }

  /**
   * Rejects a pending request with a reason, through the change runner (a dry run, an
   * `Idempotency-Key`); it never runs. Errors: see `approvalDecisions.reject`.
   */
  reject(
    requestId: string,
    approver: ApprovalCaller,
    reason: string,
    options: Omit<ChangeOptions, 'actor'> = {},
  ): Promise<Outcome<StoredApprovalRequest>> {
    return this.#decide('reject', { requestId, decider: approver, reason }, options);
  }

  /**
   * Cancels a pending request; only its maker may, through any of their credentials. Through
   * the change runner, as `reject`. Errors: see `approvalDecisions.cancel`.
   */
  cancel(
    requestId: string,
    maker: ApprovalCaller,
    options: Omit<ChangeOptions, 'actor'> = {},
  ): Promise<Outcome<StoredApprovalRequest>> {
    return this.#decide('cancel', { requestId, decider: maker }, options);
  }

  /** Runs the decision `name` for its decider, who is the actor of its audit entry. */
  #decide(
    name: keyof typeof approvalDecisions,
    input: DecisionInput,
    options: Omit<ChangeOptions, 'actor'>,
  ): Promise<Outcome<StoredApprovalRequest>> {
    const { email, clientId } = input.decider;
    return this.#runner.run(approvalDecisions[name], input, {
      ...options,
      actor: actorOfCaller(email, clientId),
    });
  }
}
