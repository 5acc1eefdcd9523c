/**
 * The changes of users and credentials, as the change runner runs them (`modules/changes/`):
 * each states what it writes in the access tables, the refusals it can answer and its audit
 * entry (the user or credential before and after, never a hash); the runner owns the
 * transaction, the `Idempotency-Key`, the dry run and the audit entry. The slow work (a
 * password's or a secret's scrypt hash) is done before the change runs and given in its input,
 * which names its request without it (`requestOf`). A new credential's answer, which holds its
 * secret, is kept for repeats sealed, never in clear.
 */
import { AppError } from '../../lib/errors.js';
import { invariant } from '../../lib/invariant.js';
import type { AuditSummary } from '../audit/entry.js';
import type { Change as RunnerChange } from '../changes/runner.js';
import { CREDENTIAL_EXPIRY_DAYS_DEFAULT, CREDENTIAL_EXPIRY_DAYS_MAX } from './inputs.js';
import { openSealed, seal } from './sealed-answer.js';
import type { AccessTables, CredentialRow, UserChange, UserRow } from './store.js';

/** The role that manages users and credentials; at least one enabled user always holds it. */
export const ADMIN_ROLE = 'admin';

/** The tables the access changes touch. */
export interface AccessChangeTables {
  access: AccessTables;
}

/** An access change. */
type Change<Input, Answer> = RunnerChange<Input, Answer, AccessChangeTables>;

/** A credential as shown to callers: never the secret, never its hash. */
export type CredentialView = Omit<CredentialRow, 'secretHash'>;

/** A new credential as its creator is shown it: with its secret, this once. */
export type CreatedCredentialView = CredentialView & { clientSecret: string };

/** A user as shown to callers: never the password hash. */
export interface UserView {
  email: string;
  displayName: string;
  roles: string[];
  disabled: boolean;
  createdAt: string;
}

export function credentialView(row: CredentialRow): CredentialView {
  return {
    clientId: row.clientId,
    ownerEmail: row.ownerEmail,
    name: row.name,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    lastUsedAt: row.lastUsedAt,
  };
}

export function userView(row: UserRow): UserView {
  return {
    email: row.email,
    displayName: row.displayName,
    roles: row.roles,
    disabled: row.disabled,
    createdAt: row.createdAt,
  };
}

/** A user as the audit trail pictures it: never the password hash. */
export function userSummary(user: UserRow): AuditSummary {
  return { email: user.email, displayName: user.displayName, roles: user.roles, disabled: user.disabled };
}

/** A credential as the audit trail pictures it: never the secret hash. */
export function credentialSummary(credential: CredentialRow): AuditSummary {
  return {
    clientId: credential.clientId,
    ownerEmail: credential.ownerEmail,
    name: credential.name,
    expiresAt: credential.expiresAt,
    revokedAt: credential.revokedAt,
  };
}

/**
 * Checks a credential lifetime in days: a whole number from 1 to `CREDENTIAL_EXPIRY_DAYS_MAX`.
 * Errors: `validation-failed` naming `/expiresInDays`.
 */
export function checkExpiryDays(days: number): void {
  if (!Number.isInteger(days) || days < 1 || days > CREDENTIAL_EXPIRY_DAYS_MAX) {
    throw new AppError(
      'validation-failed',
      `expiresInDays must be a whole number from 1 to ${CREDENTIAL_EXPIRY_DAYS_MAX}`,
      {
        errors: [{ path: '/expiresInDays', message: `must be from 1 to ${CREDENTIAL_EXPIRY_DAYS_MAX}` }],
      },
    );
  }
}

/** A new user, checked, with its password already hashed (null: none). */
export interface NewUser {
  email: string;
  displayName: string;
  roles: string[];
  passwordHash: string | null;
}

/** A change of the user `email` (as the caller wrote it). */
export interface UserUpdate {
  email: string;
  change: UserChange;
}

/** A credential as asked for: what names its request. */
export interface CredentialRequest {
  ownerEmail: string;
  name?: string | undefined;
  expiresInDays?: number | undefined;
}

/** A credential to save: as asked for, with its client id and its secret's hash, made before. */
export interface CredentialInput {
  request: CredentialRequest;
  clientId: string;
  secretHash: string;
}

/** Who cannot be demoted or disabled: the last enabled administrator. */
function lastAdministrator(email: string): AppError {
  return new AppError(
    'conflict',
    `${email} is the last enabled administrator: make another user an administrator before disabling or demoting this one`,
    { rule: 'last-administrator' },
  );
}

const createUser: Change<NewUser, UserView> = {
  action: 'users.create',
  async apply(tx, input, { at }) {
    const row: UserRow = { ...input, disabled: false, createdAt: at };
    if (!(await tx.access.insertUser(row))) {
      throw new AppError('conflict', `a user with e-mail ${row.email} exists already`);
    }
    return { answer: userView(row), audit: { before: null, after: userSummary(row) } };
  },
  // Never a digest of the password's hash, which is salted anew on each attempt.
  requestOf: ({ passwordHash, ...user }) => ({ ...user, hasPassword: passwordHash !== null }),
};

