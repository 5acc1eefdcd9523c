import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredConfiguration } from '../../src/modules/configuration/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent, loanRecord } from '../helpers/records.js';

const BULK = '/api/v1/configuration/bulk';
const REVISIONS = '/api/v1/configuration/revisions';

type Document = ReturnType<typeof realisticConfiguration>;
type Attribute = { name: string; type: Record<string, unknown>; mandatory?: boolean };

function loanAttributes(document: Document): Attribute[] {
  return document.configuration.entities[0]?.attributes as Attribute[];
}

/**
 * Configuration revisions (every upload and deletion numbered, with hash, sections and
 * document), their list, download and diff, and uploads that keep the processing data: what
 * they keep, what they refuse and why, and the dry runs that say so. Business date pinned to
 * Friday 2026-11-20, as the fixture's calendars need.
 */
describe('configuration revisions and uploads that keep the processing data', () => {
  let t: TestApp;
  let operator: string;
  let reader: string;
  const whatIfCalls: StoredConfiguration[] = [];
  beforeAll(async () => {
    t = await createTestApp(
      { businessDate: '2026-11-20' },
      {
        whatIf: async (candidate) => {
          whatIfCalls.push(candidate);
          return { wouldPost: 1, wouldStillFail: { 'no-account': 2 }, examples: [{ recordId: 7 }] };
        },
      },
    );
    operator = await t.tokenFor(['bulk-operator']);
    reader = await t.tokenFor(['viewer']);
  });
  afterAll(async () => t?.close());

  const call = (method: 'PUT' | 'DELETE' | 'GET', url: string, payload?: unknown) =>
    t.call(operator, { method, url, ...(payload === undefined ? {} : { payload: payload as object }) });

  async function ingest(namespace: string, entity: string, data: unknown[]): Promise<string> {
    const opened = await call('POST' as 'PUT', '/api/v1/ingestions', { namespace, entity });
    expect(opened.statusCode, opened.body).toBe(201);
    const id = opened.json().ingestionId as string;
    const chunk = await call('POST' as 'PUT', `/api/v1/ingestions/${id}`, { data });
    expect(chunk.statusCode, chunk.body).toBe(201);
    return id;
  }

  async function count(table: 'journals' | 'journal_lines' | 'records' | 'processing_errors' | 'ingestions') {
    const row = await t.store.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async function currentRevision(): Promise<number> {
    return t.services.configuration.download('x').then((d) => d.revision);
  }

  /** A fresh realistic configuration with loans and business events processed (one unknown event type). */
  async function populate(): Promise<void> {
    expect((await call('PUT', BULK, realisticConfiguration())).statusCode).toBe(200);
    await ingest('ledger', 'businessEvent', [
      businessEvent({ amount: '100.00' }),
      businessEvent({ eventType: 'NOT_CONFIGURED' }),
    ]);
    await ingest('loans', 'loanTransaction', [loanRecord(1), loanRecord(2)]);
    await t.services.processor.drain();
  }

  it('records a revision for every upload and deletion: number, who, when, hash, sections', async () => {
    const before = (await call('GET', `${REVISIONS}?limit=1`)).json();
    const upload = await call('PUT', BULK, realisticConfiguration());
    expect(upload.statusCode).toBe(200);
    const uploaded = Number(/revision-(\d+)/.exec(String(upload.headers.etag))?.[1]);
    const deleted = await call('DELETE', BULK);
    expect(deleted.statusCode).toBe(204);
    const dryRun = await call('PUT', `${BULK}?dryRun=true`, realisticConfiguration());
    expect(dryRun.statusCode).toBe(200);

    const page = (await call('GET', `${REVISIONS}?limit=2`)).json();
    expect(page.totalSize).toBe((before.totalSize as number) + 2);
    const [wipe, up] = page.data;
    expect(wipe).toMatchObject({ revision: uploaded + 1, action: 'delete', version: 'v20230211' });
    expect(up).toMatchObject({
      revision: uploaded,
      action: 'upload',
      actor: expect.stringContaining('@example.test'),
      sections: upload.json().sections,
    });
    expect(Object.values(wipe.sections as Record<string, number>).every((n) => n === 0)).toBe(true);

    // The hash is of the configuration as the revision's download writes it.
    const got = await call('GET', `${REVISIONS}/${uploaded}`);
    expect(got.statusCode).toBe(200);
    expect(got.headers.etag).toBe(`"revision-${uploaded}"`);
    const text = got.body.slice('{"configuration":'.length, got.body.indexOf(',"downloadTime"'));
    expect(createHash('sha256').update(text).digest('hex')).toBe(up.sha256);
    expect(got.json().configuration).toEqual(
      (await call('PUT', `${BULK}?dryRun=true`, realisticConfiguration())).statusCode === 200
        ? JSON.parse(text)
        : undefined,
    );
    // Uploaded again as it is, it makes a revision with the same hash.
    expect((await call('PUT', BULK, got.json())).statusCode).toBe(200);
    expect((await call('GET', `${REVISIONS}?limit=1`)).json().data[0].sha256).toBe(up.sha256);
  });

  it('pages newest first by page and by cursor, and answers 404 and 400 as documented', async () => {
    for (let i = 0; i < 3; i += 1)
      expect((await call('PUT', BULK, realisticConfiguration())).statusCode).toBe(200);
    const first = (await t.call(reader, { method: 'GET', url: `${REVISIONS}?limit=2` })).json();
    expect(first.data).toHaveLength(2);
    expect(first.data[0].revision).toBeGreaterThan(first.data[1].revision);
    const second = (
      await t.call(reader, { method: 'GET', url: `${REVISIONS}?limit=2&after=${first.next}` })
    ).json();
    expect(second.data[0].revision).toBe(first.data[1].revision - 1);
    expect(second).not.toHaveProperty('totalSize');
    const byPage = (await t.call(reader, { method: 'GET', url: `${REVISIONS}?limit=2&page=1` })).json();
    expect(byPage.data).toEqual(second.data);

    const missing = await call('GET', `${REVISIONS}/999999`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().type).toBe('urn:ledgerflow:problem:not-found');
    expect((await call('GET', `${REVISIONS}/999999/diff`)).statusCode).toBe(404);
    expect((await call('GET', `${REVISIONS}/0`)).statusCode).toBe(400);
    expect((await call('GET', `${REVISIONS}/abc`)).statusCode).toBe(400);
    expect((await call('GET', `${REVISIONS}?after=bogus`)).json().errors[0].path).toBe('/querystring/after');
    expect((await call('GET', `${REVISIONS}/1/diff?against=2`)).statusCode).toBe(400);
  });

  it('diffs two revisions by JSON Pointer, matching named elements by name', async () => {
    const base = await call('PUT', BULK, realisticConfiguration());
    const from = Number(/revision-(\d+)/.exec(String(base.headers.etag))?.[1]);
    const changed = realisticConfiguration();
    const attributes = loanAttributes(changed);
    // Reordered: no change. A new optional attribute, a loosened flag, a removed lookup.
    changed.configuration.entities[0] = {
      ...changed.configuration.entities[0],
      attributes: [...attributes].reverse(),
    };
    loanAttributes(changed).push({
      name: 'note/x~y',
      type: { typeName: 'PrimitiveType', primitive: 'TEXT' },
    });
    const branch = loanAttributes(changed).find((a) => a.name === 'branch');
    if (branch === undefined) throw new Error('the fixture has a branch attribute');
    branch.mandatory = false;
    const lookups = changed.configuration.accountLookups as {
      postingCode: string;
      accountLookupPatterns: { account: string }[];
    }[];
    const fee = lookups.findIndex((l) => l.postingCode === 'FEE_INCOME');
    const pattern = lookups[fee]?.accountLookupPatterns[0];
    if (pattern === undefined) throw new Error('the fixture has a fee income lookup');
    const oldAccount = pattern.account;
    pattern.account = '4999';
    const put = await call('PUT', `${BULK}?keep=processing-data`, changed);
    expect(put.statusCode, put.body).toBe(200);
    const to = from + 1;

    const diff = await call('GET', `${REVISIONS}/${to}/diff`);
    expect(diff.statusCode).toBe(200);
    const body = diff.json();
    expect(body.from.revision).toBe(from);
    expect(body.to.revision).toBe(to);
    expect(body.truncated).toBe(false);
    const newIndex = loanAttributes(changed).length - 1;
    const branchIndex = loanAttributes(changed).findIndex((a) => a.name === 'branch');
    expect(body.changes).toEqual(
      expect.arrayContaining([
        {
          path: `/accountLookups/${fee}/accountLookupPatterns/0/account`,
          kind: 'changed',
          old: oldAccount,
          new: '4999',
        },
        { path: `/entities/0/attributes/${branchIndex}/mandatory`, kind: 'changed', old: true, new: false },
        {
          path: `/entities/0/attributes/${newIndex}`,
          kind: 'added',
          new: { name: 'note/x~y', type: { typeName: 'PrimitiveType', primitive: 'TEXT' } },
        },
      ]),
    );
    expect(body.changes).toHaveLength(3);
    // The other way round, chosen with `from`: the same changes, kinds swapped.
    const back = (await call('GET', `${REVISIONS}/${from}/diff?from=${to}`)).json();
    expect(back.changes.map((c: { kind: string }) => c.kind).sort()).toEqual([
      'changed',
      'changed',
      'removed',
    ]);
    expect(back.changes.find((c: { kind: string }) => c.kind === 'removed').path).toBe(
      `/entities/0/attributes/${newIndex}`,
    );
    // A revision diffed with itself: nothing.
    expect((await call('GET', `${REVISIONS}/${to}/diff?from=${to}`)).json().changes).toEqual([]);
  });

  it('a keep-data upload keeps every session, record, journal, error and balance, and later records use the new revision', async () => {
    await populate();
    const before = {
      ingestions: await count('ingestions'),
      records: await count('records'),
      journals: await count('journals'),
      lines: await count('journal_lines'),
      errors: await count('processing_errors'),
    };
    expect(before.journals).toBeGreaterThan(0);
    expect(before.errors).toBe(1);
    const balances = (await call('GET', '/api/v1/balances')).json();
    const journals = (await call('GET', '/api/v1/journals?limit=1000')).json();
    const oldRevision = await currentRevision();
    expect(new Set(journals.data.map((j: { revision: number }) => j.revision))).toEqual(
      new Set([oldRevision]),
    );
    const errors = (await call('GET', '/api/v1/processing-errors')).json();
    expect(errors.data[0].revision).toBe(oldRevision);

    const changed = realisticConfiguration();
    loanAttributes(changed).push({ name: 'note', type: { typeName: 'TEXT' } });
    const put = await call('PUT', `${BULK}?keep=processing-data`, changed);
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().deleted).toEqual({
      ingestions: 0,
      records: 0,
      journals: 0,
      journalLines: 0,
      processingErrors: 0,
    });
    expect(put.headers.etag).toBe(`"revision-${oldRevision + 1}"`);
    expect({
      ingestions: await count('ingestions'),
      records: await count('records'),
      journals: await count('journals'),
      lines: await count('journal_lines'),
      errors: await count('processing_errors'),
    }).toEqual(before);
    expect((await call('GET', '/api/v1/balances')).json()).toEqual(balances);
    expect((await call('GET', '/api/v1/journals?limit=1000')).json().data).toEqual(journals.data);
    const audit = (await call('GET', '/api/v1/audit-log?limit=1')).json().data[0];
    expect(audit).toMatchObject({ revision: oldRevision + 1, action: 'configuration.upload' });

    await ingest('loans', 'loanTransaction', [loanRecord(3, { note: 'after' })]);
    await t.services.processor.drain();
    const after = (await call('GET', '/api/v1/journals?limit=1000')).json().data as { revision: number }[];
    expect(after.filter((j) => j.revision === oldRevision + 1)).toHaveLength(2);
    expect(after.filter((j) => j.revision === oldRevision)).toHaveLength(journals.data.length);
  });

  it('refuses an unsafe change with 409 listing each blocking change by path, and changes nothing', async () => {
    await populate();
    const revision = await currentRevision();
    const journals = await count('journals');
    const changed = realisticConfiguration();
    const attributes = loanAttributes(changed);
    const index = (name: string) => attributes.findIndex((a) => a.name === name);
    const amount = index('amount');
    const bookedAt = index('bookedAt');
    // Retyped while stored records have values; made mandatory while stored records lack it.
    (attributes[amount] as Attribute).type = { typeName: 'PrimitiveType', primitive: 'INTEGER' };
    (attributes[bookedAt] as Attribute).mandatory = true;
    // Safe on its own: no stored record has a value for it.
    attributes.splice(index('restructured'), 1);
    // Removed while stored records have values for it (the index is in the stored configuration).
    const installment = loanAttributes(realisticConfiguration()).findIndex(
      (a) => a.name === 'installmentNumber',
    );
    attributes.splice(index('installmentNumber'), 1);
    // A journal field whose values stored lines keep.
    const fields = (changed.configuration.journalDefinition as { fields: { name: string }[] }).fields;
    const productCode = fields.findIndex((f) => f.name === 'productCode');
    fields.splice(productCode, 1);

    for (const url of [`${BULK}?keep=processing-data`, `${BULK}?keep=processing-data&dryRun=true`]) {
      const refused = await call('PUT', url, changed);
      expect(refused.statusCode, refused.body).toBe(409);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.json().type).toBe('urn:ledgerflow:problem:configuration-change-unsafe');
      const paths = (refused.json().blocking as { path: string; reason: string }[]).map((b) => b.path).sort();
      expect(paths).toEqual(
        [
          `/configuration/entities/0/attributes/${amount}/type`,
          `/configuration/entities/0/attributes/${bookedAt}/mandatory`,
          `/configuration/entities/0/attributes/${installment}`,
          `/configuration/journalDefinition/fields/${productCode}`,
        ].sort(),
      );
      for (const b of refused.json().blocking) expect(b.reason).toMatch(/stored/);
    }
    expect(await currentRevision()).toBe(revision);
    expect(await count('journals')).toBe(journals);

    // Removing an entity with stored records is blocking; adding one is not.
    const withoutLoans = realisticConfiguration();
    withoutLoans.configuration.entities = [];
    withoutLoans.configuration.flows = [];
    const noLoans = await call('PUT', `${BULK}?keep=processing-data&dryRun=true`, withoutLoans);
    expect(noLoans.statusCode, noLoans.body).toBe(409);
    expect(noLoans.json().blocking).toEqual([
      { path: '/configuration/entities/0', reason: expect.stringContaining('loans/loanTransaction') },
    ]);
  });

  it('the dry run of a plain upload says whether keep is possible; a keep dry run adds the what-if', async () => {
    await populate();
    const revision = await currentRevision();
    const safe = realisticConfiguration();
    loanAttributes(safe).push({ name: 'note', type: { typeName: 'TEXT' } });
    const plain = await call('PUT', `${BULK}?dryRun=true`, safe);
    expect(plain.statusCode).toBe(200);
    expect(plain.json().keepProcessingData).toEqual({ possible: true });
    expect(plain.json().wouldDelete.journals).toBeGreaterThan(0);
    expect(plain.json()).not.toHaveProperty('whatIf');

    const unsafe = realisticConfiguration();
    const attributes = loanAttributes(unsafe);
    attributes.splice(
      attributes.findIndex((a) => a.name === 'installmentNumber'),
      1,
    );
    const refused = (await call('PUT', `${BULK}?dryRun=true`, unsafe)).json();
    expect(refused.keepProcessingData.possible).toBe(false);
    expect(refused.keepProcessingData.blocking).toEqual([
      {
        path: expect.stringMatching(/^\/configuration\/entities\/0\/attributes\/\d+$/),
        reason: expect.stringContaining('installmentNumber'),
      },
    ]);

    whatIfCalls.length = 0;
    const keepDry = await call('PUT', `${BULK}?dryRun=true&keep=processing-data`, safe);
    expect(keepDry.statusCode, keepDry.body).toBe(200);
    expect(keepDry.json()).toMatchObject({
      keepProcessingData: { possible: true },
      wouldDelete: { ingestions: 0, records: 0, journals: 0, journalLines: 0, processingErrors: 0 },
      whatIf: { wouldPost: 1, wouldStillFail: { 'no-account': 2 }, examples: [{ recordId: 7 }] },
    });
    expect(whatIfCalls).toHaveLength(1);
    expect(whatIfCalls[0]?.revision).toBe(revision + 1);
    expect(
      loanAttributes({ version: '', configuration: whatIfCalls[0]?.configuration as never }),
    ).toContainEqual({
      name: 'note',
      type: { typeName: 'TEXT' },
    });
    expect(await currentRevision()).toBe(revision);
    // The misspelt parameter is refused rather than ignored.
    expect((await call('PUT', `${BULK}?keep=processing`, safe)).statusCode).toBe(400);
  });

  it('keeps If-Match: a keep-data upload against a stale revision is refused with 412', async () => {
    await populate();
    const revision = await currentRevision();
    const stale = await t.call(operator, {
      method: 'PUT',
      url: `${BULK}?keep=processing-data`,
      payload: realisticConfiguration(),
      headers: { 'if-match': `"revision-${revision - 1}"` },
    });
    expect(stale.statusCode).toBe(412);
    const fresh = await t.call(operator, {
      method: 'PUT',
      url: `${BULK}?keep=processing-data`,
      payload: realisticConfiguration(),
      headers: { 'if-match': `"revision-${revision}"` },
    });
    expect(fresh.statusCode, fresh.body).toBe(200);
    expect(fresh.headers.etag).toBe(`"revision-${revision + 1}"`);
  });
});
