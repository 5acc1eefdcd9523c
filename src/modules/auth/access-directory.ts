import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newOpaqueToken } from '../../lib/ids.js';
import { type AuditActor, systemActor } from '../audit/entry.js';
import {
  CREDENTIAL_EXPIRY_DAYS_DEFAULT,
  CREDENTIAL_EXPIRY_DAYS_MAX,
  PASSWORD_LENGTH_MAX_CHARS,
  PASSWORD_LENGTH_MIN_CHARS,
} from './inputs.js';
import { isRole, ROLE_NAMES } from './permissions.js';
import { hashSecret, verifySecret } from './secret-hash.js';
import type { AuthStore, CredentialRow, UserRow } from './store.js';

/** The role that manages users and credentials; at least one enabled user always holds it. */
const ADMIN_ROLE = 'admin';
const CLIENT_ID_PREFIX = 'lfc_';
const CLIENT_SECRET_PREFIX = 'lfs_';
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

/** A credential as shown to callers: never the secret, never its hash. */
export interface CredentialView {
  clientId: string;
  ownerEmail: string;
  name: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  /** When the credential last obtained a token, or null when never. */
  lastUsedAt: string | null;
}

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

function checkRoles(roles: readonly string[]): void {
  const unknown = roles.filter((role) => !isRole(role));
  if (unknown.length > 0) {
    throw new AppError(
      'validation-failed',
      `unknown role ${unknown.join(', ')}; roles are ${ROLE_NAMES.join(', ')}`,
      {
        errors: [{ path: '/roles', message: `must be one of ${ROLE_NAMES.join(', ')}` }],
      },
    );
  }
}

/**
 * Checks a new password: from `PASSWORD_LENGTH_MIN_CHARS` to `PASSWORD_LENGTH_MAX_CHARS`
 * characters. Errors: `validation-failed` naming `/password`.
 */
