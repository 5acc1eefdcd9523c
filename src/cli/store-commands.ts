import { parseArgs } from 'node:util';
import { parseEnv } from '../env.js';
import { systemClock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { createServices, type Services } from '../services.js';
import { migrateToLatest, openStore } from '../storage/database.js';
import { CliError, EXIT_REFUSED, type Io, usageError } from './output.js';

async function withServices<T>(run: (services: Services) => Promise<T>): Promise<T> {
  const env = parseEnv(process.env);
  const store = openStore(env.databaseUrl);
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
 * `users create --email E --role R [--role R2] [--name N]`: creates a user directly in the
 * store named by DATABASE_URL (contract section 7).
 */
export async function usersCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'create')
    throw usageError('usage: ledgerflow users create --email E --role R [--role R2] [--name N]');
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
  const user = await withServices((services) =>
    services.accounts.createUser({
      email,
      roles: role,
      ...(name === undefined ? {} : { displayName: name }),
    }),
  );
  io.out(`created user ${user.email} with roles ${user.roles.join(', ')}`);
}

/**
 * `credentials create --owner EMAIL [--name N] [--expires-in-days N]` (prints the secret once),
 * `credentials list`, `credentials revoke ID` — directly on the store.
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
    const created = await withServices((services) =>
      services.accounts.createCredential({
        ownerEmail: owner,
        ...(name === undefined ? {} : { name }),
        ...(days === undefined ? {} : { expiresInDays: Number(days) }),
      }),
    );
    io.out(`client_id:     ${created.clientId}`);
    io.out(`client_secret: ${created.clientSecret}`);
    io.out(`owner:         ${created.ownerEmail}`);
    io.out(`expires:       ${created.expiresAt}`);
    io.err('The secret is shown this once; store it now.');
    return;
  }
  if (action === 'list') {
    const { rows } = await withServices((services) => services.accounts.listCredentials(0, 1000));
    for (const row of rows) {
      const state =
        row.revokedAt === null ? (Date.parse(row.expiresAt) <= Date.now() ? 'expired' : 'active') : 'revoked';
      io.out(`${row.clientId}\t${row.ownerEmail}\t${row.name}\t${state}\texpires ${row.expiresAt}`);
    }
    return;
  }
  if (action === 'revoke') {
    const clientId = rest[0];
    if (clientId === undefined || rest.length !== 1)
      throw usageError('usage: ledgerflow credentials revoke CLIENT_ID');
    await withServices((services) => services.accounts.revokeCredential(clientId));
    io.out(`revoked ${clientId}`);
    return;
  }
  throw usageError('usage: ledgerflow credentials create|list|revoke');
}
