import type { ConfigurationStore, StoredConfiguration } from './store.js';

/**
 * Keeps the configuration of the current revision together with the work prepared from it
 * (entity validators, accounting lookup tables), made once per revision and shared by every
 * request. Each use of `current()` reads only the revision number from the store, so an upload
 * through another instance is picked up on the next request; concurrent callers of a new
 * revision share one preparation. `latest()` reads nothing, for writes that check the revision
 * themselves.
 */
export class ConfigurationSnapshots<T> {
  readonly #store: ConfigurationStore;
  readonly #prepare: (stored: StoredConfiguration) => T;
  #current: { revision: number; value: Promise<{ stored: StoredConfiguration; prepared: T }> } | undefined;

  constructor(store: ConfigurationStore, prepare: (stored: StoredConfiguration) => T) {
    this.#store = store;
    this.#prepare = prepare;
  }

  /** The snapshot of the current revision, prepared once. */
  async current(): Promise<{ stored: StoredConfiguration; prepared: T }> {
    const revision = await this.#store.readRevision();
    if (this.#current?.revision !== revision) {
      const value = this.#store.read().then((stored) => ({ stored, prepared: this.#prepare(stored) }));
      this.#current = { revision, value };
      value.catch(() => {
        if (this.#current?.value === value) this.#current = undefined;
      });
    }
    const snapshot = await this.#current.value;
    // The document may have moved on between the two reads; the snapshot is still one whole
    // revision, which is all a caller may rely on.
    return snapshot;
  }

  /**
   * The snapshot prepared last, without reading the revision (the current one when none was):
   * for a caller whose write checks the revision it was made under itself and asks for the
   * current snapshot when it changed, as a chunk's write does (`stale`). Saves the statement
   * that reads the revision, one of the few a chunk costs.
   */
  async latest(): Promise<{ stored: StoredConfiguration; prepared: T }> {
    const last = this.#current;
    if (last === undefined) return this.current();
    return last.value.catch(() => this.current());
  }
}
