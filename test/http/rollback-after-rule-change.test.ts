import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  canonicalEventText,
  fingerprintAttributesOf,
} from '../../src/modules/accounting/event-fingerprint.js';
import { up as keepFirstFormPlans } from '../../src/storage/migrations/0032-event-fingerprint-forms.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  ingestClosedSession,
  realisticConfiguration,
  uploadRealisticConfiguration,
} from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

/**
 * A rule change never makes earlier postings impossible to correct: a keep-data upload that adds
 * an optional attribute to the business event definition leaves the identity of every event
 * stored before unchanged, so its rollback still finds it, for journals stored under the current
 * fingerprint form and under the first one alike. And the dry runs of reprocessing and of a
 * keep-data upload answer, record by record, what the real run then does, rollbacks included.
 * Every test runs on SQLite and PostgreSQL.
 */

let t: TestApp;
let operator: string;

beforeEach(async () => {
  t = await createTestApp();
  operator = await t.tokenFor(['bulk-operator']);
  await uploadRealisticConfiguration(t, operator);
});
afterEach(async () => {
  await t.close();
});

/** The realistic configuration with one more optional attribute of the business event. */
function widenedConfiguration(): ReturnType<typeof realisticConfiguration> {
  const document = realisticConfiguration();
  const definition = document.configuration.businessEventDefinition as { attributes: unknown[] };
  definition.attributes.push({
    name: 'channel',
    label: 'Channel',
    role: 'attribute',
    source: 'input',
    type: 'text',
  });
  return document;
}

async function upload(document: object, query: string): Promise<Record<string, unknown>> {
  const put = await t.call(operator, {
    method: 'PUT',
    url: `/api/v1/configuration/bulk${query}`,
    payload: document,
  });
  expect(put.statusCode, put.body).toBe(200);
  return put.json();
}

/** Sends `data` as one closed session of `ledger/<entity>` and processes it. */
async function send(entity: string, data: unknown[]): Promise<string> {
  const ingestionId = await ingestClosedSession(t, operator, entity, data);
  await t.services.processor.drain();
  return ingestionId;
}

async function errorCodesOf(ingestionId: string): Promise<Record<number, string>> {
  const response = await t.call(operator, {
    method: 'GET',
    url: `/api/v1/processing-errors?ingestionId=${ingestionId}&limit=100`,
  });
  expect(response.statusCode, response.body).toBe(200);
  const rows = response.json().data as { recordId: number; code: string }[];
  return Object.fromEntries(rows.map((r) => [r.recordId, r.code]));
}

async function withdrawnJournals(ingestionId: string): Promise<number> {
  const rows = await t.store.db
    .selectFrom('journals')
    .select('journal_id')
    .where('ingestion_id', '=', ingestionId)
    .where('withdrawn_by', 'is not', null)
    .execute();
  return rows.length;
}

