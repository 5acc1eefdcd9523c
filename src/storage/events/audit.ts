/**
 * The one writer of the audit entries of webhooks (subscriptions, secrets, redeliveries), so that
 * they reach `audit_log` through a single function that can follow the audit log wherever it
 * goes. Runs inside the caller's transaction; the entry names no secret.
 */
import type { Transaction } from 'kysely';
import type { EventAuditEntry } from '../../modules/events/store.js';
import { appendAudit } from '../audit-trail.js';
import type { Database } from '../schema.js';
import type { DialectAdapter } from '../store.js';

/** Appends `entry` to the audit trail in `trx`, under the configuration revision stored now. */
export async function writeWebhookAudit(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  entry: EventAuditEntry,
): Promise<void> {
  await appendAudit(trx, adapter, {
    at: entry.at,
    action: entry.action,
    actor: entry.actor,
    details: entry.details,
  });
}
