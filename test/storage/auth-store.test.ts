import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuthStore, TokenRow } from '../../src/modules/auth/store.js';
import { accessTablesIn } from '../../src/storage/access-tables.js';
import { createAuthStore } from '../../src/storage/auth-store.js';
import type { Store } from '../../src/storage/store.js';
import { createTestStore } from '../helpers/store.js';

const AT = '2026-11-28T12:00:00.000Z';
const LATER = '2026-11-28T13:00:00.000Z';

function token(hash: string, kind: 'access' | 'refresh', familyId: string): TokenRow {
  return {
    tokenHash: hash.padEnd(64, '0'),
    kind,
    familyId,
    clientId: 'lfc_soak',
    issuedAt: AT,
    expiresAt: LATER,
    usedAt: null,
    revokedAt: null,
  };
}

/** The token statements that PostgreSQL runs as one statement each (one round trip under load). */
describe('the token store', () => {
  let store: Store;
  let auth: AuthStore;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    ({ store, dispose } = await createTestStore());
    auth = createAuthStore(store);
    // The user and the credential as their changes write them, in one transaction.
    await store.db.transaction().execute(async (trx) => {
      const access = accessTablesIn(trx, store.adapter);
      await access.insertUser({
        email: 'client@example.test',
        displayName: 'Client',
        passwordHash: null,
        roles: ['api-client'],
        disabled: false,
        createdAt: AT,
      });
      await access.upsertCredential({
        clientId: 'lfc_soak',
        secretHash: 'scrypt$hash-of-lfc_soak',
        ownerEmail: 'client@example.test',
        name: 'soak',
        createdAt: AT,
        expiresAt: LATER,
        revokedAt: null,
        lastUsedAt: null,
      });
    });
  });
  afterEach(async () => dispose());

  it('reads a credential with its owner in one read', async () => {
    const found = await auth.findCredentialWithOwner('lfc_soak');
    expect(found?.credential).toEqual(await auth.findCredential('lfc_soak'));
    expect(found?.owner).toMatchObject({
      email: 'client@example.test',
      displayName: 'Client',
      roles: ['api-client'],
      disabled: false,
      createdAt: AT,
    });
    expect(await auth.findCredentialWithOwner('lfc_unknown')).toBeUndefined();
  });

  it('stores a family with its tokens, or nothing when the family exists already', async () => {
    await auth.insertFamily('fam_1', 'lfc_soak', AT, [
      token('a1', 'access', 'fam_1'),
      token('r1', 'refresh', 'fam_1'),
    ]);
    expect(await auth.findToken('a1'.padEnd(64, '0'))).toMatchObject({
      kind: 'access',
      familyRevokedAt: null,
    });
    expect(await auth.findToken('r1'.padEnd(64, '0'))).toMatchObject({ kind: 'refresh', familyId: 'fam_1' });
    await expect(
      auth.insertFamily('fam_1', 'lfc_soak', AT, [token('a2', 'access', 'fam_1')]),
    ).rejects.toThrow();
    expect(await auth.findToken('a2'.padEnd(64, '0'))).toBeUndefined();
  });

  it('spends a refresh token once among concurrent rotations, storing only the winner’s tokens', async () => {
    await auth.insertFamily('fam_1', 'lfc_soak', AT, [token('r0', 'refresh', 'fam_1')]);
    const attempts = 8;
    const spent = await Promise.all(
      Array.from({ length: attempts }, (_, i) =>
        auth.rotateRefreshToken('r0'.padEnd(64, '0'), LATER, `sealed-${i}`, [
          token(`a${i}x`, 'access', 'fam_1'),
          token(`r${i}x`, 'refresh', 'fam_1'),
        ]),
      ),
    );
    expect(spent.filter(Boolean)).toHaveLength(1);
    const winner = spent.indexOf(true);
    const used = await auth.findToken('r0'.padEnd(64, '0'));
    expect(used).toMatchObject({ usedAt: LATER, answerSealed: `sealed-${winner}` });
    for (let i = 0; i < attempts; i += 1) {
      const issued = await auth.findToken(`r${i}x`.padEnd(64, '0'));
      if (i === winner)
        expect(issued).toMatchObject({ usedAt: null, revokedAt: null, familyRevokedAt: null });
      else expect(issued).toBeUndefined();
    }
    // Spent: a later rotation changes nothing.
    expect(
      await auth.rotateRefreshToken('r0'.padEnd(64, '0'), LATER, null, [token('a9', 'access', 'fam_1')]),
    ).toBe(false);
    expect(await auth.findToken('a9'.padEnd(64, '0'))).toBeUndefined();
  });
});
