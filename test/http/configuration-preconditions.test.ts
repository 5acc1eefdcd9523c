import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IF_MATCH_LENGTH_MAX } from '../../src/modules/configuration/inputs.js';
import { signIn, userWith } from '../admin/helpers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';

const BULK = '/api/v1/configuration/bulk';

describe('DELETE /api/v1/configuration/bulk: its body', () => {
  let t: TestApp;
  let operator: string;
  beforeAll(async () => {
    t = await createTestApp();
    operator = await t.tokenFor(['bulk-operator']);
  });
  afterAll(async () => t?.close());

  it('refuses an unknown member, naming it, and deletes nothing', async () => {
    expect(
      (await t.call(operator, { method: 'PUT', url: BULK, payload: realisticConfiguration() })).statusCode,
    ).toBe(200);
    const refused = await t.call(operator, { method: 'DELETE', url: BULK, payload: { dryrun: true } });
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:validation-failed',
      detail: '/dryrun is not a known member',
      errors: [{ path: '/dryrun', message: 'is not a known member' }],
    });
    const notAnObject = await t.call(operator, {
      method: 'DELETE',
      url: BULK,
      payload: '[]',
      headers: { 'content-type': 'application/json' },
    });
    expect(notAnObject.statusCode).toBe(400);
    expect(notAnObject.json().errors).toEqual([{ path: '', message: 'must be object' }]);
    const stored = await t.call(operator, { method: 'GET', url: BULK });
    expect(stored.json().configuration.entities.length).toBeGreaterThan(0);
  });

  it('accepts no body and an empty object', async () => {
    expect((await t.call(operator, { method: 'DELETE', url: BULK })).statusCode).toBe(204);
    expect((await t.call(operator, { method: 'DELETE', url: BULK, payload: {} })).statusCode).toBe(204);
  });
});

/**
 * An upload or a deletion made against the revision that was read: `ETag` on the download and
 * on every answer, `If-Match` on PUT and DELETE (and their dry runs), 412 when it changed.
 */
describe('configuration revisions: ETag and If-Match', () => {
  let t: TestApp;
  let operator: string;
  beforeAll(async () => {
    t = await createTestApp();
    operator = await t.tokenFor(['bulk-operator']);
  });
  afterAll(async () => t?.close());

  const etag = async (): Promise<string> =>
    String((await t.call(operator, { method: 'GET', url: BULK })).headers.etag);
  const put = (ifMatch?: string, query = '') =>
    t.call(operator, {
      method: 'PUT',
      url: `${BULK}${query}`,
      payload: realisticConfiguration(),
      headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
    });
  const del = (ifMatch?: string, query = '') =>
    t.call(operator, {
      method: 'DELETE',
      url: `${BULK}${query}`,
      headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
    });
  const auditTotal = async () => (await t.services.audit.list({ page: 0 }, 1)).total ?? 0;

  it('gives a strong, quoted ETag that every upload and deletion changes, and answers with the new one', async () => {
    const first = await etag();
    expect(first).toMatch(/^"[^"]+"$/);
    expect(await etag()).toBe(first);
    const uploaded = await put();
    expect(uploaded.statusCode).toBe(200);
    const second = await etag();
    expect(second).not.toBe(first);
    expect(uploaded.headers.etag).toBe(second);
    // The same document again is a new revision: the upload wiped the processing data.
    expect((await put()).statusCode).toBe(200);
    const third = await etag();
    expect(third).not.toBe(second);
    const deleted = await del();
    expect(deleted.statusCode).toBe(204);
    expect(deleted.headers.etag).toBe(await etag());
    expect(deleted.headers.etag).not.toBe(third);
  });

  it('uploads with the current ETag in If-Match, and refuses a stale one with 412, changing nothing', async () => {
    const before = await etag();
    const uploaded = await put(before);
    expect(uploaded.statusCode, uploaded.body).toBe(200);
    const current = await etag();
    const audited = await auditTotal();

    const stale = await put(before);
    expect(stale.statusCode).toBe(412);
    expect(stale.headers['content-type']).toContain('application/problem+json');
    expect(stale.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:configuration-changed',
      status: 412,
    });
    expect(stale.json().detail).toContain('nothing was changed');
    const staleDryRun = await put(before, '?dryRun=true');
    expect(staleDryRun.statusCode).toBe(412);
    expect(await etag()).toBe(current);
    expect(await auditTotal()).toBe(audited);

    const dryRun = await put(current, '?dryRun=true');
    expect(dryRun.statusCode).toBe(200);
    expect(dryRun.headers.etag).toBe(current);
    expect(await etag()).toBe(current);
  });

  it('deletes with the current ETag in If-Match, and refuses a stale one with 412, deleting nothing', async () => {
    expect((await put()).statusCode).toBe(200);
    const current = await etag();
    const stale = await del('"revision-0"');
    expect(stale.statusCode).toBe(412);
    expect(stale.json().type).toBe('urn:ledgerflow:problem:configuration-changed');
    expect((await del('"revision-0"', '?dryRun=true')).statusCode).toBe(412);
    expect(await etag()).toBe(current);
    const dryRun = await del(current, '?dryRun=true');
    expect(dryRun.statusCode).toBe(200);
    expect(dryRun.headers.etag).toBe(current);
    expect((await del(current)).statusCode).toBe(204);
    expect(await etag()).not.toBe(current);
  });

  it('reads If-Match as RFC 9110 says: *, a list, and weak or foreign tags that never match', async () => {
    const current = await etag();
    expect((await put('*')).statusCode).toBe(200);
    const now = await etag();
    expect((await put(`"revision-999999", ${now}`)).statusCode).toBe(200);
    const latest = await etag();
    expect((await put(`W/${latest}`)).statusCode).toBe(412);
    expect((await put('"something-else"')).statusCode).toBe(412);
    expect((await put(current)).statusCode).toBe(412);
    const tooLong = await put(`"${'x'.repeat(IF_MATCH_LENGTH_MAX)}"`);
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().errors[0].path).toBe('/headers/if-match');
    expect(await etag()).toBe(latest);
  });
});

