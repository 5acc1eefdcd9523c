/**
 * The one writer of the audit entries of webhooks (subscriptions, secrets, redeliveries), so that
 * they reach `audit_log` through a single function that can follow the audit log wherever it
 * goes. Runs inside the caller's transaction; the entry names no secret.
 */
import type { Transaction } from 'kysely';
import type { EventAuditEntry } from '../../modules/events/store.js';
import { storedRevision } from '../configuration-store.js';
import type { Database } from '../schema.js';

/** Appends `entry` to the audit log in `trx`, under the configuration revision stored now. */
export async function writeWebhookAudit(trx: Transaction<Database>, entry: EventAuditEntry): Promise<void> {
  await trx
    .insertInto('audit_log')
    .values({
      at: entry.at,
      actor: entry.actor,
      action: entry.action,
      version: null,
      revision: await storedRevision(trx),
      sections: '{}',
      deleted: null,
      details: JSON.stringify(entry.details),
    })
    .execute();
}
