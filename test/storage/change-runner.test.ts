import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.js';
import { type Change, ChangeRunner } from '../../src/modules/changes/runner.js';
import { type ChangeTables, createChangeStore } from '../../src/storage/changes/change-store.js';
import type { Store } from '../../src/storage/store.js';
import { barrier } from '../helpers/barrier.js';
import { testClock } from '../helpers/clock.js';
import { createTestStore, TEST_DIALECT } from '../helpers/store.js';

const ACTOR = { user: 'ops@example.test', clientId: 'lfc_ops' };

/** A subscription's creation that meets `meet` once its row is written, inside the transaction. */
function creation(
  meet: () => Promise<void>,
  url = 'https://hooks.example.com/a',
): Change<string, { id: number }, ChangeTables> {
  return {
    action: 'webhooks.subscription-create',
    async apply(tx, description, { at, actor }) {
      const row = await tx.webhooks.createSubscription({
        url,
        eventTypes: ['ingestion.closed'],
        description,
        status: 'active',
        createdAt: at,
        createdBy: actor.user,
      });
      await meet();
      return { answer: { id: row.id }, audit: { details: { subscriptionId: row.id } } };
    },
  };
}

/** The change runner over each store: its transaction, key, dry run and audit rules. */
describe('change runner', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  let runner: ChangeRunner<ChangeTables>;

  beforeEach(async () => {
    ({ store, dispose } = await createTestStore());
    runner = new ChangeRunner(createChangeStore(store), testClock());
  });
  afterEach(async () => dispose());

  const subscriptions = async () =>
    (await store.db.selectFrom('event_subscriptions').select('id').execute()).length;
  const auditEntries = async () => (await store.db.selectFrom('audit_log').select('action').execute()).length;
  const alone = async () => {};

  it('makes one change of two runs at once under one key: the later one is rolled back and answers the first', async () => {
    // On PostgreSQL both transactions hold a new row when they meet, so the key is taken while
    // the later one runs; SQLite runs one write transaction at a time, so they cannot meet.
    const meet = TEST_DIALECT === 'postgres' ? barrier(2) : alone;
    const change = creation(meet);
    const both = await Promise.all([
      runner.run(change, 'x', { actor: ACTOR, idempotencyKey: 'k' }),
      runner.run(change, 'x', { actor: ACTOR, idempotencyKey: 'k' }),
    ]);
    expect(both[0].answer).toEqual(both[1].answer);
    expect(both.map((outcome) => outcome.replayed).sort()).toEqual([false, true]);
    expect(await subscriptions()).toBe(1);
    expect(await auditEntries()).toBe(1);
  });

  it('keeps keys per client: another client may use the same key for another request', async () => {
    await runner.run(creation(alone), 'x', { actor: ACTOR, idempotencyKey: 'k' });
    const other = await runner.run(creation(alone, 'https://hooks.example.com/b'), 'y', {
      actor: { user: 'b@example.test', clientId: 'lfc_b' },
      idempotencyKey: 'k',
    });
    expect(other.replayed).toBe(false);
    expect(await subscriptions()).toBe(2);
  });

  it('keeps nothing for a refused change, so its key stays free', async () => {
    const refusing: Change<string, { id: number }, ChangeTables> = {
      action: 'webhooks.subscription-create',
      async apply(tx, description, context) {
        await creation(alone).apply(tx, description, context);
        throw new AppError('conflict', 'refused after writing');
      },
    };
    await expect(runner.run(refusing, 'x', { actor: ACTOR, idempotencyKey: 'k' })).rejects.toThrow('refused');
    expect(await subscriptions()).toBe(0);
    const made = await runner.run(creation(alone), 'y', { actor: ACTOR, idempotencyKey: 'k' });
    expect(made.replayed).toBe(false);
    expect(await auditEntries()).toBe(1);
  });

  it('rolls a dry run back: no row, no audit entry, no kept answer, no after-commit effect', async () => {
    let after = 0;
    const change: Change<string, { id: number }, ChangeTables> = {
      action: 'webhooks.subscription-create',
      async apply(tx, description, context) {
        return {
          ...(await creation(alone).apply(tx, description, context)),
          afterCommit: () => (after += 1),
        };
      },
    };
    const dry = await runner.run(change, 'x', { actor: ACTOR, idempotencyKey: 'k', dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, replayed: false });
    expect(dry.answer.id).toBeGreaterThan(0);
    expect([await subscriptions(), await auditEntries(), after]).toEqual([0, 0, 0]);
    expect(await store.db.selectFrom('change_answers').selectAll().execute()).toEqual([]);
    await runner.run(change, 'x', { actor: ACTOR, idempotencyKey: 'k' });
    expect([await subscriptions(), await auditEntries(), after]).toEqual([1, 1, 1]);
  });
});
