import { describe, expect, it } from 'vitest';
import {
  canonicalEventText,
  EVENT_FINGERPRINT_LENGTH_CHARS,
  eventFingerprint,
  eventFingerprints,
  fingerprintAttributesOf,
} from '../../../src/modules/accounting/event-fingerprint.js';
import { eventsOf } from '../../../src/modules/accounting/event-rollback.js';
import type { TwinJournal } from '../../../src/modules/accounting/store.js';

/** The identity of a business event (issue 24): what makes two events identical, and what not. */
const attributes = fingerprintAttributesOf([
  { name: 'eventType', type: 'text' },
  { name: 'effectiveDate', type: 'date' },
  { name: 'amount', type: 'decimal' },
  { name: 'currency', type: 'text' },
  { name: 'tax', type: 'decimal' },
  { name: 'note', type: 'text' },
]);
const event = {
  eventType: 'LOAN_DISBURSEMENT',
  effectiveDate: '2026-11-20',
  amount: '1.50',
  currency: 'EUR',
};
const fingerprint = (e: Record<string, unknown>) => eventFingerprint(attributes, e);

describe('event fingerprint', () => {
  it('is 22 base64url characters, the same for the same event', () => {
    expect(fingerprint(event)).toMatch(new RegExp(`^[A-Za-z0-9_-]{${EVENT_FINGERPRINT_LENGTH_CHARS}}$`));
    expect(fingerprint({ ...event })).toBe(fingerprint(event));
  });

  it.each([
    ['1.5', 'trailing zeros'],
    ['01.500', 'leading and trailing zeros'],
    ['+1.5', 'a plus sign'],
  ])('compares decimals by value: %s (%s) is 1.50', (amount) => {
    expect(fingerprint({ ...event, amount })).toBe(fingerprint(event));
  });

  it('takes a whole JSON number as its decimal, and -0.00 as 0', () => {
    expect(fingerprint({ ...event, amount: 2 })).toBe(fingerprint({ ...event, amount: '2.00' }));
    expect(fingerprint({ ...event, amount: '-0.00' })).toBe(fingerprint({ ...event, amount: '0' }));
  });

  it('ignores the order of keys, and counts absent, null and an empty decimal alike', () => {
    const reordered = {
      currency: 'EUR',
      amount: '1.50',
      effectiveDate: '2026-11-20',
      eventType: 'LOAN_DISBURSEMENT',
    };
    expect(fingerprint(reordered)).toBe(fingerprint(event));
    expect(fingerprint({ ...event, tax: null, note: null })).toBe(fingerprint(event));
    expect(fingerprint({ ...event, tax: '' })).toBe(fingerprint(event));
  });

  it('tells apart any other difference: a value, a sign, a text case, an empty text', () => {
    const others = [
      { ...event, amount: '1.51' },
      { ...event, amount: '-1.50' },
      { ...event, currency: 'eur' },
      { ...event, effectiveDate: '2026-11-21' },
      { ...event, note: '' },
      { ...event, note: ' ' },
      { ...event, tax: '0' },
    ];
    const prints = new Set([fingerprint(event), ...others.map(fingerprint)]);
    expect(prints.size).toBe(others.length + 1);
  });

  it('reads only the attributes of the definition with a value, in name order', () => {
    expect(fingerprint({ ...event, unknown: 'x' })).toBe(fingerprint(event));
    expect(canonicalEventText(attributes, event)).toBe(
      '{"amount":"1.5","currency":"EUR","effectiveDate":"2026-11-20","eventType":"LOAN_DISBURSEMENT"}',
    );
    expect(canonicalEventText(attributes, event, true)).toBe(
      '{"amount":"1.5","currency":"EUR","effectiveDate":"2026-11-20","eventType":"LOAN_DISBURSEMENT","note":null,"tax":null}',
    );
  });

  it('is the same under a definition widened by an attribute the event has no value of', () => {
    const widened = fingerprintAttributesOf([
      { name: 'eventType', type: 'text' },
      { name: 'effectiveDate', type: 'date' },
      { name: 'amount', type: 'decimal' },
      { name: 'currency', type: 'text' },
      { name: 'tax', type: 'decimal' },
      { name: 'note', type: 'text' },
      { name: 'channel', type: 'text' },
    ]);
    expect(eventFingerprint(widened, event)).toBe(fingerprint(event));
    expect(eventFingerprint(widened, { ...event, channel: 'BRANCH' })).not.toBe(fingerprint(event));
  });
});

describe('the digests a rollback looks its twin up by', () => {
  /** The first form's plan of a definition without `note` (an attribute added later). */
  const before = fingerprintAttributesOf([
    { name: 'eventType', type: 'text' },
    { name: 'effectiveDate', type: 'date' },
    { name: 'amount', type: 'decimal' },
    { name: 'currency', type: 'text' },
    { name: 'tax', type: 'decimal' },
  ]);
  /** What the first form stored for `event` under that plan (computed by that form's code). */
  const storedV1 = 'z9m3oU2RWceaKbMCNqTZ3y';

  it('are the current digest alone when the store kept no first-form plan', () => {
    expect(eventFingerprints(attributes, [], event)).toEqual([fingerprint(event)]);
  });

  it('add the first-form digest under each kept plan, which a journal stored then carries', () => {
    const digests = eventFingerprints(attributes, [before], event);
    expect(digests).toEqual([fingerprint(event), storedV1]);
  });

  it('leave out a plan that lacks an attribute the event has a value of: that event is another one', () => {
    expect(eventFingerprints(attributes, [before], { ...event, note: 'x' })).toEqual([
      fingerprint({ ...event, note: 'x' }),
    ]);
  });
});

describe('the events of one record', () => {
  const journal = (id: string, config: string, reverses: string | null = null): TwinJournal => ({
    journalId: id,
    ingestionId: 'in',
    recordId: 1,
    coreDate: '2026-11-20',
    journalType: 'PERM',
    accountingConfig: config,
    node: {},
    reverses,
    withdrawnBy: null,
    lines: [],
  });

  it('splits the journals of two identical events a flow built from one record where a journal repeats', () => {
    const journals = [
      journal('a', 'IFRS'),
      journal('b', 'IFRS', 'a'),
      journal('c', 'LOCAL_GAAP'),
      journal('d', 'IFRS'),
      journal('e', 'IFRS', 'd'),
      journal('f', 'LOCAL_GAAP'),
    ];
    expect(eventsOf(journals).map((e) => e.map((j) => j.journalId))).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e', 'f'],
    ]);
  });
});
