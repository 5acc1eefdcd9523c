import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestHashCost } from '../../src/modules/auth/secret-hash.js';
import { createTestApp, form, type TestApp } from '../helpers/app.js';

/** Requests of each kind per measurement, sent alternately so both see the same machine load. */
const SAMPLES_PER_KIND = 30;
/** Untimed requests of each kind first, so that caches and the thread pool are warm. */
const WARMUP_PER_KIND = 3;
/**
 * Largest ratio allowed between the two kinds, of the medians and of the 10th percentiles.
 * Both kinds run one scrypt verification (tens of milliseconds); a path that skipped it would
 * answer in about a millisecond, a ratio of ten or more, so this bound finds a leak while
 * leaving room for the noise of a loaded two-core machine.
 */
const TIME_RATIO_MAX = 1.5;

/** The value below which `fraction` of the sorted values lie (nearest rank). */
function quantile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? 0;
}

function ratio(a: number, b: number): number {
  return Math.max(a, b) / Math.min(a, b);
}

let addressCounter = 0;

/**
 * A new client address for each request: failed attempts are slowed per (client, address) and
 * refused per address after a flood, which would otherwise time the limiter, not the check.
 */
function nextAddress(): string {
  addressCounter += 1;
  return `10.${(addressCounter >> 16) & 255}.${(addressCounter >> 8) & 255}.${addressCounter & 255}`;
}

interface Comparison {
  medians: [number, number];
  lowQuantiles: [number, number];
  ok: boolean;
}

/**
 * Times `a` and `b` alternately through `app.inject` and compares the medians and the 10th
 * percentiles (the least disturbed by other work on the machine) of the two.
 */
async function compare(t: TestApp, a: () => InjectOptions, b: () => InjectOptions): Promise<Comparison> {
  const times: [number[], number[]] = [[], []];
  const kinds = [a, b] as const;
  for (let i = 0; i < WARMUP_PER_KIND + SAMPLES_PER_KIND; i += 1) {
    // Alternate which kind goes first, so neither always follows the other.
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) {
      const kind = kinds[k as 0 | 1];
      const started = process.hrtime.bigint();
      const response = await t.app.inject({ ...kind(), remoteAddress: nextAddress() });
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      expect([401, 400]).toContain(response.statusCode);
      if (i >= WARMUP_PER_KIND) times[k as 0 | 1].push(elapsedMs);
    }
  }
  const [x, y] = times.map((list) => [...list].sort((p, q) => p - q)) as [number[], number[]];
  const medians: [number, number] = [quantile(x, 0.5), quantile(y, 0.5)];
  const lowQuantiles: [number, number] = [quantile(x, 0.1), quantile(y, 0.1)];
  return {
    medians,
    lowQuantiles,
    ok: ratio(...medians) <= TIME_RATIO_MAX && ratio(...lowQuantiles) <= TIME_RATIO_MAX,
  };
}

/** Measures once, and once more when the first measurement is out of bounds (a burst of load). */
async function expectSameTime(t: TestApp, a: () => InjectOptions, b: () => InjectOptions): Promise<void> {
  let result = await compare(t, a, b);
  if (!result.ok) result = await compare(t, a, b);
  const shown = (pair: [number, number]) => pair.map((ms) => `${ms.toFixed(1)} ms`).join(' vs ');
  expect(result.ok, `medians ${shown(result.medians)}, 10th percentiles ${shown(result.lowQuantiles)}`).toBe(
    true,
  );
}

/**
 * Response times must not tell which client ids and sign-in e-mails exist: a wrong secret of a
 * known client and any secret of an unknown client cost one scrypt verification each (the
 * unknown one against a dummy hash, `modules/auth/secret-hash.ts`), and so do a wrong password
 * of a known user and a sign-in of an unknown e-mail.
 */
describe('failed authentication takes the same time whether the name exists or not', () => {
  let t: TestApp;
  const knownEmail = 'known-user@example.test';
  let known: { clientId: string; clientSecret: string };
  beforeAll(async () => {
    // The real scrypt cost, whose time a leak would show missing.
    useTestHashCost(false);
    t = await createTestApp();
    await t.services.access.createUser(
      {
        email: knownEmail,
        roles: ['viewer'],
        password: 'the right password, long enough',
      },
      { actor: { user: 'test-setup' } },
    );
    known = (
      await t.services.access.createCredential({ ownerEmail: knownEmail }, { actor: { user: 'test-setup' } })
    ).answer;
  });
  afterAll(async () => t?.close());

  const tokenRequest = (clientId: string, clientSecret: string) => (): InjectOptions => ({
    method: 'POST',
    url: '/auth/token',
    ...form({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });

  const signIn = (email: string) => (): InjectOptions => ({
    method: 'POST',
    url: '/admin/login',
    ...form({ email, password: 'a wrong password of some length' }),
  });

  it('token endpoint: a wrong secret of a known client, and an unknown client', async () => {
    await expectSameTime(
      t,
      tokenRequest(known.clientId, `${known.clientSecret}-wrong`),
      tokenRequest('lfc_no-such-client-0123456789', `${known.clientSecret}-wrong`),
    );
  }, 120_000);

  it('administration sign-in: a wrong password of a known user, and an unknown e-mail', async () => {
    await expectSameTime(t, signIn(knownEmail), signIn('nobody-at-all@example.test'));
  }, 120_000);
});
