import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';

const BASE = '/api/v1/extraction-configurations';

/**
 * The extract changes on the change runner: each writes its audit entry with what it changed, an
 * increment that moves nothing writes none, and a dry run of a trigger or an increment fixes or
 * moves no window.
 */
describe('extract changes: audit entries and dry runs', () => {
  let t: TestApp;
  let operator: string;
  let reader: string;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    operator = await t.tokenFor(['bulk-operator']);
    reader = await t.tokenFor(['api-client']);
    const document = realisticConfiguration();
    (document.configuration.featureFlags as Record<string, boolean>)['extracts-in-bulk'] = true;
    const put = await t.call(operator, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: document,
    });
    expect(put.statusCode, put.body).toBe(200);
  });
  afterAll(async () => t?.close());

  /** The extract entries of the audit trail, oldest first. */
  const entries = async () =>
    (
      await t.store.db
        .selectFrom('audit_log')
        .select(['action', 'actor', 'details'])
        .where('action', 'like', 'extracts.%')
        .orderBy('seq')
        .execute()
    ).map((row) => ({
      action: row.action,
      actor: row.actor,
      details: row.details === null ? null : JSON.parse(row.details),
    }));

  const configuration = async (id: number) =>
    (await t.call(reader, { method: 'GET', url: `${BASE}/${id}` })).json() as { pending: boolean };

  const executions = async (id: number) =>
    (await t.call(reader, { method: 'GET', url: `${BASE}/${id}/executions` })).json().data as unknown[];

  it('audits a creation, a change, a trigger, an increment and a deletion, and no increment that moves nothing', async () => {
    const created = await t.call(operator, {
      method: 'POST',
      url: BASE,
      payload: { name: 'gl', description: 'the nightly load', source: 'posted-journals', incremental: true },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as number;
    const changed = await t.call(operator, {
      method: 'PATCH',
      url: `${BASE}/${id}`,
      payload: { state: 'Active', fields: ['journalId'] },
    });
    expect(changed.statusCode, changed.body).toBe(200);

    const idle = await t.call(reader, { method: 'POST', url: `${BASE}/${id}/increment` });
    expect(idle.json()).toEqual({ status: 'no extract performed since the last increment' });
    const started = await t.call(reader, { method: 'POST', url: `${BASE}/${id}/executions?format=csv` });
    expect(started.statusCode, started.body).toBe(202);
    const executionId = started.json().id as number;
    expect(started.headers.location).toBe(`/api/v1/extraction-executions/${executionId}`);
    await t.services.extractExecutions.idle();
    const moved = await t.call(reader, { method: 'POST', url: `${BASE}/${id}/increment` });
    expect(moved.json()).toEqual({ status: 'latest offsets incremented' });
    const deleted = await t.call(operator, { method: 'DELETE', url: `${BASE}/${id}` });
    expect(deleted.statusCode).toBe(204);

    expect(await entries()).toMatchObject([
      {
        action: 'extracts.configuration-create',
        details: {
          configurationId: id,
          name: 'gl',
          source: 'posted-journals',
          format: 'jsonl',
          incremental: true,
        },
      },
      {
        action: 'extracts.configuration-update',
        details: { configurationId: id, changed: ['state', 'fields'], state: 'Active', stateBefore: 'Draft' },
      },
      {
        action: 'extracts.execution-start',
        details: { configurationId: id, executionId, format: 'csv' },
      },
      { action: 'extracts.increment', details: { configurationId: id, offsetsMoved: true } },
      { action: 'extracts.configuration-delete', details: { configurationId: id, name: 'gl' } },
    ]);
    // What changed, never whole documents: no description, no fields' values.
    expect(JSON.stringify(await entries())).not.toContain('nightly');
    expect(JSON.stringify(await entries())).not.toContain('journalId');
  });

  it('refuses as before, writing nothing: a trigger of a Draft configuration, an increment of a non-incremental one', async () => {
    const before = await entries();
    const created = await t.call(operator, {
      method: 'POST',
      url: BASE,
      payload: { name: 'snapshot', source: 'balances' },
    });
    const id = created.json().id as number;
    const draft = await t.call(reader, { method: 'POST', url: `${BASE}/${id}/executions` });
    expect(draft.statusCode).toBe(409);
    const notIncremental = await t.call(reader, { method: 'POST', url: `${BASE}/${id}/increment` });
    expect(notIncremental.statusCode).toBe(400);
    expect(notIncremental.json().type).toContain('extract-not-incremental');
    expect((await entries()).slice(before.length).map((e) => e.action)).toEqual([
      'extracts.configuration-create',
    ]);
  });

  it('fixes no window in a dry run of a trigger, moves none in a dry run of an increment, and replays a trigger', async () => {
    const created = await t.call(operator, {
      method: 'POST',
      url: `${BASE}?dryRun=true`,
      payload: { name: 'dry', source: 'posted-journals', incremental: true },
    });
    expect(created.statusCode).toBe(200);
    expect(created.headers.location).toBeUndefined();
    const made = await t.call(operator, {
      method: 'POST',
      url: BASE,
      payload: { name: 'dry', source: 'posted-journals', incremental: true },
    });
    const id = made.json().id as number;
    await t.call(operator, { method: 'PATCH', url: `${BASE}/${id}`, payload: { state: 'Active' } });
    const written = await entries();

    const dry = await t.call(reader, { method: 'POST', url: `${BASE}/${id}/executions?dryRun=true` });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json()).toMatchObject({ extractConfigurationId: id, latestStatus: 'queued' });
    expect(dry.headers.location).toBeUndefined();
    expect((await configuration(id)).pending).toBe(false);
    expect(await executions(id)).toEqual([]);

    const key = { 'idempotency-key': 'nightly-2026-11-20' };
    const first = await t.call(reader, { method: 'POST', url: `${BASE}/${id}/executions`, headers: key });
    expect(first.statusCode).toBe(202);
    const again = await t.call(reader, { method: 'POST', url: `${BASE}/${id}/executions`, headers: key });
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await executions(id)).toHaveLength(1);
    expect((await configuration(id)).pending).toBe(true);
    await t.services.extractExecutions.idle();

    const dryIncrement = await t.call(reader, { method: 'POST', url: `${BASE}/${id}/increment?dryRun=true` });
    expect(dryIncrement.json()).toEqual({ status: 'latest offsets incremented' });
    expect((await configuration(id)).pending).toBe(true);
    expect((await entries()).slice(written.length).map((e) => e.action)).toEqual([
      'extracts.execution-start',
    ]);
  });
});
