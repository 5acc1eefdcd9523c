import { describe, expect, it } from 'vitest';
import { newTimeOrderedUuid } from '../../src/lib/ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix milliseconds of a version 7 UUID (its first 48 bits). */
function millisecondsOf(uuid: string): number {
  return Number.parseInt(uuid.replaceAll('-', '').slice(0, 12), 16);
}

describe('time-ordered UUIDs', () => {
  it('are RFC 9562 version 7 UUIDs carrying the current millisecond', () => {
    const before = Date.now();
    const ids = Array.from({ length: 1000 }, () => newTimeOrderedUuid());
    const after = Date.now();
    for (const id of ids) {
      expect(id).toMatch(UUID_V7);
      expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before);
      expect(millisecondsOf(id)).toBeLessThanOrEqual(after);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('sort later when made in a later millisecond', async () => {
    const first = newTimeOrderedUuid();
    const startMs = Date.now();
    while (Date.now() === startMs) await new Promise((resolve) => setTimeout(resolve, 1));
    const second = newTimeOrderedUuid();
    expect(second > first).toBe(true);
  });
});
