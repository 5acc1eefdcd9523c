import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_BODY_MALFORMED_DETAIL } from '../../src/lib/json-body.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { largeConfiguration } from '../helpers/large-configuration.js';

const BULK = '/api/v1/configuration/bulk';

/**
 * The upload reads its raw body off the event loop and the download is written in pieces; seen
 * from outside, both answer as the routes that parse and print a document whole.
 */
describe('configuration upload and download, read and written in steps', () => {
  let t: TestApp;
  let operator: string;
  beforeAll(async () => {
    t = await createTestApp();
    operator = await t.tokenFor(['bulk-operator']);
  });
  afterAll(async () => t.close());

  it('refuses a body that is not JSON with the words of every other JSON route', async () => {
    const ordinary = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/ingestions',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    const upload = await t.call(operator, {
      method: 'PUT',
      url: BULK,
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(upload.statusCode).toBe(400);
    expect(upload.headers['content-type']).toContain('application/problem+json');
    expect(upload.json().detail).toBe(ordinary.json().detail);
    expect(upload.json()).toMatchObject({ type: ordinary.json().type, detail: JSON_BODY_MALFORMED_DETAIL });
  });

  it('takes the JSON media types every route takes, and refuses others with 415', async () => {
    const payload = JSON.stringify(largeConfiguration(0));
    for (const type of ['application/json', 'application/merge-patch+json; charset=utf-8']) {
      const answer = await t.call(operator, {
        method: 'PUT',
        url: `${BULK}?dryRun=true`,
        headers: { 'content-type': type },
        payload,
      });
      expect(answer.statusCode, `${type}: ${answer.body}`).toBe(200);
    }
    const text = await t.call(operator, {
      method: 'PUT',
      url: BULK,
      headers: { 'content-type': 'text/plain' },
      payload,
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().type).toBe('urn:ledgerflow:problem:unsupported-media-type');
  });

  it('downloads a large document exactly as the whole document printed at once', async () => {
    const uploaded = await t.call(operator, {
      method: 'PUT',
      url: BULK,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(largeConfiguration(600)),
    });
    expect(uploaded.statusCode, uploaded.body).toBe(200);
    const download = await t.call(operator, { method: 'GET', url: BULK });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(download.headers.etag).toBe(uploaded.headers.etag);
    const { downloadedBy } = download.json() as { downloadedBy: string };
    // The clock stands still, so the whole document has the download's time.
    const { document } = await t.services.configuration.download(downloadedBy);
    expect(download.body.length).toBeGreaterThan(1024 * 1024);
    expect(download.body).toBe(JSON.stringify(document));
  });
});
