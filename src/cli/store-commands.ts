import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Services } from '../composition/services.js';
import type { Env } from '../env.js';
import { AppError } from '../lib/errors.js';
import type { AuditActor } from '../modules/audit/entry.js';
import { CliError, EXIT_REFUSED, type Io, usageError } from './output.js';
import { CREDENTIALS_USAGE, USERS_USAGE } from './usage.js';

const SQLITE_PREFIX = 'sqlite:';

/**
 * The store of DATABASE_URL as it is shown: a SQLite path made absolute, a PostgreSQL URL
 * without its password. `sqliteFile` is the absolute path of a SQLite file store.
 */
export function storeOf(databaseUrl: string): { url: string; label: string; sqliteFile?: string } {
  if (databaseUrl.startsWith(SQLITE_PREFIX)) {
    const path = databaseUrl.slice(SQLITE_PREFIX.length);
    if (path === ':memory:') return { url: databaseUrl, label: databaseUrl };
    const sqliteFile = resolve(path);
    return { url: `${SQLITE_PREFIX}${sqliteFile}`, label: `${SQLITE_PREFIX}${sqliteFile}`, sqliteFile };
  }
  const shown = new URL(databaseUrl);
  if (shown.password !== '') shown.password = '***';
  return { url: databaseUrl, label: shown.toString() };
}

/** The process settings the store commands read (DATABASE_URL and the rest); a bad one is exit 2. */
async function envOf(): Promise<Env> {
  const { EnvError, parseEnv } = await import('../env.js');
  try {
    return parseEnv(process.env);
  } catch (error) {
    if (error instanceof EnvError) throw usageError(error.message);
    throw error;
  }
}

/**
 * Opens the store of DATABASE_URL, says on standard error which one it is, and runs `run` on
 * its services. A SQLite file that does not exist is created only when `mayCreate` (and that is
 * said); otherwise the command is refused (exit 2): run from another folder, a relative path
 * would silently give a new empty store. The store and the services are imported here, when a
 * command uses them, so that a usage error of a store command costs no more than `--help`.
 */
export async function withServices<T>(
  io: Io,
  mayCreate: boolean,
  run: (services: Services) => Promise<T>,
): Promise<T> {
  const env = await envOf();
  const target = storeOf(env.databaseUrl);
  if (target.sqliteFile !== undefined && !existsSync(target.sqliteFile)) {
    if (!mayCreate) {
      throw usageError(
        `no store at ${target.label}: set DATABASE_URL to your store (a relative sqlite: path is read from the current folder)`,
      );
    }
    io.err(`store: ${target.label} (none was there: a new store is created)`);
  } else {
    io.err(`store: ${target.label}`);
  }
  const [{ createServices }, { systemClock }, { migrateToLatest }, { openStore }] = await Promise.all([
    import('../composition/services.js'),
    import('../lib/clock.js'),
    import('../storage/migrations/index.js'),
    import('../storage/store.js'),
  ]);
  const store = openStore(target.url);
  try {
    await migrateToLatest(store);
    return await run(createServices(store, systemClock, env));
  } catch (error) {
    if (error instanceof AppError) throw new CliError(error.message, EXIT_REFUSED);
    throw error;
  } finally {
    await store.close();
  }
}

/**
 * Who the audit trail names for a change made by a command on the store: `cli:` and the
 * operating-system user that ran it (the command has no signed-in user or credential).
 */
export function cliActor(): AuditActor {
  let name = process.env.USER ?? 'unknown';
  try {
    name = userInfo().username;
  } catch {
    // A user without a passwd entry (some containers): the environment's name is what there is.
  }
  return { user: `cli:${name}` };
}

/** The most standard input `users set-password --password-stdin` reads. */
const PASSWORD_INPUT_BYTES_MAX = 4096;

/**
 * The new password of `users set-password`: standard input with `--password-stdin` (one
 * trailing line break dropped), else asked twice on the terminal. Throws a usage error when
 * standard input is not a terminal and no `--password-stdin` was given, a CliError (exit 1) when
 * the two answers differ.
 */
async function newPasswordOf(
  io: Io,
  email: string,
  fromStdin: boolean,
  checkPassword: (password: string) => void,
): Promise<string> {
  if (fromStdin) return (await io.readInput(PASSWORD_INPUT_BYTES_MAX)).replace(/\r?\n$/, '');
  if (!io.inputInteractive)
    throw usageError('standard input is not a terminal: give the new password on it with --password-stdin');
  const password = await io.askSecret(`New password for ${email}: `);
  checkPassword(password);
  if ((await io.askSecret('The same password again: ')) !== password)
    throw new CliError('the two passwords differ; nothing was changed', EXIT_REFUSED);
  return password;
}

