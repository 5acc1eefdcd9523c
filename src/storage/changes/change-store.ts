/**
 * The change runner's store (`modules/changes/store.ts`): one transaction, with the tables of the
 * features that change through the runner, the answers kept under an `Idempotency-Key`
 * (`change_answers`), the audit trail's one writer and the outbox. A transaction that meets a
 * deadlock, a serialization failure or a busy store is run again whole, a few times: every
 * attempt starts from nothing, since a failed one was rolled back.
 */
import type { Transaction } from 'kysely';
import { invariant } from '../../lib/invariant.js';
import type {
  ReprocessRunTables,
  ReprocessScheduleTables,
  ReversalTables,
} from '../../modules/accounting/store.js';
import type { ApprovalTables } from '../../modules/approvals/store.js';
import type { AccessTables } from '../../modules/auth/store.js';
import type { ChangeStore, ChangeTransaction } from '../../modules/changes/store.js';
import type { ConfigurationTables } from '../../modules/configuration/store.js';
import {
  EVENT_TYPES,
  type EventData,
  type EventType,
  type WebhookTables,
} from '../../modules/events/store.js';
import type { ExtractTables } from '../../modules/extracts/store.js';
import type { PeriodTables } from '../../modules/periods/store.js';
import { accessTablesIn } from '../access-tables.js';
import { reprocessRunTablesIn } from '../accounting/reprocess-runs.js';
import { reprocessScheduleTablesIn } from '../accounting/reprocess-schedule.js';
import { reversalTablesIn } from '../accounting/reversal-store.js';
import { approvalTablesIn, markApprovalRan } from '../approval-store.js';
import { appendAudit } from '../audit-trail.js';
import { type BulkInsert, createBulkInsert } from '../bulk-insert.js';
import { configurationTablesIn } from '../configuration-store.js';
import { isRetryableStoreError } from '../errors.js';
import { recordEvent } from '../events/outbox.js';
import { webhookTablesIn } from '../events/webhook-tables.js';
import { extractTablesIn } from '../extracts/extract-tables.js';
import { periodTablesIn } from '../period-store.js';
import type { Database } from '../schema.js';
import type { DialectAdapter, Store } from '../store.js';

/** The tables of every feature whose changes run through the runner. */
export interface ChangeTables {
  webhooks: WebhookTables;
  extracts: ExtractTables;
  reprocessSchedule: ReprocessScheduleTables;
  reprocessRuns: ReprocessRunTables;
  access: AccessTables;
  periods: PeriodTables;
  approvals: ApprovalTables;
  reversals: ReversalTables;
  configuration: ConfigurationTables;
}

/** Attempts of a change that meets a deadlock, a serialization failure or a busy store. */
const CHANGE_ATTEMPTS_MAX = 3;

/** The change runner's store over `store`. */
export function createChangeStore(store: Store): ChangeStore<ChangeTables> {
  const { db, adapter } = store;
  const bulkInsert = createBulkInsert(store);
  return {
    async transaction(work) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await db.transaction().execute((trx) => work(changeTransactionIn(trx, adapter, bulkInsert)));
        } catch (error) {
          if (attempt >= CHANGE_ATTEMPTS_MAX || !isRetryableStoreError(error)) throw error;
        }
      }
    },
  };
}

/** Whether `type` names an event the outbox knows. */
function isEventType(type: string): type is EventType {
  return (EVENT_TYPES as readonly string[]).includes(type);
}

function changeTransactionIn(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  bulkInsert: BulkInsert,
): ChangeTables & ChangeTransaction {
  return {
    reversals: reversalTablesIn(trx, adapter, bulkInsert),
    configuration: configurationTablesIn(trx, adapter),
    webhooks: webhookTablesIn(trx, adapter),
    extracts: extractTablesIn(trx, adapter),
    reprocessSchedule: reprocessScheduleTablesIn(trx, adapter),
    reprocessRuns: reprocessRunTablesIn(trx, adapter),
    access: accessTablesIn(trx, adapter),
    periods: periodTablesIn(trx, adapter),
    approvals: approvalTablesIn(trx),

    async keptAnswer(scope, key) {
      const row = await trx
        .selectFrom('change_answers')
        .select(['action', 'digest', 'answer', 'created_at'])
        .where('client_id', '=', scope)
        .where('idempotency_key', '=', key)
        .executeTakeFirst();
      return row === undefined
        ? undefined
        : { action: row.action, digest: row.digest, answer: row.answer, at: row.created_at };
    },

    async keepAnswer(scope, key, kept) {
      // On PostgreSQL a concurrent insert of the same key makes this one wait for its commit
      // and then insert nothing.
      const inserted = await trx
        .insertInto('change_answers')
        .values({
          client_id: scope,
          idempotency_key: key,
          action: kept.action,
          digest: kept.digest,
          answer: kept.answer,
          created_at: kept.at,
        })
        .onConflict((oc) => oc.columns(['client_id', 'idempotency_key']).doNothing())
        .returning('client_id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    markApprovalRan: (requestId, at) => markApprovalRan(trx, requestId, at),

    async audit(entry) {
      await appendAudit(trx, adapter, entry);
    },

    async announce(event, at) {
      const { type } = event;
      invariant(isEventType(type), 'an announced event has a known type', () => type);
      // `changeEventOf` (modules/events/types.ts) fitted the data to its type.
      await recordEvent(trx, type, event.data as EventData[EventType], at);
    },
  };
}
