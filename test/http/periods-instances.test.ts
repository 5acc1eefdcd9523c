import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type ServicesProcessingHere } from '../../src/composition/services.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';
import { ingestClosedSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { TEST_DIALECT } from '../helpers/store.js';

/**
 * Two service instances on one PostgreSQL (issue 27): a period closed, locked or reopened through
 * one applies to the processing of the other from its next chunk, through the version counter
 * its claims read, with no restart and no message between them.
 */
describe.runIf(TEST_DIALECT === 'postgres')('period states shared by two instances', () => {
  const clock = testClock();
  const AMS = { legalEntity: 'LF_NL', branch: 'AMS' };
  let t: TestApp;
  let second: Store;
  let other: ServicesProcessingHere;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({}, { clock });
    token = await t.tokenFor(['admin']);
    await uploadRealisticConfiguration(t, token);
    const name = await t.store.db
      .selectNoFrom((eb) => eb.fn<string>('current_database', []).as('name'))
      .executeTakeFirstOrThrow();
    const base = new URL(process.env.TEST_DATABASE_URL ?? '');
    base.pathname = `/${name.name}`;
    second = openStore(base.toString());
    other = createServices(
      second,
      clock,
      { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800, businessDate: undefined },
      { processing: 'here' },
    );
  });
  afterAll(async () => {
    await other?.close();
    await second?.close();
    await t?.close();
  });

  async function errorCodes(ingestionId: string): Promise<string[]> {
    const response = await t.call(token, {
      method: 'GET',
      url: `/api/v1/processing-errors?ingestionId=${ingestionId}`,
    });
    return (response.json().data as { code: string }[]).map((e) => e.code);
  }

  it("applies one instance's close, lock and reopening to the other's processing from its next chunk", async () => {
    const caller = { actor: { user: 'controller@example.test', clientId: 'controller' } };
    // The other instance has processed a chunk already, so it holds the states of then.
    const first = await ingestClosedSession(t, token, 'businessEvent', [
      businessEvent({ effectiveDate: '2026-11-02' }),
    ]);
    expect(await other.processor.drain()).toBe(1);
    expect(await errorCodes(first)).toEqual([]);

    // This instance locks November for both bases; the other refuses a posting dated in it.
    for (const accountingConfig of ['LOCAL_GAAP', 'IFRS'])
      await t.services.periods.act(
        'lock',
        { accountingConfig, node: AMS, firstDay: '2026-11-01' },
        undefined,
        caller,
      );
    const refused = await ingestClosedSession(t, token, 'businessEvent', [
      businessEvent({ effectiveDate: '2026-11-03' }),
    ]);
    expect(await other.processor.drain()).toBe(1);
    expect(await errorCodes(refused)).toEqual(['closed-period']);

    // The other instance reopens it; this instance, which processed nothing since, posts again.
    for (const accountingConfig of ['LOCAL_GAAP', 'IFRS'])
      await other.periods.act(
        'reopen',
        { accountingConfig, node: AMS, firstDay: '2026-11-01' },
        'audit adjustment',
        caller,
      );
    const posted = await ingestClosedSession(t, token, 'businessEvent', [
      businessEvent({ effectiveDate: '2026-11-04' }),
    ]);
    expect(await t.services.processor.drain()).toBe(1);
    expect(await errorCodes(posted)).toEqual([]);
    const listed = await t.services.periods.list({
      accountingConfig: 'LOCAL_GAAP',
      node: AMS,
      from: '2026-11-01',
      to: '2026-11-30',
    });
    expect(listed.periods[0]).toMatchObject({
      state: 'open',
      basis: 'reopened',
      reason: 'audit adjustment',
      snapshots: 1,
    });
  });
});
