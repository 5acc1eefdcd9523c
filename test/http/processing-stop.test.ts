import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountingProcessor } from '../../src/modules/accounting/processor.js';
import { createAccountingStore } from '../../src/storage/accounting/accounting-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

/**
 * A stop seen between two records of a chunk gives the chunk up: nothing of it is written, no
 * processing error is recorded, nothing is reported, and the next start processes it whole. The
 * processing thread reads the stop from memory it shares with the main thread, so a stop on a
 * loaded machine does not wait for the work of the chunk in progress.
 */
describe('a stop in the middle of a chunk', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    token = await t.tokenFor(['bulk-operator']);
    await uploadRealisticConfiguration(t, token);
  });
  afterAll(async () => t?.close());

  const get = async (url: string) => (await t.call(token, { method: 'GET', url })).json();

  it('gives the chunk up, writes and reports nothing, and leaves it whole for the next start', async () => {
    const session = await ingestClosedSession(t, token, 'businessEvent', [
      businessEvent({ amount: '1.00' }),
      businessEvent({ amount: '2.00' }),
      businessEvent({ amount: '3.00' }),
    ]);
    const reported: unknown[] = [];
    // The stop comes once the first record is done: the work reads it before the second.
    let reads = 0;
    const stopping = new AccountingProcessor(createAccountingStore(t.store), t.services.snapshots, t.clock, {
      businessDatePinned: '2026-11-20',
      onError: (error) => reported.push(error),
      stopping: () => {
        reads += 1;
        return reads > 1;
      },
    });
    expect(await stopping.drain()).toBe(0);
    expect(reads).toBe(2);
    expect(reported).toEqual([]);
    expect(await get(`/api/v1/ingestions/${session}`)).toMatchObject({ processingStatus: 'pending' });
    expect((await get(`/api/v1/journals?ingestionId=${session}`)).totalSize).toBe(0);
    expect((await get(`/api/v1/processing-errors?ingestionId=${session}`)).totalSize).toBe(0);

    const next = new AccountingProcessor(createAccountingStore(t.store), t.services.snapshots, t.clock, {
      businessDatePinned: '2026-11-20',
      onError: (error) => reported.push(error),
    });
    expect(await next.drain()).toBe(3);
    expect(reported).toEqual([]);
    expect(await get(`/api/v1/ingestions/${session}`)).toMatchObject({ processingStatus: 'completed' });
    // LF_NL/AMS has both bases: two journals per event.
    expect((await get(`/api/v1/journals?ingestionId=${session}`)).totalSize).toBe(6);
  });
});