describe('a rollback after a keep-data upload that widened the business event', () => {
  it('finds and withdraws the event posted before the upload', async () => {
    const original = await send('businessEvent', [businessEvent({ amount: '250.00' })]);
    await upload(widenedConfiguration(), '?keep=processing-data');
    const rollback = await send('businessEventRollback', [businessEvent({ amount: '250.00' })]);
    expect(await errorCodesOf(rollback)).toEqual({});
    expect(await withdrawnJournals(original)).toBe(2);
  });

  it('finds an event stored under the first fingerprint form, once its plans are kept', async () => {
    const event = businessEvent({ amount: '310.00' });
    const original = await send('businessEvent', [event]);
    // The store as the first form left it: the digest written with nulls under the definition of
    // then, and no plan kept yet. Migration 0032 then keeps the plans of the revisions stored.
    const plan = fingerprintAttributesOf(
      (
        realisticConfiguration().configuration.businessEventDefinition as {
          attributes: { name: string; type: string }[];
        }
      ).attributes,
    );
    const v1 = createHash('sha256')
      .update(`ledgerflow business event v1\n${canonicalEventText(plan, event, true)}`)
      .digest('base64url')
      .slice(0, 22);
    await t.store.db
      .updateTable('journals')
      .set({ event_fingerprint: v1 })
      .where('ingestion_id', '=', original)
      .execute();
    const db = t.store.db as unknown as Kysely<unknown>;
    await sql`drop table event_fingerprint_forms`.execute(db);
    await keepFirstFormPlans(db);
    expect(await t.store.db.selectFrom('event_fingerprint_forms').select('plan').execute()).toHaveLength(1);

    await upload(widenedConfiguration(), '?keep=processing-data');
    const rollback = await send('businessEventRollback', [event]);
    expect(await errorCodesOf(rollback)).toEqual({});
    expect(await withdrawnJournals(original)).toBe(2);
  });

  it('still tells apart an event with a value of the new attribute', async () => {
    await send('businessEvent', [businessEvent({ amount: '99.00' })]);
    await upload(widenedConfiguration(), '?keep=processing-data');
    const rollback = await send('businessEventRollback', [
      businessEvent({ amount: '99.00', channel: 'BRANCH' }),
    ]);
    expect(Object.values(await errorCodesOf(rollback))).toEqual(['rollback-target-not-found']);
  });
});

describe('dry runs answer what the run then does, rollbacks included', () => {
  /**
   * Three failed rollbacks, record by record: one whose twin arrives later (would post), one of
   * an event never sent (would fail again: not found), and two of one event sent once (the first
   * would post, the second would fail: already rolled back).
   */
  async function failedRollbacks(): Promise<{ rollback: string; expected: Record<string, number> }> {
    const rollback = await send('businessEventRollback', [
      businessEvent({ amount: '11.00' }),
      businessEvent({ amount: '12.00' }),
      businessEvent({ amount: '13.00' }),
      businessEvent({ amount: '13.00' }),
    ]);
    expect(Object.values(await errorCodesOf(rollback))).toEqual([
      'rollback-target-not-found',
      'rollback-target-not-found',
      'rollback-target-not-found',
      'rollback-target-not-found',
    ]);
    await send('businessEvent', [businessEvent({ amount: '11.00' }), businessEvent({ amount: '13.00' })]);
    return { rollback, expected: { 'rollback-target-not-found': 1, 'already-rolled-back': 1 } };
  }

  it('reprocess: the dry run counts and names per record what the run posts and what fails again', async () => {
    const { rollback, expected } = await failedRollbacks();
    const dry = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/processing-errors/reprocess?dryRun=true',
      payload: { ingestionId: rollback },
    });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json()).toMatchObject({ wouldPost: 2, wouldStillFail: expected });
    const dryCodes = Object.fromEntries(
      (dry.json().examples as { recordId: number; code?: string }[]).map((e) => [
        e.recordId,
        e.code ?? 'posted',
      ]),
    );

    const run = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/processing-errors/reprocess',
      payload: { ingestionId: rollback },
    });
    expect(run.statusCode, run.body).toBe(202);
    await t.services.processor.drain();
    const after = await errorCodesOf(rollback);
    const runCodes = Object.fromEntries(
      Object.keys(dryCodes).map((id) => [id, after[Number(id)] ?? 'posted']),
    );
    expect(runCodes).toEqual(dryCodes);
  });

  it('keep-data what-if: the counts equal what the reprocessing run does under the new rules', async () => {
    const { rollback, expected } = await failedRollbacks();
    const { whatIf } = await upload(widenedConfiguration(), '?keep=processing-data&dryRun=true');
    expect(whatIf).toMatchObject({ wouldPost: 2, wouldStillFail: expected });
    await upload(widenedConfiguration(), '?keep=processing-data');
    const run = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/processing-errors/reprocess',
      payload: { ingestionId: rollback },
    });
    expect(run.statusCode, run.body).toBe(202);
    await t.services.processor.drain();
    const codes = Object.values(await errorCodesOf(rollback)).sort();
    expect(codes).toEqual(['already-rolled-back', 'rollback-target-not-found']);
  });
});
