import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../src/composition/services.js';
import { ManualClock } from '../../src/lib/clock.js';
import { AppError } from '../../src/lib/errors.js';
import { grantCacheOf } from '../../src/storage/auth-store.js';
import { GRANT_CHANGES_CHANNEL } from '../../src/storage/grant-cache.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestStore, TEST_DIALECT } from '../helpers/store.js';

const LIFETIMES = { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800 };
const SETUP = { user: 'test-setup', clientId: null };
/** Longest a change announced by PostgreSQL may take to reach the other instance here. */
const NOTICE_WAIT_MS = 5_000;
const POLL_MS = 20;

function servicesOn(store: Store, clock: ManualClock): Services {
  return createServices(store, clock, { ...LIFETIMES, businessDate: undefined });
}

/** Whether `services` accepts `accessToken` now. */
async function accepts(services: Services, accessToken: string): Promise<boolean> {
  try {
    await services.tokens.authenticateBearer(accessToken);
    return true;
  } catch (error) {
    if (error instanceof AppError && error.code === 'invalid-token') return false;
    throw error;
  }
}

/** Polls `condition` until it holds; fails after `NOTICE_WAIT_MS`. */
async function eventually(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const until = Date.now() + NOTICE_WAIT_MS;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`not within ${NOTICE_WAIT_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Accepted, and on PostgreSQL remembered: read again once the instance listens. */
async function remembered(store: Store, services: Services, accessToken: string): Promise<void> {
  expect(await accepts(services, accessToken)).toBe(true);
  if (store.dialect === 'postgres')
    await eventually(() => grantCacheOf(store)?.isListening === true, 'the instance listens');
  expect(await accepts(services, accessToken)).toBe(true);
}

let clients = 0;

/** A new API client of its own user, and the answer of its first token request. */
async function newClient(services: Services) {
  clients += 1;
  const email = `grants${clients}-${Date.now()}@example.test`;
  await services.access.createUser({ email, roles: ['api-client'] }, SETUP);
  const auth = await services.access.createCredential({ ownerEmail: email }, SETUP);
  const token = await services.tokens.clientCredentialsGrant(auth);
  return { email, auth, token };
}

/**
 * Access-token grants as each instance remembers them on PostgreSQL: whatever can refuse one
 * is refused at once by the instance that changed it, within moments by the others (announced
 * by PostgreSQL, whoever made the change), and nothing is remembered while the announcements may
 * be missed. On SQLite nothing is remembered: a change made outside the service counts at once.
 */
describe('access-token grants remembered by an instance', () => {
  let store: Store;
  let url: string;
  let dispose: () => Promise<void>;
  let services: Services;
  const clock = new ManualClock(new Date());
  const others: { close(): Promise<void> }[] = [];

  beforeEach(async () => {
    ({ store, url, dispose } = await createTestStore());
    services = servicesOn(store, clock);
  });
  afterEach(async () => {
    for (const other of others.splice(0)) await other.close();
    await services.close();
    await dispose();
  });

  /** A second instance on the same database. */
  function secondInstance(): { store: Store; services: Services } {
    const second = openStore(url);
    const secondServices = servicesOn(second, clock);
    others.push({
      close: async () => {
        await secondServices.close();
        await second.close();
      },
    });
    return { store: second, services: secondServices };
  }

  it('refuses at once, on the instance that made it, a revocation, a disabled owner and a revoked credential', async () => {
    const revoked = await newClient(services);
    await remembered(store, services, revoked.token.access_token);
    await services.tokens.revoke(revoked.auth, revoked.token.access_token);
    expect(await accepts(services, revoked.token.access_token)).toBe(false);

    const disabled = await newClient(services);
    await remembered(store, services, disabled.token.access_token);
    await services.access.updateUser(disabled.email, { disabled: true }, SETUP);
    expect(await accepts(services, disabled.token.access_token)).toBe(false);

    const withdrawn = await newClient(services);
    await remembered(store, services, withdrawn.token.access_token);
    await services.access.revokeCredential(withdrawn.auth.clientId, SETUP);
    expect(await accepts(services, withdrawn.token.access_token)).toBe(false);
  });

  it.skipIf(TEST_DIALECT !== 'sqlite')(
    'takes a change made outside the service into account at once',
    async () => {
      const { email, token } = await newClient(services);
      expect(await accepts(services, token.access_token)).toBe(true);
      expect(grantCacheOf(store)).toBeUndefined();
      await store.db.updateTable('users').set({ disabled: 1 }).where('email', '=', email).execute();
      expect(await accepts(services, token.access_token)).toBe(false);
    },
  );

  it.skipIf(TEST_DIALECT !== 'postgres')(
    'refuses within moments a token revoked on another instance, and a user disabled there',
    async () => {
      const other = secondInstance();
      const revoked = await newClient(other.services);
      const disabled = await newClient(other.services);
      await remembered(store, services, revoked.token.access_token);
      await remembered(store, services, disabled.token.access_token);
      await other.services.tokens.revoke(revoked.auth, revoked.token.access_token);
      await eventually(
        async () => !(await accepts(services, revoked.token.access_token)),
        'the revoked token is refused',
      );
      await other.services.access.updateUser(disabled.email, { disabled: true }, SETUP);
      await eventually(
        async () => !(await accepts(services, disabled.token.access_token)),
        "the disabled user's token is refused",
      );
    },
  );

  it.skipIf(TEST_DIALECT !== 'postgres')(
    'answers from memory while nothing is announced, and forgets on an operator’s own SQL',
    async () => {
      const { auth, email, token } = await newClient(services);
      await remembered(store, services, token.access_token);
      // Unannounced (its trigger off), the revocation is not seen: the grant is remembered.
      await sql`alter table credentials disable trigger credentials_grants_changed`.execute(store.db);
      await sql`update credentials set revoked_at = ${new Date().toISOString()} where client_id = ${auth.clientId}`.execute(
        store.db,
      );
      await sql`alter table credentials enable trigger credentials_grants_changed`.execute(store.db);
      expect(await accepts(services, token.access_token)).toBe(true);
      // Any announced change forgets it: here a user disabled by hand, as an operator would.
      await sql`update users set disabled = 1 where email = ${email}`.execute(store.db);
      await eventually(async () => !(await accepts(services, token.access_token)), 'the token is refused');
    },
  );

  it.skipIf(TEST_DIALECT !== 'postgres')(
    'announces nothing for the writes of token requests, and every revocation',
    async () => {
      const listener = new pg.Client({ connectionString: url });
      await listener.connect();
      others.push({ close: () => listener.end() });
      const notices: string[] = [];
      listener.on('notification', (message) => notices.push(message.channel));
      await listener.query(`listen ${GRANT_CHANGES_CHANNEL}`);
      const { auth, token } = await newClient(services);
      const before = notices.length;
      const again = await services.tokens.clientCredentialsGrant(auth);
      await services.tokens.refreshGrant(auth, token.refresh_token);
      expect(await accepts(services, again.access_token)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(notices.length).toBe(before);
      await services.tokens.revoke(auth, again.access_token);
      await eventually(() => notices.length > before, 'the revocation is announced');
    },
  );

  it.skipIf(TEST_DIALECT !== 'postgres')(
    'remembers nothing while its notice connection is lost, and again once it listens',
    async () => {
      const { auth, token } = await newClient(services);
      await remembered(store, services, token.access_token);
      await sql`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and query ilike ${`listen ${GRANT_CHANGES_CHANNEL}%`}`.execute(
        store.db,
      );
      await eventually(() => grantCacheOf(store)?.isListening === false, 'the instance stops listening');
      // A change it cannot hear of counts at once: nothing is answered from memory.
      await sql`alter table credentials disable trigger credentials_grants_changed`.execute(store.db);
      await sql`update credentials set revoked_at = ${new Date().toISOString()} where client_id = ${auth.clientId}`.execute(
        store.db,
      );
      await sql`alter table credentials enable trigger credentials_grants_changed`.execute(store.db);
      expect(await accepts(services, token.access_token)).toBe(false);
      await eventually(() => grantCacheOf(store)?.isListening === true, 'the instance listens again');
    },
  );
});
