/**
 * The storage port of the change runner (`storage/changes/`): one transaction, and inside it the
 * tables of the features that change through the runner (each feature's port names its own, as
 * `WebhookTables`), the answers kept under an `Idempotency-Key`, and the audit trail. The tables
 * know rows, not rules: the runner (`runner.ts`) owns the rules every change keeps.
 */
import type { AuditConfigurationFields, AuditRecord } from '../audit/store.js';

/** The first answer of a change made under an `Idempotency-Key`, as kept for its repeats. */
export interface KeptAnswer {
  /** The change's action (`webhooks.subscription-create`). */
  action: string;
  /** The digest of the change's request (`lib/idempotency.ts`). */
  digest: string;
  /** The answer as the change keeps it (JSON). */
  answer: string;
  at: string;
}

/**
 * An event a change announces to the webhooks (docs/domain/events.md), made with
 * `changeEventOf` (`modules/events/types.ts`), which fits its data to its type.
 */
export interface ChangeEvent {
  readonly type: string;
  readonly data: object;
}

/** What every change's transaction holds besides the tables of its feature. */
export interface ChangeTransaction {
  /** The answer kept under `key` for the client `scope`, if any. */
  keptAnswer(scope: string, key: string): Promise<KeptAnswer | undefined>;
  /**
   * Keeps `kept` under `key` for `scope`; false when another change kept an answer under the same
   * key meanwhile (it committed first: this one must be rolled back and answered with that one).
   */
  keepAnswer(scope: string, key: string, kept: KeptAnswer): Promise<boolean>;
  /**
   * Marks the approval request a change runs for `approved`. Errors: `approval-not-pending` when
   * it is no longer `processing` (recovered as interrupted while the change ran).
   */
  markApprovalRan(requestId: string, at: string): Promise<void>;
  /** Appends the change's entry to the audit trail, last in the transaction. */
  audit(entry: AuditRecord & { at: string; configuration?: AuditConfigurationFields }): Promise<void>;
  /** Records `event`, occurred at `at`, in the outbox the webhook deliverer reads. */
  announce(event: ChangeEvent, at: string): Promise<void>;
}

/** The store of changes that touch `Tables` (`{ webhooks: WebhookTables }`, …). */
export interface ChangeStore<Tables extends object> {
  /** Runs `work` in one transaction, committed when it returns and rolled back when it throws. */
  transaction<R>(work: (tx: Tables & ChangeTransaction) => Promise<R>): Promise<R>;
}
