import type { AuthStore } from '../modules/auth/store.js';
import { createCredentialStore } from './auth-credentials.js';
import { createAuthFailureStore } from './auth-failure-store.js';
import { createTokenRevocations, createTokenStore } from './auth-tokens.js';
import { createUserStore } from './auth-users.js';
import type { Store } from './store.js';

/**
 * The auth module's port over Kysely; the same statements on SQLite and PostgreSQL, except the
 * row locks that only PostgreSQL needs. Composed of its parts: users (`auth-users.ts`),
 * credentials (`auth-credentials.ts`), tokens (`auth-tokens.ts`) and the counters of failed
 * authentications (`auth-failure-store.ts`).
 */
export function createAuthStore(store: Store): AuthStore {
  return {
    ...createUserStore(store),
    ...createCredentialStore(store),
    ...createTokenStore(store),
    ...createTokenRevocations(store),
    ...createAuthFailureStore(store),
  };
}
