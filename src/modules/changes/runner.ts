/**
 * The change runner: the one function every state-changing operation that has moved onto it runs
 * through (docs/architecture.md, Change path). A change states what it changes, in the tables of
 * one transaction, and which typed refusals it can answer (by throwing them); the runner owns
 * the rest:
 *
 * - the transaction: all or nothing, the audit entry written last, in it;
 * - the `Idempotency-Key`: a repeat of a change made under the client's key answers the first
 *   answer again (`replayed`), another request under it is 422 `idempotency-key-reused`, and two
 *   at once make one change (the second is rolled back and answered with the first's answer);
 *   a refused change keeps nothing, so its key stays free;
 * - the dry run: the same code in the same transaction, rolled back, answering what the change
 *   would answer; it writes no audit entry, keeps no answer and has no after-commit effect;
 * - the audit entry, with the actor and the details the change gives; none when the change
 *   says it changed nothing;
 * - the events it announces, recorded in the outbox after the audit entry, in the same
 *   transaction: an event exists exactly when its change was committed;
 * - what follows a commit (a deliverer woken, a cache forgotten), run once committed only;
 * - the approval mark: a change run for an approved request (docs/domain/approvals.md) marks it
 *   `approved` in its own transaction, and changes nothing when it is no longer `processing`; a
 *   change whose approval was bound to data that moved since refuses with {@link BindingMoved}.
 */
import type { Clock } from '../../lib/clock.js';
import { assertSameRequest, requestDigest } from '../../lib/idempotency.js';
import { invariant } from '../../lib/invariant.js';
import type { AuditAction, AuditActor, AuditConfigurationFields, AuditSummary } from '../audit/store.js';
import type { ChangeEvent, ChangeStore, ChangeTransaction } from './store.js';

/** When and by whom a change is made. */
export interface ChangeContext {
  at: string;
  actor: AuditActor;
}

/** What a change's audit entry says besides its action, actor and moment. */
export interface ChangeAudit {
  /** What the change did (ids, counts, the settings given); never a secret. Unset: none. */
  details?: Record<string, unknown>;
  /** Pictures of the changed thing before and after, where it has them. */
  before?: AuditSummary | null;
  after?: AuditSummary | null;
  /** The configuration revision the entry names; unset: the one stored now. */
  configuration?: AuditConfigurationFields;
}

/** What a change did: its answer, its audit entry, its events, and what follows its commit. */
export interface Applied<Answer> {
  answer: Answer;
  /** The audit entry; null when nothing changed, and nothing is audited. */
  audit: ChangeAudit | null;
  /** The events it announces; unset: none. */
  events?: readonly ChangeEvent[];
  /** Run once the change is committed; never after a dry run or a refusal. */
  afterCommit?: () => void;
}

/** How an answer is kept for the repeats of its key when it may not be kept as it is. */
export interface AnswerKeeping<Answer, Tables extends object = object> {
  /** What is kept (JSON-able); a secret in an answer is kept sealed, never in clear. */
  toKept(answer: Answer): unknown;
  /** The answer again, from what was kept, read in the repeat's transaction `tx` where it needs more. */
  fromKept(kept: unknown, tx: Tables): Answer | Promise<Answer>;
}

/** One state-changing operation on the tables `Tables`, as the runner runs it. */
export interface Change<Input, Answer, Tables extends object> {
  /** Its audit action, which also names it where its answers are kept. */
  readonly action: AuditAction;
  /** Makes the change in `tx`; throws an `AppError` to refuse it, which changes nothing. */
  apply(tx: Tables & ChangeTransaction, input: Input, context: ChangeContext): Promise<Applied<Answer>>;
  /** Unset: answers are kept as they are. */
  readonly keeping?: AnswerKeeping<Answer, Tables>;
  /**
   * What tells this request from another under one key, when not the whole input: an input that
   * carries a secret or a value made for this attempt (a password's salted hash, a secret drawn
   * now) names the request without it, so that no digest of a secret is kept and a repeat is
   * recognised.
   */
  requestOf?(input: Input): unknown;
}

/** How a caller asks for a change. */
export interface ChangeOptions {
  actor: AuditActor;
  /** The caller's `Idempotency-Key`, scoped to its client. */
  idempotencyKey?: string | undefined;
  /** Run and roll back, answering what the change would answer. */
  dryRun?: boolean | undefined;
  /** The approved request this change runs for, marked `approved` in the change's transaction. */
  approvalRequestId?: string | undefined;
}

