/**
 * The entries of the audit trail and the one hash that chains them (docs/adr/0026-audit-trail.md).
 * Pure: no I/O, so the writer in storage, the store's verification and the verification of an
 * exported file compute exactly the same hash of the same entry.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../lib/canonical-json.js';

/**
 * Every action the trail records. A new audited change adds its name here (the API documents
 * the list); names are `area.verb`, stable once published.
 */
export const AUDIT_ACTIONS = [
  'configuration.upload',
  'configuration.delete',
  'processing.reprocess',
  'processing.reprocess-schedule',
  'journals.reverse',
  'ingestions.close',
  'users.create',
  'users.update',
  'users.set-password',
  'credentials.create',
  'credentials.revoke',
  'auth.sign-in',
  'auth.sign-in-failures',
  'webhooks.subscription-create',
  'webhooks.subscription-update',
  'webhooks.subscription-pause',
  'webhooks.subscription-resume',
  'webhooks.subscription-delete',
  'webhooks.secret-create',
  'webhooks.secret-rotate',
  'webhooks.redeliver',
  'extracts.configuration-create',
  'extracts.configuration-update',
  'extracts.configuration-delete',
  'extracts.increment',
  'extracts.execution-start',
  'approval.requested',
  'approval.approved',
  'approval.rejected',
  'approval.canceled',
  'approval.invalidated',
  'approval.failed',
  'periods.close',
  'periods.lock',
  'periods.reopen',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The `prevHash` of the first entry of the trail: there is none before it. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * Who made a change: a user's e-mail and, when the change came through the API, the client id of
 * the credential that called (a change made in the administration interface has none: the
 * signed-in user made it); `system` with the `cause` for a change the service makes by itself
 * (the writer adds the cause to the entry's details); `cli:<os user>` for a command run on the
 * store itself.
 */
export interface AuditActor {
  user: string;
  clientId?: string | null;
  /** Why the service acted by itself; set by {@link systemActor} only. */
  cause?: string;
}

/**
 * The client id that stands for a user of the administration interface where an action needs
 * one (it scopes idempotency keys and is kept with approval requests and period changes): that
 * user has no credential there, only a sign-in.
 */
export function signedInClientIdOf(email: string): string {
  return `${SIGNED_IN_CLIENT_PREFIX}${email}`;
}

const SIGNED_IN_CLIENT_PREFIX = 'admin:';

/**
 * Who the trail names for a caller known by e-mail and client id: the user, with the client id of
 * the credential that called the API, or none for a user of the administration interface.
 */
export function actorOfCaller(email: string, clientId: string | null): AuditActor {
  return {
    user: email,
    clientId: clientId === null || clientId.startsWith(SIGNED_IN_CLIENT_PREFIX) ? null : clientId,
  };
}

/** The name the trail gives the service acting by itself. */
export const SYSTEM_ACTOR_NAME = 'system';

/** The service itself, acting for `cause` (a sentence: what made it act). */
export function systemActor(cause: string): AuditActor {
  return { user: SYSTEM_ACTOR_NAME, clientId: null, cause };
}

/** A short JSON picture of the changed thing before or after the change; never a secret. */
export type AuditSummary = Record<string, unknown>;

/**
 * What a caller gives the writer: the action, who, the state before and after (null when the
 * thing did not exist before, or does not after) and any details. The writer adds when, the
 * position in the chain and the hashes.
 */
export interface AuditRecord {
  action: AuditAction;
  actor: AuditActor;
  before?: AuditSummary | null;
  after?: AuditSummary | null;
  details?: Record<string, unknown> | null;
}

/** The columns a configuration change carries since the first audit log (uploads and wipes). */
export interface AuditConfigurationFields {
  version: string | null;
  /** The configuration revision the change made, or the one stored at the time. */
  revision: number;
  sections: Record<string, number>;
  /** What the change wiped, by kind; null when it wiped nothing or is older than the counts. */
  deleted: Record<string, number> | null;
}

/** The fields the hash covers: everything an entry says, its place and the link to the one before. */
export interface HashedAuditFields extends AuditConfigurationFields {
  seq: number;
  at: string;
  actor: string;
  clientId: string | null;
  action: AuditAction;
  details: Record<string, unknown> | null;
  before: AuditSummary | null;
  after: AuditSummary | null;
  prevHash: string;
}

/** One stored entry: its row id (the order it was written), the hashed fields and its hash. */
export interface AuditEntry extends HashedAuditFields {
  id: number;
  hash: string;
}

/** The end of the chain as the store keeps it: the last entry's position and hash. */
export interface ChainHead {
  seq: number;
  hash: string;
}

/**
 * The hash of an entry: SHA-256 (hex) over the canonical JSON of its hashed fields, the previous
 * entry's hash included, so changing, removing or moving any entry breaks every link after it.
 */
export function auditHashOf(fields: HashedAuditFields): string {
  const hashed: HashedAuditFields = {
    seq: fields.seq,
    at: fields.at,
    actor: fields.actor,
    clientId: fields.clientId,
    action: fields.action,
    version: fields.version,
    revision: fields.revision,
    sections: fields.sections,
    deleted: fields.deleted,
    details: fields.details,
    before: fields.before,
    after: fields.after,
    prevHash: fields.prevHash,
  };
  return createHash('sha256').update(canonicalJson(hashed)).digest('hex');
}

/** Keys that name a secret: no audit summary or detail may hold one (checked by the writer). */
const SECRET_KEY = /password|secret|token|cookie|authorization/i;

/**
 * The path of the first member of `value` whose key names a secret, or undefined. The writer
 * refuses such a record, so a careless caller fails its test rather than leak into the trail.
 */
export function secretKeyIn(value: unknown, path = ''): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    if (SECRET_KEY.test(key)) return `${path}/${key}`;
    const found = secretKeyIn(member, `${path}/${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}
