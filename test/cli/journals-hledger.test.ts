import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

const HLEDGER = '/usr/bin/hledger';

/**
 * Issue 5: the books as exported with `journals export --format ledger` are checked by hledger,
 * a tool accountants trust: every transaction balances, and its balances per accounting
 * configuration equal GET /api/v1/balances. Issue "A user's first day", point 7: a plain
 * `hledger balance` keeps accounting configurations and nodes apart. Posted journals are
 * cleared and unposted ones pending, so `hledger balance --cleared` is the API's balances. CI installs hledger (.ci/run), so there it never
 * skips.
 */
describe.runIf(existsSync(HLEDGER) || process.env.CI !== undefined)(
  'ledger export checked by hledger',
  () => {
    let service: RunningService;
    let dir: string;
    beforeAll(async () => {
      service = await startService({ businessDate: '2026-11-20' });
      dir = mkdtempSync(join(tmpdir(), 'ledgerflow-hledger-'));
      const token = await service.tokenFor(['bulk-operator']);
      expect(
        (
          await service.call(token, {
            method: 'PUT',
            url: '/api/v1/configuration/bulk',
            payload: realisticConfiguration(),
          })
        ).statusCode,
      ).toBe(200);
      const session = await service.call(token, {
        method: 'POST',
        url: '/api/v1/ingestions',
        payload: { namespace: 'ledger', entity: 'businessEvent' },
      });
      const data = [
        businessEvent({ amount: '123456789012345.67' }),
        businessEvent({ amount: '12.345' }),
        businessEvent({ amount: '-40.10', eventType: 'FEE_CHARGED' }),
        businessEvent({ eventType: 'INTEREST_ACCRUAL', amount: '3.33', effectiveDate: '2026-11-19' }),
        businessEvent({ legalEntity: 'LF_US', branch: 'NYC', currency: 'USD', amount: '700' }),
        // After the business date: unposted journals, which the API's balances leave out.
        businessEvent({ amount: '5000', effectiveDate: '2026-11-27' }),
        businessEvent({
          legalEntity: 'LF_US',
          branch: 'NYC',
          currency: 'USD',
          amount: '9',
          effectiveDate: '2026-12-01',
        }),
      ];
      expect(
        (
          await service.call(token, {
            method: 'POST',
            url: `/api/v1/ingestions/${session.json().ingestionId}`,
            payload: { data },
          })
        ).statusCode,
      ).toBe(201);
      await service.services.processor.drain();
    });
    afterAll(async () => {
      await service?.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    it('exports every journal, posted cleared and unposted pending; balance --cleared equals the API', async () => {
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
      const books = readFileSync(file, 'utf8');
      expect(books).toContain('123456789012345.67 EUR');
      expect(books).toMatch(/^2026-11-20 \* /m);
      expect(books).toMatch(/^2026-11-27 ! /m);
      // `check` fails on any transaction that does not balance.
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
            if (amount !== '0') balances.set(`${account} ${currency}`, scaled(amount));
          }
        }
        return balances;
      };

      // The documented `hledger balance --cleared`: every account is CONFIG:NODE VALUES:ACCOUNT,
      // so IFRS and LOCAL_GAAP, and the LF_NL and LF_US nodes, are never added together, and
      // each balance is the API's balance of that configuration, node, account and currency:
      // posted journals only, as the API counts them.
      const token = await service.tokenFor(['viewer']);
      const api = (await service.call(token, { method: 'GET', url: '/api/v1/balances' })).json().data as {
        accountingConfig: string;
        node: Record<string, string>;
        account: string;
        currency: string;
        balance: string;
      }[];
      expect(new Set(api.map((row) => row.accountingConfig))).toEqual(new Set(['IFRS', 'LOCAL_GAAP']));
      expect(new Set(api.map((row) => row.node.legalEntity))).toEqual(new Set(['LF_NL', 'LF_US']));
      const expected = new Map<string, bigint>();
      for (const row of api) {
        if (scaled(row.balance) === 0n) continue;
        const account = [row.accountingConfig, ...Object.values(row.node), row.account].join(':');
        expected.set(`${account} ${row.currency}`, scaled(row.balance));
      }
      expect(hledgerBalances('--cleared')).toEqual(expected);
      // The unposted journals are in the file, pending: without --cleared the books differ.
      expect(hledgerBalances()).not.toEqual(expected);
      expect(hledgerBalances('--pending').size).toBeGreaterThan(0);

      // Summed per accounting configuration (depth 1) every currency nets to zero: each
      // configuration balances on its own.
      expect(hledgerBalances('--depth', '1')).toEqual(new Map());
      expect(hledgerBalances('--depth', '1', '--cleared')).toEqual(new Map());
    });
  },
);