const updateUser: Change<UserUpdate, UserView> = {
  action: 'users.update',
  async apply(tx, { email: asWritten, change }) {
    const email = asWritten.toLowerCase();
    const takesAdminAway =
      change.disabled === true || (change.roles !== undefined && !change.roles.includes(ADMIN_ROLE));
    if (takesAdminAway) {
      // Locked before the user's row: every change takes its row locks in the holders' order.
      const holders = await tx.access.lockEnabledHolders(ADMIN_ROLE);
      if (holders.length === 1 && holders[0] === email) throw lastAdministrator(asWritten);
    }
    const current = await tx.access.lockUser(email);
    if (current === undefined) throw new AppError('not-found', `no user with e-mail ${asWritten}`);
    const row = await tx.access.updateUser(email, change);
    const before = userSummary(current);
    const after = userSummary(row);
    const changed = JSON.stringify(before) !== JSON.stringify(after);
    return { answer: userView(row), audit: changed ? { before, after } : null };
  },
};

/** Saves a credential (`credentials.create`): a new one, or the bootstrap one written again. */
async function saveCredential(
  tx: AccessChangeTables,
  { request, clientId, secretHash }: CredentialInput,
  at: string,
): Promise<{ answer: CredentialView; before: AuditSummary | null; after: AuditSummary }> {
  // The owner first, then the lifetime: an unknown owner is answered before a bad lifetime.
  const owner = await tx.access.findUser(request.ownerEmail.toLowerCase());
  if (owner === undefined) throw new AppError('not-found', `no user with e-mail ${request.ownerEmail}`);
  const days = request.expiresInDays ?? CREDENTIAL_EXPIRY_DAYS_DEFAULT;
  checkExpiryDays(days);
  const { previous, row } = await tx.access.upsertCredential({
    clientId,
    secretHash,
    ownerEmail: owner.email,
    name: request.name ?? clientId,
    createdAt: at,
    expiresAt: new Date(Date.parse(at) + days * 24 * 3600 * 1000).toISOString(),
    revokedAt: null,
    lastUsedAt: null,
  });
  return {
    answer: credentialView(row),
    before: previous === undefined ? null : credentialSummary(previous),
    after: credentialSummary(row),
  };
}

/** The bootstrap credential written (again): no secret in its answer, so none kept. */
const ensureCredential: Change<CredentialInput, CredentialView> = {
  action: 'credentials.create',
  async apply(tx, input, { at }) {
    const { answer, before, after } = await saveCredential(tx, input, at);
    return { answer, audit: { before, after } };
  },
  requestOf: (input) => input.request,
};

/**
 * A new credential, answered with its secret; `sealingKey` seals the secret where the answer is
 * kept for the repeats of its key (undefined when it is not kept: no key, or a dry run).
 */
function createCredential(
  sealingKey: string | undefined,
): Change<CredentialInput & { clientSecret: string }, CreatedCredentialView> {
  const key = (): string => {
    invariant(
      sealingKey !== undefined,
      'a credential answer is kept only with a sealing key',
      () => 'none given',
    );
    return sealingKey;
  };
  return {
    action: 'credentials.create',
    async apply(tx, input, { at }) {
      const { answer, before, after } = await saveCredential(tx, input, at);
      return { answer: { ...answer, clientSecret: input.clientSecret }, audit: { before, after } };
    },
    // The client id and the secret are drawn for this attempt: the request is what was asked.
    requestOf: (input) => input.request,
    keeping: {
      toKept: (answer) => ({
        ...answer,
        clientSecret: seal(key(), answer.clientSecret, 'credential answer'),
      }),
      fromKept: (kept) => {
        const answer = kept as CreatedCredentialView;
        const secret = openSealed(key(), answer.clientSecret, 'credential answer');
        invariant(
          secret !== undefined,
          'a kept credential answer opens under the sealing key',
          () => answer.clientId,
        );
        return { ...answer, clientSecret: secret };
      },
    },
  };
}

const revokeCredential: Change<{ clientId: string }, CredentialView> = {
  action: 'credentials.revoke',
  async apply(tx, { clientId }, { at }) {
    const revoked = await tx.access.revokeCredential(clientId, at);
    if (revoked === undefined) throw new AppError('not-found', `no credential with client id ${clientId}`);
    if (revoked === 'already-revoked') {
      // Revoking again changes nothing, so nothing is audited; the answer is the credential.
      const row = await tx.access.findCredential(clientId);
      invariant(row !== undefined, 'a credential revoked before exists in its transaction', () => clientId);
      return { answer: credentialView(row), audit: null };
    }
    return {
      answer: credentialView(revoked),
      audit: {
        before: credentialSummary({ ...revoked, revokedAt: null }),
        after: credentialSummary(revoked),
      },
    };
  },
};

/** The access changes. */
export const accessChanges = {
  createUser,
  updateUser,
  ensureCredential,
  createCredential,
  revokeCredential,
};
