import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createServices } from '../../src/composition/services.js';
import type { Store } from '../../src/storage/store.js';
import { testClock } from '../helpers/clock.js';
import { createTestStore } from '../helpers/store.js';

const built = vi.hoisted(() => ({ processors: 0 }));

vi.mock('../../src/modules/accounting/processor.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/modules/accounting/processor.js')>();
  class CountedProcessor extends original.AccountingProcessor {
    constructor(...args: ConstructorParameters<typeof original.AccountingProcessor>) {
      super(...args);
      built.processors += 1;
    }
  }
  return { ...original, AccountingProcessor: CountedProcessor };
});

/**
 * Issue 20, point 3: the main thread builds its processor only when processing runs there; with
 * the processing thread it would only sit idle, holding a flow runner. Issue 21: services that
 * process elsewhere have no processor at all.
 */
describe('createServices', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    ({ store, dispose } = await createTestStore());
    built.processors = 0;
  });
  afterEach(async () => dispose());

  const settings = { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800, businessDate: undefined };
  const servicesOf = () => createServices(store, testClock(), settings, { processing: 'here' });

  it('builds no processor while none is used, and closes without one', async () => {
    const services = servicesOf();
    await services.close();
    expect(built.processors).toBe(0);
  });

  it('builds one processor on first use and keeps it', async () => {
    const services = servicesOf();
    expect(services.processor).toBe(services.processor);
    expect(await services.processor.drain()).toBe(0);
    await services.close();
    expect(built.processors).toBe(1);
  });

  it('has no processor when processing runs elsewhere, nor when it runs nowhere', async () => {
    for (const services of [
      createServices(store, testClock(), settings, { processing: { wake: () => {} } }),
      createServices(store, testClock(), settings),
    ]) {
      expect('processor' in services).toBe(false);
      await services.close();
    }
    expect(built.processors).toBe(0);
  });
});
