import { describe, expect, it } from 'vitest';
import {
  hashSecret,
  hashTurns,
  VerifiedSecretCache,
  verifySecret,
} from '../../../src/modules/auth/secret-hash.js';

describe('the cache of verified secrets', () => {
  it('hashes one secret once for many concurrent checks, and again only when it is not remembered', async () => {
    const stored = await hashSecret('right secret');
    let hashed = 0;
    const cache = new VerifiedSecretCache((secret, hash) => {
      hashed += 1;
      return verifySecret(secret, hash);
    });
    const nowMs = Date.now();
    const checks = await Promise.all(
      Array.from({ length: 16 }, () => cache.verify(stored, 'right secret', nowMs)),
    );
    expect(checks).toEqual(new Array(16).fill(true));
    expect(hashed).toBe(1);
    // Remembered: no hashing.
    expect(await cache.verify(stored, 'right secret', nowMs + 1000)).toBe(true);
    expect(hashed).toBe(1);
    // Wrong secrets are hashed (once for concurrent equal ones) and never remembered.
    const wrong = await Promise.all([
      cache.verify(stored, 'wrong secret', nowMs),
      cache.verify(stored, 'wrong secret', nowMs),
    ]);
    expect(wrong).toEqual([false, false]);
    expect(hashed).toBe(2);
    expect(await cache.verify(stored, 'wrong secret', nowMs)).toBe(false);
    expect(hashed).toBe(3);
  });

  it('runs at most two hashes at once and gives every check its own answer', async () => {
    const stored = await Promise.all(Array.from({ length: 6 }, (_, index) => hashSecret(`secret ${index}`)));
    let runningMax = 0;
    let waitingMax = 0;
    const watch = setInterval(() => {
      const turns = hashTurns();
      runningMax = Math.max(runningMax, turns.running);
      waitingMax = Math.max(waitingMax, turns.waiting);
    }, 0);
    const checks = await Promise.all(
      stored.flatMap((hash, index) => [verifySecret(`secret ${index}`, hash), verifySecret('wrong', hash)]),
    );
    clearInterval(watch);
    expect(checks).toEqual(stored.flatMap(() => [true, false]));
    expect(runningMax).toBe(2);
    expect(waitingMax).toBeGreaterThan(0);
    expect(hashTurns()).toEqual({ running: 0, waiting: 0 });
  });
});
