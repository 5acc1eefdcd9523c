import { describe, expect, it } from 'vitest';
import type { TokenGrantView } from '../../src/modules/auth/store.js';
import { GRANT_REMEMBERED_MS_MAX, GRANTS_REMEMBERED_MAX, GrantCache } from '../../src/storage/grant-cache.js';

function grantOf(tokenHash: string): TokenGrantView {
  return {
    token: {
      tokenHash,
      kind: 'access',
      familyId: 'family',
      clientId: 'client',
      issuedAt: '2026-11-28T10:00:00.000Z',
      expiresAt: '2026-11-28T11:00:00.000Z',
      usedAt: null,
      revokedAt: null,
    },
    familyRevokedAt: null,
    credential: {
      clientId: 'client',
      secretHash: 'hash',
      ownerEmail: 'owner@example.test',
      name: 'credential',
      createdAt: '2026-11-28T10:00:00.000Z',
      expiresAt: '2027-11-28T10:00:00.000Z',
      revokedAt: null,
      lastUsedAt: null,
    },
    owner: {
      email: 'owner@example.test',
      displayName: 'Owner',
      passwordHash: null,
      roles: ['api-client'],
      disabled: false,
      createdAt: '2026-11-28T10:00:00.000Z',
    },
  };
}

/** A store's read of grants that counts its calls and can be held open. */
function countingRead() {
  const read = async (tokenHash: string) => {
    read.calls += 1;
    if (read.hold !== undefined) await read.hold;
    return tokenHash.startsWith('unknown') ? undefined : grantOf(tokenHash);
  };
  read.calls = 0;
  read.hold = undefined as Promise<void> | undefined;
  return read;
}

describe('the grants an instance remembers', () => {
  it('remembers a grant only while it listens to the announced changes', async () => {
    const cache = new GrantCache();
    const read = countingRead();
    await cache.grant('a', read);
    await cache.grant('a', read);
    expect(read.calls).toBe(2);
    cache.listening(true);
    await cache.grant('a', read);
    await cache.grant('a', read);
    expect(read.calls).toBe(3);
    cache.listening(false);
    await cache.grant('a', read);
    expect(read.calls).toBe(4);
  });

  it('forgets every grant on a notice, on forget and when listening starts again', async () => {
    const cache = new GrantCache();
    const read = countingRead();
    cache.listening(true);
    await cache.grant('a', read);
    cache.notice();
    await cache.grant('a', read);
    cache.forget();
    await cache.grant('a', read);
    cache.listening(true);
    await cache.grant('a', read);
    await cache.grant('a', read);
    expect(read.calls).toBe(4);
  });

  it('does not keep a grant read before a forgetting that came while it was read', async () => {
    const cache = new GrantCache();
    cache.listening(true);
    const read = countingRead();
    let release = () => {};
    read.hold = new Promise((resolve) => {
      release = resolve;
    });
    const pending = cache.grant('a', read);
    cache.notice();
    release();
    expect(await pending).toMatchObject({ token: { tokenHash: 'a' } });
    read.hold = undefined;
    await cache.grant('a', read);
    expect(read.calls).toBe(2);
  });

  it('never remembers an unknown token', async () => {
    const cache = new GrantCache();
    cache.listening(true);
    const read = countingRead();
    expect(await cache.grant('unknown', read)).toBeUndefined();
    expect(await cache.grant('unknown', read)).toBeUndefined();
    expect(read.calls).toBe(2);
  });

  it('reads a grant again once it has been remembered for the longest time', async () => {
    let now = 0;
    const cache = new GrantCache(() => now);
    cache.listening(true);
    const read = countingRead();
    await cache.grant('a', read);
    now = GRANT_REMEMBERED_MS_MAX - 1;
    await cache.grant('a', read);
    expect(read.calls).toBe(1);
    now = GRANT_REMEMBERED_MS_MAX;
    await cache.grant('a', read);
    expect(read.calls).toBe(2);
  });

  it('remembers at most its limit of grants, forgetting the oldest first', async () => {
    const cache = new GrantCache();
    cache.listening(true);
    const read = countingRead();
    for (let i = 0; i <= GRANTS_REMEMBERED_MAX; i += 1) await cache.grant(`t${i}`, read);
    expect(read.calls).toBe(GRANTS_REMEMBERED_MAX + 1);
    await cache.grant(`t${GRANTS_REMEMBERED_MAX}`, read);
    await cache.grant('t1', read);
    expect(read.calls).toBe(GRANTS_REMEMBERED_MAX + 1);
    await cache.grant('t0', read);
    expect(read.calls).toBe(GRANTS_REMEMBERED_MAX + 2);
  });
});
