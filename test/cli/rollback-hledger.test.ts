import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { apiBalances, exportCheckedBooks, HLEDGER, hledgerBalances } from '../helpers/hledger-books.js';
import { seededRandom } from '../helpers/random.js';
import { businessEvent } from '../helpers/records.js';
import { type RunningService, startService } from './helpers.js';

const SEED = 24;
const ROUNDS = 6;

/**
 * Issue 24: after a seeded sequence of postings and rollbacks (duplicates, reversing journal
 * types, future dates, rollbacks of events rolled back already or never posted) the ledger
 * export passes `hledger check`, its cleared balances equal GET /api/v1/balances, and every
 * accounting configuration still nets to zero per currency.
 */
describe.runIf(existsSync(HLEDGER) || process.env.CI !== undefined)('ledger export after rollbacks', () => {
  let service: RunningService;
  let dir: string;
  let token: string;
  beforeAll(async () => {
    service = await startService({ businessDate: '2026-11-20' });
    dir = mkdtempSync(join(tmpdir(), 'ledgerflow-rollback-hledger-'));
    token = await service.tokenFor(['bulk-operator']);
    const put = await service.call(token, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode).toBe(200);
  });
  afterAll(async () => {
    await service?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const send = async (entity: string, data: unknown[]) => {
    const session = await service.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'ledger', entity },
    });
    const chunk = await service.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${session.json().ingestionId}`,
      payload: { data },
    });
    expect(chunk.statusCode, chunk.body).toBe(201);
    await service.services.processor.drain();
  };

  it('keeps the books checkable and equal to the API through postings and rollbacks', async () => {
    const random = seededRandom(SEED);
    const kinds = [
      (amount: string) => businessEvent({ amount }),
      (amount: string) => businessEvent({ amount, eventType: 'FEE_CHARGED' }),
      (amount: string) =>
        businessEvent({ amount, eventType: 'INTEREST_ACCRUAL', effectiveDate: '2026-11-19' }),
      (amount: string) => businessEvent({ amount, effectiveDate: '2026-11-27' }),
      (amount: string) => businessEvent({ amount, legalEntity: 'LF_US', branch: 'NYC', currency: 'USD' }),
    ];
    const posted: Record<string, unknown>[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const events = Array.from({ length: 8 }, () => {
        const kind = kinds[Math.floor(random() * kinds.length)] ?? kinds[0];
        // Few distinct amounts, so that identical events (duplicates) occur.
        const amount = `${1 + Math.floor(random() * 4)}.${random() < 0.5 ? '50' : '5'}`;
        return kind?.(amount) ?? {};
      });
      await send('businessEvent', events);
      posted.push(...events);
      // Roll back some of what was posted, some twice, and one never posted.
      const rollbacks = posted.filter(() => random() < 0.3);
      rollbacks.push(businessEvent({ amount: '999.99' }));
      await send('businessEventRollback', rollbacks);
    }
    const errors = await service.call(token, { method: 'GET', url: '/api/v1/processing-errors?limit=100' });
    const codes = new Set((errors.json().data as { code: string }[]).map((e) => e.code));
    expect(
      [...codes].every((code) => code === 'rollback-target-not-found' || code === 'already-rolled-back'),
    ).toBe(true);

    const withdrawn = await service.store.db
      .selectFrom('journals')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('withdrawn_by', 'is not', null)
      .executeTakeFirstOrThrow();
    expect(Number(withdrawn.n)).toBeGreaterThan(10);

    const file = join(dir, 'books.ledger');
    await exportCheckedBooks(service, file);
    expect(readFileSync(file, 'utf8').length).toBeGreaterThan(0);
    expect(hledgerBalances(file, '--cleared')).toEqual(await apiBalances(service, token));
    expect(hledgerBalances(file, '--depth', '1')).toEqual(new Map());
  });
});
