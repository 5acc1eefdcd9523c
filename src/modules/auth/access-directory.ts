import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newOpaqueToken } from '../../lib/ids.js';
import { type AuditActor, systemActor } from '../audit/entry.js';
import type { ChangeOptions, ChangeRunner, Outcome } from '../changes/runner.js';
import {
  type AccessChangeTables,
  ADMIN_ROLE,
  accessChanges,
  type CreatedCredentialView,
  type CredentialRequest,
  type CredentialView,
  credentialView,
  type UserView,
  userView,
} from './access-changes.js';
import {
  CREDENTIAL_EXPIRY_DAYS_MAX,
  PASSWORD_LENGTH_MAX_CHARS,
  PASSWORD_LENGTH_MIN_CHARS,
} from './inputs.js';
import { isRole, ROLE_NAMES } from './permissions.js';
import { hashSecret, verifySecret } from './secret-hash.js';
import type { AuthStore, UserChange } from './store.js';

export {
  type CreatedCredentialView,
  type CredentialView,
  credentialView,
  type UserView,
  userView,
} from './access-changes.js';

const CLIENT_ID_PREFIX = 'lfc_';
const CLIENT_SECRET_PREFIX = 'lfs_';
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

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

/** Who the audit trail names for the first administrator of an empty store: the service, at start. */
const FIRST_ADMINISTRATOR_ACTOR: AuditActor = systemActor(
  'the store had no administrator at start (ADMIN_EMAIL)',
);
/** Who the audit trail names for the bootstrap credential and its owner: the service, at start. */
const BOOTSTRAP_ACTOR: AuditActor = systemActor('BOOTSTRAP_CLIENT_ID was set at start');

/**
 * Users and API credentials (docs/reference.md, Users, roles and credentials), shared by the HTTP
 * endpoints, the administration pages and the CLI. Their creation and change run through the
 * change runner (`access-changes.ts`), with their audit entry, their `Idempotency-Key` and their
 * dry run. Secrets and passwords are hashed with scrypt before the change runs; a new secret is
 * returned once, to the caller that created it (and, sealed, to a repeat of its key).
 */
export class AccessDirectory {
  readonly #store: AuthStore;
  readonly #runner: ChangeRunner<AccessChangeTables>;
  readonly #clock: Clock;
  readonly #sealingKey: () => Promise<string>;

  /**
   * `sealingKey` gives the key that seals a new credential's answer where it is kept for the
   * repeats of its `Idempotency-Key` (the webhooks' sealing key); asked for only then.
   */
  constructor(
    store: AuthStore,
    runner: ChangeRunner<AccessChangeTables>,
    clock: Clock,
    sealingKey: () => Promise<string>,
  ) {
    this.#store = store;
    this.#runner = runner;
    this.#clock = clock;
    this.#sealingKey = sealingKey;
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
    options: ChangeOptions,
  ): Promise<Outcome<UserView>> {
    if (!EMAIL_PATTERN.test(input.email)) {
      throw new AppError('validation-failed', 'email must be an e-mail address', {
        errors: [{ path: '/email', message: 'must be an e-mail address' }],
      });
    }
    checkRoles(input.roles);
    if (input.password !== undefined) checkPassword(input.password);
    const user = {
      email: input.email.toLowerCase(),
      displayName: input.displayName ?? input.email,
      roles: [...new Set(input.roles)],
      passwordHash: input.password === undefined ? null : await hashSecret(input.password),
    };
    return this.#runner.run(accessChanges.createUser, user, options);
  }

  /**
   * Changes a user's roles, name or disabled flag. The last enabled administrator can be neither
   * disabled nor demoted, so someone can always manage users. Errors: `not-found`,
   * `validation-failed`, `conflict` (the last administrator).
   */
  async updateUser(email: string, change: UserChange, options: ChangeOptions): Promise<Outcome<UserView>> {
    if (change.roles !== undefined) checkRoles(change.roles);
    return this.#runner.run(accessChanges.updateUser, { email, change }, options);
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
   * the secret is ever available (a repeat of its `Idempotency-Key` answers it again, kept
   * sealed). Errors: `not-found` (no such owner), then `validation-failed` (the lifetime).
   */
  async createCredential(
    request: CredentialRequest,
    options: ChangeOptions,
  ): Promise<Outcome<CreatedCredentialView>> {
    const clientId = newOpaqueToken(CLIENT_ID_PREFIX).slice(0, CLIENT_ID_PREFIX.length + 24);
    const clientSecret = newOpaqueToken(CLIENT_SECRET_PREFIX);
    const secretHash = await hashSecret(clientSecret);
    // The answer is kept, sealed, only under a key and never by a dry run.
    const kept = options.idempotencyKey !== undefined && options.dryRun !== true;
    const change = accessChanges.createCredential(kept ? await this.#sealingKey() : undefined);
    return this.#runner.run(change, { request, clientId, secretHash, clientSecret }, options);
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
    const actor = { actor: BOOTSTRAP_ACTOR };
    if ((await this.#store.findUser(ownerEmail)) === undefined) {
      // The store was first started with another ADMIN_EMAIL: the bootstrap owner is made here.
      await this.createUser(
        { email: ownerEmail, displayName: 'Administrator', roles: [ADMIN_ROLE] },
        actor,
      ).catch((error: unknown) => {
        if (!(error instanceof AppError && error.code === 'conflict')) throw error;
      });
    }
    const request = { ownerEmail, name: 'bootstrap', expiresInDays: CREDENTIAL_EXPIRY_DAYS_MAX };
    const secretHash = await hashSecret(clientSecret);
    await this.#runner.run(accessChanges.ensureCredential, { request, clientId, secretHash }, actor);
  }

  async listCredentials(page: number, limit: number): Promise<{ rows: CredentialView[]; total: number }> {
    const { rows, total } = await this.#store.listCredentials(page, limit);
    return { rows: rows.map(credentialView), total };
  }

  /**
   * Revokes a credential at once; its live tokens stop working. Answers the credential revoked;
   * revoking it again changes nothing and is not audited. Errors: `not-found`.
   */
  revokeCredential(clientId: string, options: ChangeOptions): Promise<Outcome<CredentialView>> {
    return this.#runner.run(accessChanges.revokeCredential, { clientId }, options);
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
        { actor: FIRST_ADMINISTRATOR_ACTOR },
      );
    } catch (error) {
      // Another instance starting on the same empty store created it first.
      if (error instanceof AppError && error.code === 'conflict') return { created: false };
      throw error;
    }
    return generated === undefined ? { created: true } : { created: true, generatedPassword: generated };
  }
}