/**
 * The administration page checks an upload (a dry run), then asks for a confirmation; the
 * confirmation carries the revision that was checked, so an upload made in between is not
 * replaced unseen.
 */
describe('administration interface: a confirmed change is bound to the revision it was checked against', () => {
  let t: TestApp;
  let operator: string;
  beforeAll(async () => {
    t = await createTestApp();
    operator = await t.tokenFor(['bulk-operator']);
  });
  afterAll(async () => t?.close());

  it('refuses the confirmed upload when another upload came after the check, and applies nothing', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const mine = realisticConfiguration();
    const checked = await admin.post('/admin/configuration/check', { document: JSON.stringify(mine) });
    expect(checked.statusCode).toBe(200);
    const revision = /name="revision" value="(\d+)"/.exec(checked.body)?.[1];
    expect(revision).toBeDefined();

    // Meanwhile someone else uploads (the same document: still a new revision, which wipes).
    const theirs = await t.call(operator, { method: 'PUT', url: BULK, payload: realisticConfiguration() });
    expect(theirs.statusCode).toBe(200);
    const stored = await t.call(operator, { method: 'GET', url: BULK });

    const confirmed = await admin.post('/admin/configuration/upload', {
      document: JSON.stringify(mine),
      revision: revision ?? '',
      confirm: 'yes',
    });
    expect(confirmed.statusCode).toBe(409);
    expect(confirmed.body).toContain('The configuration changed since you checked');
    const after = await t.call(operator, { method: 'GET', url: BULK });
    expect(after.headers.etag).toBe(stored.headers.etag);
    expect(after.headers.etag).toBe(theirs.headers.etag);
    expect((await t.services.audit.list({ page: 0 }, 10)).rows[0]?.actor).not.toContain('admin-test');

    // Checked again, the confirmation goes through.
    const again = await admin.post('/admin/configuration/check', { document: JSON.stringify(mine) });
    const current = /name="revision" value="(\d+)"/.exec(again.body)?.[1] ?? '';
    const uploaded = await admin.post('/admin/configuration/upload', {
      document: JSON.stringify(mine),
      revision: current,
      confirm: 'yes',
    });
    expect(uploaded.statusCode).toBe(200);
    expect(uploaded.body).toContain('The configuration is replaced');
  });

  it('refuses a confirmation without the checked revision, and a wipe confirmed against an old one', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const incomplete = await admin.post('/admin/configuration/upload', {
      document: JSON.stringify(realisticConfiguration()),
      confirm: 'yes',
    });
    expect(incomplete.statusCode).toBe(400);
    expect(incomplete.body).toContain('The form is incomplete');

    const wipePage = await admin.get('/admin/configuration/wipe');
    const revision = /name="revision" value="(\d+)"/.exec(wipePage.body)?.[1] ?? '';
    expect(
      (await t.call(operator, { method: 'PUT', url: BULK, payload: realisticConfiguration() })).statusCode,
    ).toBe(200);
    const before = (await t.call(operator, { method: 'GET', url: BULK })).headers.etag;
    const wiped = await admin.post('/admin/configuration/wipe', { revision, confirm: 'yes' });
    expect(wiped.statusCode).toBe(409);
    expect((await t.call(operator, { method: 'GET', url: BULK })).headers.etag).toBe(before);
  });
});
