import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';
import { type Signed, signIn, userWith } from './helpers.js';

type Attribute = { name: string };

/**
 * The administration interface's keep-data choice on the upload (dry run first, then a
 * confirmation; a refusal lists each blocking change), the revisions list and a revision's
 * changes. Business date pinned to Friday 2026-11-20, as the fixture's calendars need.
 */
describe('administration: uploads that keep the data, and revisions', () => {
  let t: TestApp;
  let admin: Signed;
  let viewer: Signed;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    const operator = await t.tokenFor(['bulk-operator']);
    const put = await t.call(operator, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode).toBe(200);
    const writer = await t.tokenFor(['api-client']);
    const opened = await t.call(writer, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction' },
    });
    const chunk = await t.call(writer, {
      method: 'POST',
      url: `/api/v1/ingestions/${opened.json().ingestionId}`,
      payload: { data: [loanRecord(1), loanRecord(2)] },
    });
    expect(chunk.statusCode).toBe(201);
    await t.services.processor.drain();
    admin = await signIn(t, await userWith(t, ['admin']));
    viewer = await signIn(t, await userWith(t, ['viewer']));
  });
  afterAll(async () => t?.close());

  async function journals(): Promise<number> {
    const row = await t.store.db
      .selectFrom('journals')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  function withNote() {
    const changed = realisticConfiguration();
    (changed.configuration.entities[0]?.attributes ?? []).push({ name: 'note', type: { typeName: 'TEXT' } });
    return JSON.stringify(changed);
  }

  it('offers the choice on the upload form; a plain check says when keeping is possible', async () => {
    const form = await admin.get('/admin/configuration');
    expect(form.body).toContain('name="keep" value="yes"');
    const checked = await admin.post('/admin/configuration/check', { document: withNote(), keep: 'no' });
    expect(checked.statusCode).toBe(200);
    expect(checked.body).toContain('The upload deletes:');
    expect(checked.body).toContain('id="keep-possible"');
  });

  it('checks, confirms and uploads keeping every journal', async () => {
    const before = await journals();
    expect(before).toBeGreaterThan(0);
    const checked = await admin.post('/admin/configuration/check', { document: withNote(), keep: 'yes' });
    expect(checked.statusCode, checked.body).toBe(200);
    expect(checked.body).toContain('keeps the processing data: nothing is deleted');
    const revision = /name="revision" value="(\d+)"/.exec(checked.body)?.[1] ?? '';
    const uploaded = await admin.post('/admin/configuration/upload', {
      document: withNote(),
      revision,
      keep: 'yes',
      confirm: 'yes',
    });
    expect(uploaded.statusCode, uploaded.body).toBe(200);
    expect(uploaded.body).toContain('the processing data was kept');
    expect(await journals()).toBe(before);
  });

  it('lists each blocking change of a change the stored data forbids, and changes nothing', async () => {
    const unsafe = realisticConfiguration();
    const attributes = (unsafe.configuration.entities[0]?.attributes ?? []) as Attribute[];
    const index = attributes.findIndex((a) => a.name === 'installmentNumber');
    attributes.splice(index, 1);
    const before = (await t.services.configuration.download('x')).revision;
    const refused = await admin.post('/admin/configuration/check', {
      document: JSON.stringify(unsafe),
      keep: 'yes',
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain(`<code>/configuration/entities/0/attributes/${index}</code>`);
    // The form comes back with the document and the keep choice, to correct and check again.
    expect(refused.body).toMatch(/value="yes" checked/);
    expect((await t.services.configuration.download('x')).revision).toBe(before);
  });

  it("lists the revisions and shows a revision's changes against the one before, or another chosen", async () => {
    const list = await viewer.get('/admin/configuration/revisions');
    expect(list.statusCode).toBe(200);
    const newest = (await t.services.revisions.list(0, 1)).rows[0]?.revision ?? 0;
    expect(list.body).toContain(`Changes of revision ${newest}`);
    expect(list.body).toContain('aria-current="page">Revisions');
    const changes = await viewer.get(`/admin/configuration/revisions/${newest}`);
    expect(changes.statusCode).toBe(200);
    expect(changes.body).toMatch(/<code>\/entities\/0\/attributes\/\d+<\/code>/);
    expect(changes.body).toContain('added');
    const same = await viewer.get(`/admin/configuration/revisions/${newest}?from=${newest}`);
    expect(same.body).toContain('The two revisions hold the same configuration.');
    const download = await viewer.get(`/admin/configuration/revisions/${newest}/download`);
    expect(download.statusCode).toBe(200);
    expect(JSON.parse(download.body).configuration.entities[0].attributes.at(-1).name).toBe('note');
    expect((await viewer.get('/admin/configuration/revisions/999999')).statusCode).toBe(404);
    expect((await viewer.get('/admin/configuration/revisions/abc')).statusCode).toBe(400);
  });
});
