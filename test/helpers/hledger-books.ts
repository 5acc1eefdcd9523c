import { execFileSync } from 'node:child_process';
import { expect } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { captureIo, type RunningService } from '../cli/helpers.js';

export const HLEDGER = '/usr/bin/hledger';

const SCALE = 10n ** 18n;

/** An exact decimal as an integer of 10^-18 units, so that sums compare exactly. */
export function scaled(amount: string): bigint {
  const [whole = '0', fraction = ''] = amount.replace('-', '').split('.');
  const value = BigInt(whole) * SCALE + BigInt(fraction.padEnd(18, '0'));
  return amount.startsWith('-') ? -value : value;
}

/** Writes the service's books to `file` in the ledger format and checks them with `hledger check`. */
export async function exportCheckedBooks(service: RunningService, file: string): Promise<void> {
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
  execFileSync(HLEDGER, ['-f', file, 'check'], { encoding: 'utf8' });
}

/** hledger's balances of `file` (with `args`), by `ACCOUNT CURRENCY`, zero ones left out. */
export function hledgerBalances(file: string, ...args: string[]): Map<string, bigint> {
  const csv = execFileSync(HLEDGER, ['-f', file, 'balance', '--flat', '--no-total', '-O', 'csv', ...args], {
    encoding: 'utf8',
  });
  const balances = new Map<string, bigint>();
  for (const line of csv.trim().split('\n').slice(1)) {
    const [, account = '', amounts = ''] = /^"(.*)","(.*)"$/.exec(line) ?? [];
    for (const part of amounts.split(', ')) {
      const [amount = '', currency = ''] = part.split(' ');
      if (amount !== '0' && amount !== '') balances.set(`${account} ${currency}`, scaled(amount));
    }
  }
  return balances;
}

/** `GET /api/v1/balances` keyed as the ledger export names accounts, zero ones left out. */
export async function apiBalances(service: RunningService, token: string): Promise<Map<string, bigint>> {
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
  return expected;
}
