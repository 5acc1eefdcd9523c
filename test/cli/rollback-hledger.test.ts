import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { seededRandom } from '../helpers/random.js';
import { businessEvent } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

const HLEDGER = '/usr/bin/hledger';
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
    const io = captureIo();
    const status = await runCli(
      [
        'journals',
        'export',
        '--format',
        'ledger',
        '--output',
        file,
        ...(await service.connectionArgs(['viewer'])),
      ],
      io,
    );
    expect(status, io.stderr()).toBe(0);
    expect(readFileSync(file, 'utf8').length).toBeGreaterThan(0);
    execFileSync(HLEDGER, ['-f', file, 'check'], { encoding: 'utf8' });

    const SCALE = 10n ** 18n;
    const scaled = (amount: string) => {
      const [whole = '0', fraction = ''] = amount.replace('-', '').split('.');
      const value = BigInt(whole) * SCALE + BigInt(fraction.padEnd(18, '0'));
      return amount.startsWith('-') ? -value : value;
    };
    const hledgerBalances = (...args: string[]) => {
      const csv = execFileSync(
        HLEDGER,
        ['-f', file, 'balance', '--flat', '--no-total', '-O', 'csv', ...args],
        {
          encoding: 'utf8',
        },
      );
      const balances = new Map<string, bigint>();
      for (const line of csv.trim().split('\n').slice(1)) {
        const [, account = '', amounts = ''] = /^"(.*)","(.*)"$/.exec(line) ?? [];
        for (const part of amounts.split(', ')) {
          const [amount = '', currency = ''] = part.split(' ');
          if (amount !== '0' && amount !== '') balances.set(`${account} ${currency}`, scaled(amount));
        }
      }
      return balances;
    };
    const api = (await service.call(token, { method: 'GET', url: '/api/v1/balances' })).json().data as {
      accountingConfig: string;
      node: Record<string, string>;
      account: string;
      currency: string;
      balance: string;
    }[];
    const expected = new Map<string, bigint>();
    for (const row of api) {
      if (scaled(row.balance) === 0n) continue;
      const account = [row.accountingConfig, ...Object.values(row.node), row.account].join(':');
      expected.set(`${account} ${row.currency}`, scaled(row.balance));
    }
    expect(hledgerBalances('--cleared')).toEqual(expected);
    expect(hledgerBalances('--depth', '1')).toEqual(new Map());
  });
});
