import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import {
  apiBalances,
  exportCheckedBooks,
  HLEDGER,
  hledgerBalances,
  scaled,
} from '../helpers/hledger-books.js';
import { businessEvent } from '../helpers/records.js';
import { expectCountersEqualCounts } from '../helpers/reprocessing.js';
import { expectBalancesKept } from '../storage/balances-oracle.js';
import { type RunningService, startService } from './helpers.js';

type Journal = {
  journalId: string;
  accountingConfig: string;
  reverses: string | null;
  withdrawnBy: string | null;
  lines: { transactionAmount: string }[];
};

/** A business event of the realistic configuration, as the property draws it. */
const eventArbitrary = fc
  .record({
    eventType: fc.constantFrom('LOAN_DISBURSEMENT', 'INTEREST_ACCRUAL', 'FEE_CHARGED'),
    cents: fc.integer({ min: -500_000, max: 500_000 }).filter((n) => n !== 0),
    // Around the business date 2026-11-20: posted, and a few unposted after it.
    day: fc.integer({ min: 2, max: 27 }),
    us: fc.boolean(),
  })
  .map(({ eventType, cents, day, us }) =>
    businessEvent({
      eventType,
      amount: (cents / 100).toFixed(2),
      effectiveDate: `2026-11-${String(day).padStart(2, '0')}`,
      ...(us ? { legalEntity: 'LF_US', branch: 'NYC', currency: 'USD' } : {}),
    }),
  );

/**
 * One step: post a session of events, reverse a selection drawn from what is stored, or roll back
 * events drawn from those posted (some already rolled back or reversed: those fail as processing
 * errors and change nothing).
 */
const postArbitrary = fc.record({
  kind: fc.constant('post' as const),
  events: fc.array(eventArbitrary, { minLength: 1, maxLength: 6 }),
});
const stepArbitrary = fc.oneof(
  fc.record({
    kind: fc.constant('rollback' as const),
    pick: fc.nat(),
    count: fc.integer({ min: 1, max: 3 }),
  }),
  postArbitrary,
  fc.record({
    kind: fc.constant('reverse' as const),
    by: fc.constantFrom('journalIds', 'ingestionId', 'range'),
    pick: fc.nat(),
    count: fc.integer({ min: 1, max: 4 }),
    postingDate: fc.constantFrom(undefined, '2026-11-20', '2026-11-24'),
  }),
);

/**
 * Issue 24: after any sequence of postings, reversals and rollbacks, the books exported for hledger pass
 * `hledger check`, hledger's cleared balances equal GET /api/v1/balances, the kept balances equal
 * the sums of the posted lines, the statistics counters equal what they count, and every
 * withdrawn journal has exactly one reversal journal that cancels it.
 */
describe.runIf(existsSync(HLEDGER) || process.env.CI !== undefined)(
  'reversals in the books, checked by hledger',
  () => {
    let service: RunningService;
    let dir: string;
    let token: string;
    const sessions: string[] = [];
    const posted: Record<string, unknown>[] = [];
    beforeAll(async () => {
      service = await startService({ businessDate: '2026-11-20' });
      dir = mkdtempSync(join(tmpdir(), 'ledgerflow-reversals-'));
      token = await service.tokenFor(['bulk-operator']);
      const put = await service.call(token, {
        method: 'PUT',
        url: '/api/v1/configuration/bulk',
        payload: realisticConfiguration(),
      });
      expect(put.statusCode, put.body).toBe(200);
    });
    afterAll(async () => {
      await service?.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    async function allJournals(): Promise<Journal[]> {
      const journals: Journal[] = [];
      let url = '/api/v1/journals?limit=1000';
      for (;;) {
        const page = (await service.call(token, { method: 'GET', url })).json();
        journals.push(...page.data);
        if (page.next === null) return journals;
        url = `/api/v1/journals?limit=1000&after=${page.next}`;
      }
    }

    async function checkBooks(run: number): Promise<void> {
      const file = join(dir, `books-${run}.ledger`);
      await exportCheckedBooks(service, file);
      expect(hledgerBalances(file, '--cleared')).toEqual(await apiBalances(service, token));
      expect(readFileSync(file, 'utf8').length).toBeGreaterThan(0);
      await expectBalancesKept(service.store, ['2026-11-19', '2026-11-20', '2026-11-24']);
      await expectCountersEqualCounts(service.store, service.clock);

      // Every withdrawn journal has one reversal, which reverses it and cancels it line by line.
      const journals = await allJournals();
      const byId = new Map(journals.map((j) => [j.journalId, j]));
      const withdrawnBy = new Map<string, string>();
      for (const journal of journals) {
        if (journal.withdrawnBy === null) continue;
        expect(withdrawnBy.has(journal.withdrawnBy)).toBe(false);
        withdrawnBy.set(journal.withdrawnBy, journal.journalId);
        const reversal = byId.get(journal.withdrawnBy);
        expect(reversal?.reverses).toBe(journal.journalId);
        expect(reversal?.lines.map((l) => scaled(l.transactionAmount))).toEqual(
          journal.lines.map((l) => -scaled(l.transactionAmount)),
        );
      }
    }

    it('holds after random sequences of postings, reversals and rollbacks', async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          // A run starts with a posting, so that its books are never empty.
          fc
            .tuple(postArbitrary, fc.array(stepArbitrary, { maxLength: 6 }))
            .map(([first, rest]) => [first, ...rest]),
          async (steps) => {
            run += 1;
            for (const step of steps) {
              if (step.kind === 'post') {
                sessions.push(await ingestClosedSession(service, token, 'businessEvent', step.events));
                posted.push(...step.events);
                await service.services.processor.drain();
                continue;
              }
              if (step.kind === 'rollback') {
                if (posted.length === 0) continue;
                const events = Array.from(
                  { length: step.count },
                  (_, i) => posted[(step.pick + i * 5) % posted.length] as Record<string, unknown>,
                );
                await ingestClosedSession(service, token, 'businessEventRollback', events);
                await service.services.processor.drain();
                continue;
              }
              const journals = await allJournals();
              if (journals.length === 0) continue;
              const selection =
                step.by === 'journalIds'
                  ? {
                      journalIds: Array.from(
                        { length: step.count },
                        (_, i) => journals[(step.pick + i * 7) % journals.length]?.journalId ?? '',
                      ),
                    }
                  : step.by === 'ingestionId'
                    ? { ingestionId: sessions[step.pick % sessions.length] ?? '' }
                    : {
                        accountingConfig: step.pick % 2 === 0 ? 'IFRS' : 'LOCAL_GAAP',
                        from: `2026-11-${String(2 + (step.pick % 20)).padStart(2, '0')}`,
                        to: '2026-11-27',
                      };
              const response = await service.call(token, {
                method: 'POST',
                url: '/api/v1/reversals',
                payload: {
                  selection,
                  reason: 'property',
                  ...(step.postingDate === undefined ? {} : { postingDate: step.postingDate }),
                },
              });
              // 422: nothing matched, or the posting date was before a selected journal's date.
              expect([200, 201, 422], response.body).toContain(response.statusCode);
              if (response.statusCode === 422)
                expect(['nothing-to-reverse', 'posting-date-closed']).toContain(
                  response.json().type.replace('urn:ledgerflow:problem:', ''),
                );
            }
            await checkBooks(run);
          },
        ),
        { numRuns: 6, seed: 24 },
      );
    }, 120_000);
  },
);