/**
 * Thrown by a change run for an approved request when the data its approval was bound to is no
 * longer what the approver saw (`detail` says how it moved): nothing is changed, and the request
 * becomes invalid.
 */
export class BindingMoved extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = 'BindingMoved';
  }
}

/** What a change answered, and how. */
export interface Outcome<Answer> {
  answer: Answer;
  /** The first answer of the key, given again: nothing was changed now. */
  replayed: boolean;
  /** What the change would answer: nothing was changed. */
  dryRun: boolean;
}

/** Thrown inside the transaction to roll a dry run back with its answer. */
class RolledBack<Answer> {
  constructor(readonly answer: Answer) {}
}

/** Thrown inside the transaction when a concurrent change kept its answer under the same key first. */
class KeyTakenMeanwhile {}

/** The transaction's result: an answer kept before, or a change made now. */
type Ran<Answer> = { replayed: Answer } | { applied: Applied<Answer> };

/** The client a caller's keys belong to: its credential's client id, else the user. */
function keyScopeOf(actor: AuditActor): string {
  return actor.clientId ?? actor.user;
}

/** The runner of the changes on `Tables`, the tables of every feature that has moved onto it. */
export class ChangeRunner<Tables extends object> {
  readonly #store: ChangeStore<Tables>;
  readonly #clock: Clock;

  constructor(store: ChangeStore<Tables>, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /** Runs `change` with `input` under the rules above. */
  async run<Input, Answer>(
    change: Change<Input, Answer, Tables>,
    input: Input,
    options: ChangeOptions,
  ): Promise<Outcome<Answer>> {
    const dryRun = options.dryRun === true;
    // A dry run neither reads nor keeps a key: its answer must never stand for the real run's.
    const key = dryRun ? undefined : options.idempotencyKey;
    const digest = requestDigest({
      action: change.action,
      request: change.requestOf === undefined ? input : change.requestOf(input),
    });
    // A second attempt is made only when a concurrent change under the same key won; it then
    // finds that change's answer.
    for (let attempt = 1; ; attempt += 1) {
      try {
        const ran = await this.#store.transaction((tx) =>
          this.#inTransaction(tx, change, input, options, { key, digest, dryRun }),
        );
        if ('replayed' in ran) return { answer: ran.replayed, replayed: true, dryRun: false };
        ran.applied.afterCommit?.();
        return { answer: ran.applied.answer, replayed: false, dryRun: false };
      } catch (thrown) {
        if (thrown instanceof RolledBack)
          return { answer: thrown.answer as Answer, replayed: false, dryRun: true };
        if (!(thrown instanceof KeyTakenMeanwhile)) throw thrown;
        invariant(
          attempt < 2,
          'a key taken meanwhile holds an answer on the next attempt',
          () => `${change.action}, attempt ${attempt}`,
        );
      }
    }
  }

  async #inTransaction<Input, Answer>(
    tx: Tables & ChangeTransaction,
    change: Change<Input, Answer, Tables>,
    input: Input,
    options: ChangeOptions,
    request: { key: string | undefined; digest: string; dryRun: boolean },
  ): Promise<Ran<Answer>> {
    const { actor, approvalRequestId } = options;
    const { key, digest, dryRun } = request;
    const scope = keyScopeOf(actor);
    if (key !== undefined) {
      const kept = await tx.keptAnswer(scope, key);
      if (kept !== undefined) {
        assertSameRequest(key, kept.digest, digest, 'this client', `${kept.action} at ${kept.at}`);
        const stored: unknown = JSON.parse(kept.answer);
        return {
          replayed:
            change.keeping === undefined ? (stored as Answer) : await change.keeping.fromKept(stored, tx),
        };
      }
    }
    const at = this.#clock.now().toISOString();
    const applied = await change.apply(tx, input, { at, actor });
    if (dryRun) throw new RolledBack(applied.answer);
    if (approvalRequestId !== undefined) await tx.markApprovalRan(approvalRequestId, at);
    if (key !== undefined) {
      const answer = JSON.stringify(
        change.keeping === undefined ? applied.answer : change.keeping.toKept(applied.answer),
      );
      if (!(await tx.keepAnswer(scope, key, { action: change.action, digest, answer, at })))
        throw new KeyTakenMeanwhile();
    }
    if (applied.audit !== null) await tx.audit({ at, action: change.action, actor, ...applied.audit });
    for (const event of applied.events ?? []) await tx.announce(event, at);
    return { applied };
  }
}