/**
 * `users set-password EMAIL [--password-stdin]`: gives an existing user a new password (the
 * same rules as everywhere: 12 to 256 characters) and ends the user's sign-in sessions of the
 * administration interface; the store must exist. Exit 1 for an unknown user or a refused
 * password, 2 on bad usage.
 */
async function setPasswordCommand(rest: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args: rest,
    options: { 'password-stdin': { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  const [email] = positionals;
  if (email === undefined || positionals.length !== 1) throw usageError(USERS_USAGE);
  const { checkPassword } = await import('../modules/auth/access-directory.js');
  let password: string;
  try {
    password = await newPasswordOf(io, email, values['password-stdin'] === true, checkPassword);
    checkPassword(password);
  } catch (error) {
    if (error instanceof AppError) throw new CliError(error.message, EXIT_REFUSED);
    throw error;
  }
  await withServices(io, false, (services) => services.access.setPassword(email, password, cliActor()));
  io.out(`set the password of ${email.toLowerCase()}; their sign-in sessions were ended`);
}

/**
 * `users create --email E --role R [--role R2] [--name N]`: creates a user directly in the
 * store named by DATABASE_URL, creating a new SQLite store when the file does not exist.
 * `users set-password EMAIL [--password-stdin]`: see setPasswordCommand.
 */
export async function usersCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'set-password') return setPasswordCommand(rest, io);
  if (action !== 'create') throw usageError(USERS_USAGE);
  const { values } = parseArgs({
    args: rest,
    options: {
      email: { type: 'string' },
      role: { type: 'string', multiple: true },
      name: { type: 'string' },
    },
    strict: true,
  });
  if (values.email === undefined || values.role === undefined)
    throw usageError('users create needs --email and --role');
  const { email, role, name } = values;
  const { answer: user } = await withServices(io, true, (services) =>
    services.access.createUser(
      {
        email,
        roles: role,
        ...(name === undefined ? {} : { displayName: name }),
      },
      { actor: cliActor() },
    ),
  );
  io.out(`created user ${user.email} with roles ${user.roles.join(', ')}`);
}

/**
 * `credentials create --owner EMAIL [--name N] [--expires-in-days N]` (prints the secret once),
 * `credentials list`, `credentials revoke ID` — directly on the store, which must exist.
 */
export async function credentialsCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: { owner: { type: 'string' }, name: { type: 'string' }, 'expires-in-days': { type: 'string' } },
      strict: true,
    });
    if (values.owner === undefined) throw usageError('credentials create needs --owner EMAIL');
    const days = values['expires-in-days'];
    if (days !== undefined && !/^\d+$/.test(days))
      throw usageError('--expires-in-days must be a whole number');
    const { owner, name } = values;
    // A new store has no user to own the credential: it is never created here.
    const { answer: created } = await withServices(io, false, (services) =>
      services.access.createCredential(
        {
          ownerEmail: owner,
          ...(name === undefined ? {} : { name }),
          ...(days === undefined ? {} : { expiresInDays: Number(days) }),
        },
        { actor: cliActor() },
      ),
    );
    io.out(`client_id:     ${created.clientId}`);
    io.out(`client_secret: ${created.clientSecret}`);
    io.out(`owner:         ${created.ownerEmail}`);
    io.out(`expires:       ${created.expiresAt}`);
    io.err('The secret is shown this once; store it now.');
    return;
  }
  if (action === 'list') {
    const { rows } = await withServices(io, false, (services) => services.access.listCredentials(0, 1000));
    for (const row of rows) {
      const state =
        row.revokedAt === null ? (Date.parse(row.expiresAt) <= Date.now() ? 'expired' : 'active') : 'revoked';
      io.out(`${row.clientId}\t${row.ownerEmail}\t${row.name}\t${state}\texpires ${row.expiresAt}`);
    }
    return;
  }
  if (action === 'revoke') {
    const clientId = rest[0];
    if (clientId === undefined || rest.length !== 1) throw usageError(CREDENTIALS_USAGE);
    await withServices(io, false, (services) =>
      services.access.revokeCredential(clientId, { actor: cliActor() }),
    );
    io.out(`revoked ${clientId}`);
    return;
  }
  throw usageError(CREDENTIALS_USAGE);
}