export function checkPassword(password: string): void {
  const length = [...password].length;
  if (length < PASSWORD_LENGTH_MIN_CHARS || length > PASSWORD_LENGTH_MAX_CHARS) {
    const rule = `must be ${PASSWORD_LENGTH_MIN_CHARS} to ${PASSWORD_LENGTH_MAX_CHARS} characters long`;
    throw new AppError('validation-failed', `password ${rule}`, {
      errors: [{ path: '/password', message: rule }],
    });
  }
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

/** Who the audit trail names for the first administrator of an empty store: the service, at start. */
const FIRST_ADMINISTRATOR_ACTOR: AuditActor = systemActor(
  'the store had no administrator at start (ADMIN_EMAIL)',
);
/** Who the audit trail names for the bootstrap credential and its owner: the service, at start. */
const BOOTSTRAP_ACTOR: AuditActor = systemActor('BOOTSTRAP_CLIENT_ID was set at start');

/**
 * Users and API credentials (docs/reference.md, Users, roles and credentials), shared by the HTTP
 * endpoints and the CLI. Secrets and passwords are hashed with scrypt before they reach the store;
 * a new secret is returned once, to the caller that created it. Every change names its `actor`
 * and is written to the audit trail with it, in the change's transaction.
 */
export class AccessDirectory {
  readonly #store: AuthStore;
  readonly #clock: Clock;

  constructor(store: AuthStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /**
   * Creates a user. Errors: `validation-failed` (bad e-mail, role or password, see
   * `checkPassword`), `conflict` (the e-mail exists).
   */
  async createUser(
    input: {
      email: string;
      displayName?: string;
      roles: string[];
      password?: string;
    },
    actor: AuditActor,
  ): Promise<UserView> {
    if (!EMAIL_PATTERN.test(input.email)) {
      throw new AppError('validation-failed', 'email must be an e-mail address', {
        errors: [{ path: '/email', message: 'must be an e-mail address' }],
      });
    }
    checkRoles(input.roles);
    if (input.password !== undefined) checkPassword(input.password);
    const row: UserRow = {
      email: input.email.toLowerCase(),
      displayName: input.displayName ?? input.email,
      passwordHash: input.password === undefined ? null : await hashSecret(input.password),
      roles: [...new Set(input.roles)],
      disabled: false,
      createdAt: this.#clock.now().toISOString(),
    };
    if (!(await this.#store.insertUser(row, actor))) {
      throw new AppError('conflict', `a user with e-mail ${row.email} exists already`);
    }
    return userView(row);
  }

  /**
   * Changes a user's roles, name or disabled flag. The last enabled administrator can be neither
   * disabled nor demoted, so someone can always manage users. Errors: `not-found`,
   * `validation-failed`, `conflict` (the last administrator).
   */
  async updateUser(
    email: string,
    change: { roles?: string[]; disabled?: boolean; displayName?: string },
    actor: AuditActor,
  ): Promise<UserView> {
    if (change.roles !== undefined) checkRoles(change.roles);
    const at = this.#clock.now().toISOString();
    const row = await this.#store.updateUser(email.toLowerCase(), change, ADMIN_ROLE, { actor, at });
    if (row === undefined) throw new AppError('not-found', `no user with e-mail ${email}`);
    if (row === 'last-holder') {
      throw new AppError(
        'conflict',
        `${email} is the last enabled administrator: make another user an administrator before disabling or demoting this one`,
        { rule: 'last-administrator' },
      );
    }
    return userView(row);
  }

  /**
   * Gives a user a new password and ends every sign-in session of that user (API credentials
   * are not touched). Errors: `validation-failed` (see `checkPassword`), `not-found`.
   */
  async setPassword(email: string, password: string, actor: AuditActor): Promise<void> {
    await this.#setPassword(email, password, actor, false);
  }

  async #setPassword(email: string, password: string, actor: AuditActor, generated: boolean): Promise<void> {
    checkPassword(password);
    const hash = await hashSecret(password);
    const at = this.#clock.now().toISOString();
    if (!(await this.#store.setPassword(email.toLowerCase(), hash, { actor, at, generated }))) {
      throw new AppError('not-found', `no user with e-mail ${email}`);
    }
  }

  /**
   * Gives a user a generated password (see `setPassword`) and returns it, the only time it is
   * ever available. Errors: `not-found`.
   */
  async resetPassword(email: string, actor: AuditActor): Promise<string> {
    const password = newOpaqueToken('');
    await this.#setPassword(email, password, actor, true);
    return password;
  }

  /** One user, or undefined when no user has this e-mail. */
  async findUser(email: string): Promise<UserView | undefined> {
    const row = await this.#store.findUser(email.toLowerCase());
    return row === undefined ? undefined : userView(row);
  }

  async listUsers(page: number, limit: number): Promise<{ rows: UserView[]; total: number }> {
    const { rows, total } = await this.#store.listUsers(page, limit);
    return { rows: rows.map(userView), total };
  }

  /**
   * Creates a credential for an existing owner and returns it with its secret, the only time
   * the secret is ever available. Errors: `not-found` (no such owner), `validation-failed`.
   */
  async createCredential(
    input: {
      ownerEmail: string;
      name?: string;
      expiresInDays?: number;
    },
    actor: AuditActor,
  ): Promise<CredentialView & { clientSecret: string }> {
    const owner = await this.#store.findUser(input.ownerEmail.toLowerCase());
    if (owner === undefined) throw new AppError('not-found', `no user with e-mail ${input.ownerEmail}`);
    const days = input.expiresInDays ?? CREDENTIAL_EXPIRY_DAYS_DEFAULT;
    checkExpiryDays(days);
    const clientId = newOpaqueToken(CLIENT_ID_PREFIX).slice(0, CLIENT_ID_PREFIX.length + 24);
    const clientSecret = newOpaqueToken(CLIENT_SECRET_PREFIX);
    return {
      ...(await this.#saveCredential(
        clientId,
        clientSecret,
        owner.email,
        input.name ?? clientId,
        days,
        actor,
      )),
      clientSecret,
    };
  }

  /**
   * Makes sure a credential with exactly this id and secret exists, owned by `ownerEmail`
   * (BOOTSTRAP_CLIENT_ID / BOOTSTRAP_CLIENT_SECRET, docs/reference.md, Running the service), valid
   * and not revoked: it is written again when missing, revoked, expired, owned by someone else or
   * when the secret changed, and its owner is created as an administrator when missing.
   */
  async ensureCredential(clientId: string, clientSecret: string, ownerEmail: string): Promise<void> {
    const existing = await this.#store.findCredential(clientId);
    const usable =
      existing !== undefined &&
      existing.revokedAt === null &&
      existing.ownerEmail === ownerEmail &&
      Date.parse(existing.expiresAt) > this.#clock.now().getTime();
    if (usable && (await verifySecret(clientSecret, existing.secretHash))) return;
    if ((await this.#store.findUser(ownerEmail)) === undefined) {
      // The store was first started with another ADMIN_EMAIL: the bootstrap owner is made here.
      await this.createUser(
        { email: ownerEmail, displayName: 'Administrator', roles: [ADMIN_ROLE] },
        BOOTSTRAP_ACTOR,
      ).catch((error: unknown) => {
        if (!(error instanceof AppError && error.code === 'conflict')) throw error;
      });
    }
    await this.#saveCredential(
      clientId,
      clientSecret,
      ownerEmail,
      'bootstrap',
      CREDENTIAL_EXPIRY_DAYS_MAX,
      BOOTSTRAP_ACTOR,
    );
  }

  async listCredentials(page: number, limit: number): Promise<{ rows: CredentialView[]; total: number }> {
    const { rows, total } = await this.#store.listCredentials(page, limit);
    return { rows: rows.map(credentialView), total };
  }

  /** Revokes a credential at once; its live tokens stop working. Errors: `not-found`. */
  async revokeCredential(clientId: string, actor: AuditActor): Promise<void> {
    if (!(await this.#store.revokeCredential(clientId, this.#clock.now().toISOString(), actor))) {
      throw new AppError('not-found', `no credential with client id ${clientId}`);
    }
  }

  /**
   * Creates the first administrator when the store has no user yet (`ADMIN_EMAIL`,
   * `ADMIN_PASSWORD`; docs/reference.md, Running the service).
   * Returns the generated password when one was made, so the caller can print it once.
   */
  async ensureFirstAdmin(
    email: string,
    password: string | undefined,
  ): Promise<{ created: boolean; generatedPassword?: string }> {
    if ((await this.#store.countUsers()) > 0) return { created: false };
    const generated = password === undefined ? newOpaqueToken('') : undefined;
    try {
      await this.createUser(
        { email, displayName: 'Administrator', roles: [ADMIN_ROLE], password: password ?? generated },
        FIRST_ADMINISTRATOR_ACTOR,
      );
    } catch (error) {
      // Another instance starting on the same empty store created it first.
      if (error instanceof AppError && error.code === 'conflict') return { created: false };
      throw error;
    }
    return generated === undefined ? { created: true } : { created: true, generatedPassword: generated };
  }

  async #saveCredential(
    clientId: string,
    secret: string,
    ownerEmail: string,
    name: string,
    days: number,
    actor: AuditActor,
  ): Promise<CredentialView> {
    const now = this.#clock.now();
    const row: CredentialRow = {
      clientId,
      secretHash: await hashSecret(secret),
      ownerEmail,
      name,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + days * 24 * 3600 * 1000).toISOString(),
      revokedAt: null,
      lastUsedAt: null,
    };
    await this.#store.upsertCredential(row, actor);
    return credentialView(row);
  }
}
