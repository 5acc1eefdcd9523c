import { describe, expect, it } from 'vitest';
import { newIngestionId } from '../../src/lib/ids.js';
import { COUNTER_STRIPES, counterStripe } from '../../src/storage/counter-stripes.js';

describe('counter stripes', () => {
  it('give a session one stripe, always the same, and spread sessions over every stripe', () => {
    const ids = Array.from({ length: 1600 }, () => newIngestionId());
    const perStripe = new Array<number>(COUNTER_STRIPES).fill(0);
    for (const id of ids) {
      const stripe = counterStripe(id);
      expect(counterStripe(id)).toBe(stripe);
      expect(Number.isInteger(stripe) && stripe >= 0 && stripe < COUNTER_STRIPES).toBe(true);
      perStripe[stripe] = (perStripe[stripe] ?? 0) + 1;
    }
    // 100 sessions per stripe on average; none far from it.
    expect(Math.min(...perStripe)).toBeGreaterThan(50);
    expect(Math.max(...perStripe)).toBeLessThan(150);
  });
});
