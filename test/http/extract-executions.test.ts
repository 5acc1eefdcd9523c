import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

/** The realistic configuration with `extracts-in-bulk` set to `on`. */
function configurationWithBulk(on: boolean) {
  const document = realisticConfiguration();
  (document.configuration.featureFlags as Record<string, boolean>)['extracts-in-bulk'] = on;
  return document;
}

/** Asynchronous extractions behind the feature flag `extracts-in-bulk` (issue 25). */
describe('asynchronous extractions', () => {
  let t: TestApp;
  let operator: string;
  let reader: string;
  let configId: number;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    operator = await t.tokenFor(['bulk-operator']);
    reader = await t.tokenFor(['api-client']);
    const put = await t.call(operator, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: configurationWithBulk(false),
    });
    expect(put.statusCode, put.body).toBe(200);
    await ingestClosedSession(
      t,
      operator,
      'businessEvent',
      Array.from({ length: 30 }, (_, i) => businessEvent({ amount: `${i + 1}.25` })),
    );
    await t.services.processor.drain();
    const created = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/extraction-configurations',
      payload: { name: 'bulk', source: 'journal-lines', format: 'csv', incremental: true },
    });
    configId = created.json().id;
    await t.call(operator, {
      method: 'PATCH',
      url: `/api/v1/extraction-configurations/${configId}`,
      payload: { state: 'Active' },
    });
  });
  afterAll(async () => t?.close());

  const trigger = () =>
    t.call(reader, { method: 'POST', url: `/api/v1/extraction-configurations/${configId}/executions` });

  it('refuses a trigger while the feature flag is off', async () => {
    const refused = await trigger();
    expect(refused.statusCode).toBe(409);
    expect(refused.json().detail).toContain('extracts-in-bulk');
  });

  it('makes the file in the background, lists the execution with its runs, and serves the file as the read would', async () => {
    const put = await t.call(operator, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk?keep=processing-data',
      payload: configurationWithBulk(true),
    });
    expect(put.statusCode, put.body).toBe(200);
    const started = await trigger();
    expect(started.statusCode, started.body).toBe(202);
    const execution = started.json();
    expect(execution).toMatchObject({ extractConfigurationId: configId, format: 'csv' });
    expect(started.headers.location).toBe(`/api/v1/extraction-executions/${execution.id}`);
    await t.services.extractExecutions.idle();

    const details = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-executions/${execution.id}`,
    });
    expect(details.json()).toMatchObject({
      id: execution.id,
      latestStatus: 'completed',
      recordCount: 120,
      totalRuns: 1,
      runs: [{ runNo: 1, records: 120 }],
    });
    expect(details.json().expiresAt).not.toBeNull();
    const list = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-configurations/${configId}/executions`,
    });
    expect(list.json().data.map((e: { id: number }) => e.id)).toEqual([execution.id]);

    const file = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-executions/${execution.id}/file`,
    });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toMatch(/^text\/csv/);
    // The same pending read as the synchronous download.
    const streamed = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-configurations/${configId}/extractions`,
    });
    expect(file.body).toBe(streamed.body);
    expect(file.body.split('\r\n').filter((line) => line !== '')).toHaveLength(121);

    const acked = await t.call(reader, {
      method: 'POST',
      url: `/api/v1/extraction-configurations/${configId}/increment`,
    });
    expect(acked.json()).toEqual({ status: 'latest offsets incremented' });
    const empty = (await trigger()).json();
    await t.services.extractExecutions.idle();
    const emptyFile = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-executions/${empty.id}/file`,
    });
    // Nothing new since the acknowledgement: the header line only.
    expect(emptyFile.body.split('\r\n').filter((line) => line !== '')).toHaveLength(1);
    const missing = await t.call(reader, { method: 'GET', url: '/api/v1/extraction-executions/999999' });
    expect(missing.statusCode).toBe(404);
  });
});
