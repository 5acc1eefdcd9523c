import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import {
  createServices,
  type ServiceSettings,
  type ServicesProcessingHere,
} from '../../src/composition/services.js';
import { type AppDeps, buildApp } from '../../src/http/app.js';
import type { ManualClock } from '../../src/lib/clock.js';
import type { WhatIf } from '../../src/modules/configuration/service.js';
import type { Store } from '../../src/storage/store.js';
import { assertFixturesDateOpen, testClock } from './clock.js';
import { createTestStore } from './store.js';

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  /** The store's `DATABASE_URL`, for a second connection to the same database (another instance). */
  url: string;
  /** The services, with a processor on this thread that tests drain. */
  services: ServicesProcessingHere;
  clock: ManualClock;
  /** A bearer token of a new user with these roles (one credential per call). */
  tokenFor(roles: string[]): Promise<string>;
  /** A new credential of a new user with these roles. */
  credentialFor(roles: string[]): Promise<{ clientId: string; clientSecret: string; ownerEmail: string }>;
  /** `app.inject` with a bearer token. */
  call(token: string, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

let userCounter = 0;

/**
 * Builds the whole app on a fresh store with a manual clock, as the tests of every endpoint
 * need it. The clock starts at `TEST_NOW` (`clock.ts`), in the period of the fixtures' business
 * date, whatever the real date; a test that must see when the app reads it passes its own, and
 * one that starts where the fixtures' dates are closed fails at once, naming the period.
 */
export async function createTestApp(
  settings: Partial<ServiceSettings> = {},
  options: {
    file?: boolean;
    logger?: AppDeps['logger'];
    publicUrl?: string;
    clock?: ManualClock;
    whatIf?: WhatIf;
  } = {},
): Promise<TestApp> {
  const clock = options.clock ?? testClock();
  assertFixturesDateOpen(clock.now(), settings.businessDate);
  const { store, url, dispose } = await createTestStore(options);
  const services = createServices(
    store,
    clock,
    { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800, businessDate: undefined, ...settings },
    { processing: 'here', ...(options.whatIf === undefined ? {} : { whatIf: options.whatIf }) },
  );
  const app = await buildApp({
    store,
    services,
    logger: options.logger ?? false,
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
  });
  await app.ready();

  const credentialFor = async (roles: string[]) => {
    userCounter += 1;
    const email = `user${userCounter}-${Date.now()}@example.test`;
    await services.access.createUser({ email, roles }, { actor: { user: 'test-setup' } });
    const { answer: credential } = await services.access.createCredential(
      { ownerEmail: email },
      { actor: { user: 'test-setup' } },
    );
    return { clientId: credential.clientId, clientSecret: credential.clientSecret, ownerEmail: email };
  };

  return {
    app,
    store,
    url,
    services,
    clock,
    credentialFor,
    async tokenFor(roles) {
      const credential = await credentialFor(roles);
      const response = await services.tokens.clientCredentialsGrant(credential);
      return response.access_token;
    },
    call(token, options) {
      return app.inject({ ...options, headers: { ...options.headers, authorization: `Bearer ${token}` } });
    },
    async close() {
      await app.close();
      await dispose();
    },
  };
}

/** Form-encodes fields for the token endpoint. */
export function form(fields: Record<string, string>): { payload: string; headers: Record<string, string> } {
  return {
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  };
}
