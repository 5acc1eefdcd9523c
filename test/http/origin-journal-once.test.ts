import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processChunk } from '../../src/modules/accounting/processor.js';
import { createAccountingStore } from '../../src/storage/accounting/accounting-store.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { TEST_DIALECT } from '../helpers/store.js';

interface Journal {
  journalId: string;
  accountingConfig: string;
  lines: { originJournalId?: unknown }[];
}

/** A direct journal line of the realistic configuration (`ledger/journal`). */
const line = (origin: string, account: string, amount: string, more: Record<string, unknown> = {}) => ({
  coreDate: '2026-11-20',
  journalType: 'PERM',
  accountingConfig: 'IFRS',
  account,
  transactionAmount: amount,
  transactionCurrency: 'EUR',
  originJournalId: origin,
  legalEntity: 'LF_NL',
  branch: 'AMS',
  ...more,
});
const balanced = (origin: string, more: Record<string, unknown> = {}) => [
  line(origin, '1300', '250.00', more),
  line(origin, '2100', '-250.00', more),
];

describe('finding: a retried feed doubles the books', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    token = await t.tokenFor(['bulk-operator']);
    await uploadRealisticConfiguration(t, token);
  });
  afterAll(async () => t?.close());

  const get = async (url: string) => {
    const response = await t.call(token, { method: 'GET', url });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  /** Sends `data` as one chunk of a new `ledger/journal` session; returns the session id. */
  const send = async (data: unknown[]): Promise<string> => {
    const session = await t.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'ledger', entity: 'journal' },
    });
    const ingestionId = session.json().ingestionId as string;
    const chunk = await t.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}`,
      payload: { data },
    });
    expect(chunk.statusCode, chunk.body).toBe(201);
    return ingestionId;
  };
  const journalsOf = async (origin: string): Promise<Journal[]> =>
    ((await get('/api/v1/journals?limit=1000')).data as Journal[]).filter(
      (j) => j.lines[0]?.originJournalId === origin,
    );

  it('books an origin journal once: the same journal sent in a second session is duplicate-origin-journal', async () => {
    const first = await send(balanced('FEED-J1'));
    await t.services.processor.drain();
    const [booked] = await journalsOf('FEED-J1');
    expect(booked).toBeDefined();
    const balancesBefore = await get('/api/v1/balances');

    const retry = await send(balanced('FEED-J1'));
    await t.services.processor.drain();
    expect(await journalsOf('FEED-J1')).toEqual([booked]);
    expect(await get('/api/v1/balances')).toEqual(balancesBefore);
    const errors = await get(`/api/v1/processing-errors?ingestionId=${retry}`);
    expect(errors.data).toHaveLength(2);
    for (const error of errors.data) {
      expect(error).toMatchObject({
        code: 'duplicate-origin-journal',
        message: `origin journal "FEED-J1" is already journal ${booked?.journalId} of accounting configuration "IFRS"; an origin journal id is booked once per accounting configuration`,
      });
    }
    expect((await get(`/api/v1/processing-errors?ingestionId=${first}`)).data).toEqual([]);
  });

  it('books the same origin journal id once in each accounting configuration', async () => {
    await send(balanced('FEED-J2'));
    await send(balanced('FEED-J2', { accountingConfig: 'LOCAL_GAAP' }));
    await t.services.processor.drain();
    const journals = await journalsOf('FEED-J2');
    expect(journals.map((j) => j.accountingConfig).sort()).toEqual(['IFRS', 'LOCAL_GAAP']);
  });

  it('books a journal whose first sending failed, since nothing holds its origin journal id', async () => {
    await send([line('FEED-J3', '1300', '250.00'), line('FEED-J3', '2100', '-249.00')]);
    await send(balanced('FEED-J3'));
    await t.services.processor.drain();
    expect(await journalsOf('FEED-J3')).toHaveLength(1);
  });

  it('refuses a second journal row with the same origin journal id and accounting configuration in the store', async () => {
    const [booked] = await journalsOf('FEED-J1');
    const row = await t.store.db
      .selectFrom('journals')
      .selectAll()
      .where('journal_id', '=', booked?.journalId ?? '')
      .executeTakeFirstOrThrow();
    const { duplicate_of: _ignored, ...copy } = row;
    await expect(
      t.store.db
        .insertInto('journals')
        .values({ ...copy, journal_id: '00000000-0000-4000-8000-000000000001' })
        .execute(),
    ).rejects.toThrow(/unique/i);
  });
});

/**
 * Two instances on one PostgreSQL process two sessions that carry the same origin journal at the
 * same moment: one books it, the other records duplicate-origin-journal, never both booked.
 */
describe.runIf(TEST_DIALECT === 'postgres')(
  'finding: a retried feed doubles the books, two instances',
  () => {
    let t: TestApp;
    let second: Store;
    let token: string;
    beforeAll(async () => {
      t = await createTestApp({ businessDate: '2026-11-20' });
      token = await t.tokenFor(['bulk-operator']);
      await uploadRealisticConfiguration(t, token);
      const url = await t.store.db
        .selectNoFrom((eb) => eb.fn<string>('current_database', []).as('name'))
        .executeTakeFirstOrThrow();
      const base = new URL(process.env.TEST_DATABASE_URL ?? '');
      base.pathname = `/${url.name}`;
      second = openStore(base.toString());
    });
    afterAll(async () => {
      await second?.close();
      await t?.close();
    });

    it('books each origin journal once when two instances race on it, until one yields to the other', async () => {
      const { prepared } = await t.services.snapshots.current();
      const stores = [createAccountingStore(t.store), createAccountingStore(second)];
      const deadline = Date.now() + 30_000;
      let yielded = false;
      for (let round = 0; !yielded || round < 3; round += 1) {
        expect(Date.now(), 'the two instances never met on a direct journal').toBeLessThan(deadline);
        const origin = `RACE-${round}`;
        for (let copy = 0; copy < 2; copy += 1) {
          const session = await t.call(token, {
            method: 'POST',
            url: '/api/v1/ingestions',
            payload: { namespace: 'ledger', entity: 'journal' },
          });
          const ingestionId = session.json().ingestionId as string;
          const chunk = await t.call(token, {
            method: 'POST',
            url: `/api/v1/ingestions/${ingestionId}`,
            payload: { data: balanced(origin) },
          });
          expect(chunk.statusCode).toBe(201);
        }
        const at = new Date().toISOString();
        const processed = await Promise.all(
          stores.map((store) =>
            store.processNextChunk(prepared.revision, at, (claimed) =>
              processChunk(prepared, claimed, {
                ingestionId: claimed.ingestionId,
                now: new Date('2026-11-20T12:00:00Z'),
                businessDatePinned: '2026-11-20',
                newId: () => crypto.randomUUID(),
              }),
            ),
          ),
        );
        // Both found a chunk: when one of them processed nothing, it yielded the turn.
        if (processed.some((result) => result.kind === 'idle')) yielded = true;
        await t.services.processor.drain();
        const booked = await t.store.db
          .selectFrom('journals')
          .select('journal_id')
          .where('origin_journal_id', '=', origin)
          .execute();
        expect(booked).toHaveLength(1);
        const duplicates = await t.store.db
          .selectFrom('processing_errors')
          .select('code')
          .where('code', '=', 'duplicate-origin-journal')
          .where('message', 'like', `%"${origin}"%`)
          .execute();
        expect(duplicates).toHaveLength(2);
      }
    });
  },
);
