/**
 * The one writer of the audit entries of webhooks (subscriptions, secrets, redeliveries), so that
 * they reach `audit_log` through a single function that can follow the audit log wherever it
 * goes. Runs inside the caller's transaction; the entry names no secret.
 */
import type { Transaction } from 'kysely';
import type { EventAuditEntry } from '../../modules/events/store.js';
import { appendAudit } from '../audit-trail.js';
import type { Database } from '../schema.js';
import type { Dialect } from '../store.js';

/** Appends `entry` to the audit trail in `trx`, under the configuration revision stored now. */
export async function writeWebhookAudit(
  trx: Transaction<Database>,
  dialect: Dialect,
  entry: EventAuditEntry,
): Promise<void> {
  await appendAudit(trx, dialect, {
    at: entry.at,
    action: entry.action,
    actor: entry.actor,
    details: entry.details,
  });
}
