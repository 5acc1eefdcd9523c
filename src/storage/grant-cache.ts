import { performance } from 'node:perf_hooks';
import type { TokenGrantView } from '../modules/auth/store.js';
import type { NoticeSubscriber } from './postgres/notices.js';

/** How long a remembered grant answers at most, even when no change is announced. */
export const GRANT_REMEMBERED_MS_MAX = 30_000;
/** Grants remembered at most; the oldest is forgotten first. */
export const GRANTS_REMEMBERED_MAX = 10_000;
/**
 * The PostgreSQL channel on which every change that can refuse a remembered grant is announced:
 * a token or its family revoked, a credential revoked, re-issued or moved to another owner, a
 * user's roles changed or disabled, any of these rows deleted (migration 0030's triggers).
 */
export const GRANT_CHANGES_CHANNEL = 'ledgerflow_grants';

/**
 * The access-token grants one service instance has read from PostgreSQL, so that a client's
 * requests do not each read theirs again (docs/adr/0031-access-grants-remembered.md). A grant is
 * answered from memory only while the instance listens to `GRANT_CHANGES_CHANNEL`: any notice
 * there, a change made by this instance (`forget`) and every change of listening forget them
 * all. A read that started before a forgetting is answered but not remembered, so a grant read
 * before a revocation is never kept after it. Expiry is not the cache's business: the token
 * service checks the times of every grant it gets.
 */
export class GrantCache implements NoticeSubscriber {
  readonly #grants = new Map<string, { grant: TokenGrantView; atMs: number }>();
  readonly #nowMs: () => number;
  #generation = 0;
  #listening = false;

  /** `nowMs` is a monotonic clock in milliseconds (tests pass their own). */
  constructor(nowMs: () => number = () => performance.now()) {
    this.#nowMs = nowMs;
  }

  /** Whether grants are remembered now: the instance receives the announced changes. */
  get isListening(): boolean {
    return this.#listening;
  }

  /** The grant of `tokenHash`, remembered or read by `read`; an unknown token is never remembered. */
  async grant(
    tokenHash: string,
    read: (tokenHash: string) => Promise<TokenGrantView | undefined>,
  ): Promise<TokenGrantView | undefined> {
    const remembered = this.#grants.get(tokenHash);
    if (remembered !== undefined && this.#nowMs() - remembered.atMs < GRANT_REMEMBERED_MS_MAX)
      return remembered.grant;
    const generation = this.#generation;
    const grant = await read(tokenHash);
    if (grant !== undefined && this.#listening && generation === this.#generation) {
      this.#grants.delete(tokenHash);
      if (this.#grants.size >= GRANTS_REMEMBERED_MAX) {
        const oldest = this.#grants.keys().next().value;
        if (oldest !== undefined) this.#grants.delete(oldest);
      }
      this.#grants.set(tokenHash, { grant, atMs: this.#nowMs() });
    }
    return grant;
  }

  /** Forgets every grant, and every read in flight: a change that can refuse one committed. */
  forget(): void {
    this.#grants.clear();
    this.#generation += 1;
  }

  notice(): void {
    this.forget();
  }

  listening(on: boolean): void {
    this.#listening = on;
    this.forget();
  }
}
