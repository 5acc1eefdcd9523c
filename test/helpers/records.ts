import { randomUUID } from 'node:crypto';
import { TEST_BUSINESS_DATE } from './clock.js';

/** A valid `loans/loanTransaction` record of the realistic fixture, dated on the tests' business date; `n` varies it. */
export function loanRecord(n: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    transactionId: randomUUID(),
    transactionType: n % 2 === 0 ? 'DISBURSE' : 'FEE',
    valueDate: TEST_BUSINESS_DATE,
    amount: `${1000 + n}.${String(n % 100).padStart(2, '0')}`,
    currency: 'EUR',
    legalEntity: 'LF_NL',
    branch: 'AMS',
    productCode: 'MORTGAGE',
    installmentNumber: n,
    ...overrides,
  };
}

/** `count` valid loan records. */
export function loanRecords(count: number, start = 0): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => loanRecord(start + i));
}

/** A `ledger/businessEvent` record of the realistic fixture, dated on the tests' business date. */
export function businessEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    eventType: 'LOAN_DISBURSEMENT',
    effectiveDate: TEST_BUSINESS_DATE,
    amount: '1000.00',
    currency: 'EUR',
    legalEntity: 'LF_NL',
    branch: 'AMS',
    productCode: 'MORTGAGE',
    ...overrides,
  };
}
