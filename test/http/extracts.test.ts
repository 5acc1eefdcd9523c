import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postDueJournals } from '../../src/storage/accounting/balances.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  ingestClosedSession,
  realisticConfiguration,
  uploadRealisticConfiguration,
} from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

type Row = Record<string, unknown>;
type Page = { data: Row[]; limit: number; next: string | null };

/** The node of the realistic fixture's events, as the store keeps it. */
const AMS_NODE = JSON.stringify({ branch: 'AMS', legalEntity: 'LF_NL' });

/** Extraction configurations and their reads, on both stores (issue 25). */
describe('extracts (business date pinned to Friday 2026-11-20)', () => {
  let t: TestApp;
  let operator: string;
  let reader: string;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    operator = await t.tokenFor(['bulk-operator']);
    reader = await t.tokenFor(['api-client']);
    await uploadRealisticConfiguration(t, operator);
  });
  afterAll(async () => t?.close());

  const ingest = async (entity: string, data: unknown[]) => {
    const id = await ingestClosedSession(t, operator, entity, data);
    await t.services.processor.drain();
    return id;
  };
  const create = async (body: Row, activate = true): Promise<number> => {
    const created = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/extraction-configurations',
      payload: body,
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as number;
    expect(created.headers.location).toBe(`/api/v1/extraction-configurations/${id}`);
    if (activate) {
      const active = await t.call(operator, {
        method: 'PATCH',
        url: `/api/v1/extraction-configurations/${id}`,
        payload: { state: 'Active' },
      });
      expect(active.statusCode, active.body).toBe(200);
    }
    return id;
  };
  const page = async (id: number, query = ''): Promise<Page> => {
    const response = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-configurations/${id}/extractions/paginated${query}`,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  /** Every row of the current read, page after page of `limit`. */
  const readAll = async (id: number, limit = 2): Promise<Row[]> => {
    const rows: Row[] = [];
    let next: string | null = null;
    do {
      const answer: Page = await page(id, `?limit=${limit}${next === null ? '' : `&after=${next}`}`);
      rows.push(...answer.data);
      next = answer.next;
    } while (next !== null);
    return rows;
  };
  const increment = async (id: number) => {
    const response = await t.call(reader, {
      method: 'POST',
      url: `/api/v1/extraction-configurations/${id}/increment`,
    });
    return { status: response.statusCode, body: response.json() };
  };

  it('creates in Draft, lists by state, refuses what a source does not take, naming the member', async () => {
    const id = await create({ name: 'gl', source: 'posted-journals', incremental: true }, false);
    const one = await t.call(reader, { method: 'GET', url: `/api/v1/extraction-configurations/${id}` });
    expect(one.json()).toMatchObject({
      id,
      state: 'Draft',
      format: 'jsonl',
      incremental: true,
      pending: false,
      filters: {},
    });
    const drafts = await t.call(reader, {
      method: 'GET',
      url: '/api/v1/extraction-configurations?state=Draft',
    });
    expect((drafts.json() as Page).data.map((c) => c.id)).toContain(id);
    const active = await t.call(reader, { method: 'GET', url: '/api/v1/extraction-configurations' });
    expect((active.json() as Page).data.map((c) => c.id)).not.toContain(id);

    const refused = async (body: Row, path: string) => {
      const response = await t.call(operator, {
        method: 'POST',
        url: '/api/v1/extraction-configurations',
        payload: body,
      });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().errors[0].path).toBe(path);
    };
    await refused(
      { name: 'x', source: 'processing-errors', filters: { accountingConfig: 'IFRS' } },
      '/filters/accountingConfig',
    );
    await refused({ name: 'x', source: 'balances', incremental: true }, '/incremental');
    await refused({ name: 'x', source: 'records', filters: { namespace: 'loans' } }, '/filters');
    await refused({ name: 'x', source: 'posted-journals', fields: ['journalId', 'nope'] }, '/fields/1');
    await refused(
      {
        name: 'x',
        source: 'records',
        format: 'csv',
        filters: { namespace: 'loans', entity: 'loanTransaction' },
      },
      '/fields',
    );
    await refused({ name: 'x', source: 'nothing' }, '/source');
    // A reader may not manage configurations.
    const forbidden = await t.call(reader, {
      method: 'POST',
      url: '/api/v1/extraction-configurations',
      payload: { name: 'x', source: 'balances' },
    });
    expect(forbidden.statusCode).toBe(403);
  });

  it('refuses a records extract of an entity the configuration does not hold with 404, as a read of its records is, naming the filter', async () => {
    const records = (filters: Row) => ({ name: 'unknown', source: 'records', filters });
    const refusedWith = async (response: { statusCode: number; body: string }, path: string) => {
      expect(response.statusCode, response.body).toBe(404);
      const problem = JSON.parse(response.body);
      expect(problem.type).toBe('urn:ledgerflow:problem:entity-not-found');
      expect(problem.errors).toEqual([
        { path, message: 'must name an entity of the configuration stored now' },
      ]);
      return problem;
    };
    const post = (body: Row) =>
      t.call(operator, { method: 'POST', url: '/api/v1/extraction-configurations', payload: body });
    const drafts = async () =>
      (
        await t.call(reader, {
          method: 'GET',
          url: '/api/v1/extraction-configurations?state=Draft&limit=1000',
        })
      ).json().data.length as number;
    const before = await drafts();

    // As the entity records read answers the same names.
    const read = await t.call(operator, {
      method: 'GET',
      url: '/api/v1/namespaces/ledger/entities/businessEvnt/records',
    });
    expect(read.statusCode).toBe(404);
    const problem = await refusedWith(
      await post(records({ namespace: 'ledger', entity: 'businessEvnt' })),
      '/filters/entity',
    );
    expect(problem.detail).toContain('no entity businessEvnt in namespace ledger. Did you mean');
    expect(problem.suggestions).toEqual(read.json().suggestions);
    await refusedWith(await post(records({ namespace: 'nowhere', entity: 'nothing' })), '/filters/namespace');
    // The rules of the request itself come first: a CSV extract of records needs its fields.
    const csv = await post({ ...records({ namespace: 'nowhere', entity: 'nothing' }), format: 'csv' });
    expect(csv.statusCode).toBe(400);
    expect(await drafts()).toBe(before);

    // A draft changed to an unknown entity is refused the same way, and keeps its filters.
    const id = await create(records({ namespace: 'loans', entity: 'loanTransaction' }), false);
    const changed = await t.call(operator, {
      method: 'PATCH',
      url: `/api/v1/extraction-configurations/${id}`,
      payload: { filters: { namespace: 'loans', entity: 'loanTransactions' } },
    });
    await refusedWith(changed, '/filters/entity');
    const kept = await t.call(reader, { method: 'GET', url: `/api/v1/extraction-configurations/${id}` });
    expect(kept.json().filters).toEqual({ namespace: 'loans', entity: 'loanTransaction' });
    await t.call(operator, { method: 'DELETE', url: `/api/v1/extraction-configurations/${id}` });
  });

  it('moves Draft → Active → Inactive → Active, never back to Draft, and keeps what decides the rows once Active', async () => {
    const id = await create({ name: 'states', source: 'posted-journals' }, false);
    const patch = (payload: Row) =>
      t.call(operator, { method: 'PATCH', url: `/api/v1/extraction-configurations/${id}`, payload });
    const notActive = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-configurations/${id}/extractions/paginated`,
    });
    expect(notActive.statusCode).toBe(409);
    expect((await patch({ state: 'Inactive' })).statusCode).toBe(409);
    expect((await patch({ state: 'Active' })).json()).toMatchObject({ state: 'Active' });
    const filters = await patch({ filters: { accountingConfig: 'IFRS' } });
    expect(filters.statusCode).toBe(409);
    expect(filters.json().errors[0].path).toBe('/filters');
    expect((await patch({ format: 'csv', fields: ['journalId'] })).json()).toMatchObject({ format: 'csv' });
    expect((await patch({ state: 'Inactive' })).json()).toMatchObject({ state: 'Inactive' });
    expect((await patch({ state: 'Draft' })).statusCode).toBe(409);
    expect((await patch({ state: 'Active' })).json()).toMatchObject({ state: 'Active' });
    const deleted = await t.call(operator, {
      method: 'DELETE',
      url: `/api/v1/extraction-configurations/${id}`,
    });
    expect(deleted.statusCode).toBe(204);
    expect(
      (await t.call(reader, { method: 'GET', url: `/api/v1/extraction-configurations/${id}` })).statusCode,
    ).toBe(404);
  });

  it('answers an incremental read the same until acknowledged, then only what is new', async () => {
    const id = await create({
      name: 'posted',
      source: 'posted-journals',
      incremental: true,
      fields: ['journalId', 'status', 'accountingConfig'],
    });
    const none = await increment(id);
    expect(none).toEqual({ status: 200, body: { status: 'no extract performed since the last increment' } });

    await ingest('businessEvent', [businessEvent({ amount: '10' }), businessEvent({ amount: '20' })]);
    const first = await readAll(id);
    expect(first).toHaveLength(4);
    expect(first.every((row) => row.status === 'posted')).toBe(true);
    expect(Object.keys(first[0] ?? {})).toEqual(['journalId', 'status', 'accountingConfig']);

    // Written after the first read: not in its answer until acknowledged.
    await ingest('businessEvent', [businessEvent({ amount: '30' })]);
    expect(await readAll(id, 3)).toEqual(first);
    expect(
      (await t.call(reader, { method: 'GET', url: `/api/v1/extraction-configurations/${id}` })).json(),
    ).toMatchObject({ pending: true });

    expect(await increment(id)).toEqual({ status: 200, body: { status: 'latest offsets incremented' } });
    const second = await readAll(id);
    expect(second).toHaveLength(2);
    expect(second.map((r) => r.journalId)).not.toContain(first[0]?.journalId);
    expect((await increment(id)).body.status).toBe('latest offsets incremented');
    expect(await readAll(id)).toEqual([]);
    expect((await increment(id)).body.status).toBe('latest offsets incremented');
    expect((await increment(id)).body.status).toBe('no extract performed since the last increment');
  });

  it('refuses the cursor of an acknowledged read and increment of a non-incremental extract', async () => {
    const id = await create({ name: 'cursor', source: 'posted-journals', incremental: true });
    await ingest('businessEvent', [businessEvent({ amount: '40' })]);
    const first = await page(id, '?limit=1');
    expect(first.next).not.toBeNull();
    await increment(id);
    const stale = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-configurations/${id}/extractions/paginated?after=${first.next}`,
    });
    expect(stale.statusCode).toBe(400);
    expect(stale.json().errors[0].path).toBe('/querystring/after');
    const garbage = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-configurations/${id}/extractions/paginated?after=bm9wZQ`,
    });
    expect(garbage.statusCode).toBe(400);
    // A cursor made by hand whose window end no store would make.
    const crafted = Buffer.from(JSON.stringify([`extract:${id}`, '9:5:', '1', 'x'])).toString('base64url');
    const refusedCursor = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-configurations/${id}/extractions/paginated?after=${crafted}`,
    });
    expect(refusedCursor.statusCode).toBe(400);
    expect(refusedCursor.json().errors[0].path).toBe('/querystring/after');

    const plain = await create({ name: 'plain', source: 'posted-journals' });
    const refused = await increment(plain);
    expect(refused.status).toBe(400);
    expect(refused.body.type).toBe('urn:ledgerflow:problem:extract-not-incremental');
  });

  it('puts a journal written unposted in the unposted extract when written and in the posted one when it posts', async () => {
    const posted = await create({ name: 'posted-2', source: 'posted-journals', incremental: true });
    const unposted = await create({ name: 'unposted', source: 'unposted-journals', incremental: true });
    // Everything so far, acknowledged.
    await readAll(posted);
    await increment(posted);
    await readAll(unposted);
    await increment(unposted);

    await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-23', amount: '50' })]);
    expect(await readAll(posted)).toEqual([]);
    await increment(posted);
    const written = await readAll(unposted);
    expect(written).toHaveLength(2);
    expect(written.every((row) => row.status === 'unposted' && row.coreDate === '2026-11-23')).toBe(true);
    await increment(unposted);

    // The business date reaches Monday: the journals post, in a transaction of their own.
    expect(await postDueJournals(t.store.db, t.store.adapter, AMS_NODE, '2026-11-23')).toBe(2);
    const nowPosted = await readAll(posted);
    expect(nowPosted.map((row) => row.journalId).sort()).toEqual(written.map((row) => row.journalId).sort());
    expect(nowPosted.every((row) => row.status === 'posted')).toBe(true);
    await increment(posted);
    expect(await readAll(posted)).toEqual([]);
    // Posting does not write them again as unposted.
    expect(await readAll(unposted)).toEqual([]);
  });

  it('reads journal lines as the journal definition records them, processing errors, records and balances', async () => {
    const lines = await create({
      name: 'lines',
      source: 'journal-lines',
      filters: { accountingConfig: 'IFRS' },
    });
    const rows = await readAll(lines, 3);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.accountingConfig === 'IFRS')).toBe(true);
    expect(rows[0]).toMatchObject({ journalLineNo: 1, drCr: 'DR', transactionCurrency: 'EUR' });
    const byNode = await create({
      name: 'lines-node',
      source: 'journal-lines',
      filters: { node: { branch: 'NYC' } },
    });
    expect(await readAll(byNode)).toEqual([]);

    const errorsId = await create({
      name: 'errors',
      source: 'processing-errors',
      filters: { code: 'unknown-event-type' },
      incremental: true,
    });
    await ingest('businessEvent', [businessEvent({ eventType: 'NOPE' })]);
    const errors = await readAll(errorsId);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'unknown-event-type', entity: 'businessEvent', state: 'open' });

    const records = await create({
      name: 'records',
      source: 'records',
      filters: { namespace: 'ledger', entity: 'businessEvent' },
      fields: ['recordId', 'eventType', 'amount'],
      format: 'csv',
      incremental: true,
    });
    const recordRows = await readAll(records, 4);
    expect(recordRows.some((row) => row.eventType === 'NOPE')).toBe(true);
    expect(Object.keys(recordRows[0] ?? {})).toEqual(['recordId', 'eventType', 'amount']);

    const balances = await create({
      name: 'balances',
      source: 'balances',
      filters: { accountingConfig: 'IFRS' },
    });
    const balanceRows = await readAll(balances, 1);
    expect(balanceRows.length).toBeGreaterThan(1);
    const asOf = await create({ name: 'balances-asof', source: 'balances', filters: { asOf: '2026-11-19' } });
    expect(await readAll(asOf)).toEqual([]);
  });

  it('streams the whole extract as JSON Lines or CSV', async () => {
    const id = await create({
      name: 'stream',
      source: 'posted-journals',
      fields: ['journalId', 'accountingConfig', 'node'],
      format: 'csv',
    });
    const paged = await readAll(id, 1000);
    const csv = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-configurations/${id}/extractions`,
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const csvLines = csv.body.split('\r\n').filter((line) => line !== '');
    expect(csvLines[0]).toBe('journalId,accountingConfig,node');
    expect(csvLines).toHaveLength(paged.length + 1);
    expect(csvLines[1]).toContain('"{""branch"":');
    const jsonl = await t.call(reader, {
      method: 'GET',
      url: `/api/v1/extraction-configurations/${id}/extractions?format=jsonl`,
    });
    expect(jsonl.headers['content-type']).toMatch(/^application\/jsonl/);
    const parsed = jsonl.body
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Row);
    expect(parsed).toEqual(paged);
  });
});

/** A records extract whose entity a later configuration no longer holds. */
describe('a records extract of an entity removed from the configuration', () => {
  let t: TestApp;
  let operator: string;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    operator = await t.tokenFor(['bulk-operator']);
    await uploadRealisticConfiguration(t, operator);
  });
  afterAll(async () => t?.close());

  it('answers 404 entity-not-found to its reads, as a read of the entity records does', async () => {
    const created = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/extraction-configurations',
      payload: {
        name: 'loans',
        source: 'records',
        filters: { namespace: 'loans', entity: 'loanTransaction' },
        incremental: true,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as number;
    const active = await t.call(operator, {
      method: 'PATCH',
      url: `/api/v1/extraction-configurations/${id}`,
      payload: { state: 'Active' },
    });
    expect(active.statusCode, active.body).toBe(200);
    const url = `/api/v1/extraction-configurations/${id}/extractions`;
    expect((await t.call(operator, { method: 'GET', url: `${url}/paginated` })).statusCode).toBe(200);
    await t.call(operator, { method: 'POST', url: `/api/v1/extraction-configurations/${id}/increment` });

    // The loans namespace (and the flow that reads it) leaves the configuration.
    const document = realisticConfiguration();
    document.configuration.entities = [];
    document.configuration.flows = [];
    const put = await t.call(operator, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: document,
    });
    expect(put.statusCode, put.body).toBe(200);
    const records = await t.call(operator, {
      method: 'GET',
      url: '/api/v1/namespaces/loans/entities/loanTransaction/records',
    });
    expect(records.statusCode).toBe(404);

    for (const read of [`${url}/paginated`, url, `${url}?format=jsonl`]) {
      const response = await t.call(operator, { method: 'GET', url: read });
      expect(response.statusCode, `${read}: ${response.body}`).toBe(404);
      expect(response.json()).toMatchObject({
        type: 'urn:ledgerflow:problem:entity-not-found',
        detail: 'the records extract names an unknown entity: no namespace loans.',
      });
    }
    // The configuration itself is still there, to delete or to read once the entity is back.
    expect(
      (await t.call(operator, { method: 'GET', url: `/api/v1/extraction-configurations/${id}` })).statusCode,
    ).toBe(200);
  });
});
