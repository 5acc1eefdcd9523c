import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';

/** Entity metadata and example chunks. */
describe('namespaces, entities and example chunks', () => {
  let t: TestApp;
  let reader: string;
  beforeAll(async () => {
    t = await createTestApp();
    reader = await t.tokenFor(['viewer']);
    const operator = await t.tokenFor(['bulk-operator']);
    expect(
      (
        await t.call(operator, {
          method: 'PUT',
          url: '/api/v1/configuration/bulk',
          payload: realisticConfiguration(),
        })
      ).statusCode,
    ).toBe(200);
  });
  afterAll(async () => t?.close());
  const get = (url: string) => t.call(reader, { method: 'GET', url });

  it('lists the namespaces of user entities and the ledger', async () => {
    expect((await get('/api/v1/namespaces')).json()).toEqual({
      data: [{ name: 'loans' }, { name: 'ledger' }],
    });
  });

  it('lists the entities of a namespace, and 404s an unknown one', async () => {
    expect(
      (await get('/api/v1/namespaces/ledger/entities')).json().data.map((e: { name: string }) => e.name),
    ).toEqual(['businessEvent', 'businessEventRollback', 'journal']);
    expect((await get('/api/v1/namespaces/loans/entities')).json()).toEqual({
      data: [
        {
          name: 'loanTransaction',
          temporalityType: 'Transaction',
          description: 'Transactions of the loan servicing system',
        },
      ],
    });
    const missing = await get('/api/v1/namespaces/nowhere/entities');
    expect(missing.statusCode).toBe(404);
  });

  it('describes an entity with its attributes in configured order and their types', async () => {
    const entity = (await get('/api/v1/namespaces/loans/entities/loanTransaction')).json();
    const configured = realisticConfiguration().configuration.entities[0]?.attributes as {
      name: string;
      mandatory: boolean;
    }[];
    expect(entity).toMatchObject({
      name: 'loanTransaction',
      namespace: 'loans',
      type: 'DefinedEntity',
      temporalityType: 'Transaction',
    });
    expect(entity.attributes.map((a: { name: string }) => a.name)).toEqual(configured.map((a) => a.name));
    expect(entity.attributes[0]).toEqual({
      name: 'transactionId',
      label: 'Transaction id',
      mandatory: true,
      type: 'UUID',
    });
    expect(entity.attributes.find((a: { name: string }) => a.name === 'tags')).toMatchObject({
      type: 'LIST',
      elementType: 'TEXT',
    });
    const event = (await get('/api/v1/namespaces/ledger/entities/businessEvent')).json();
    expect(
      event.attributes.map(
        (a: { name: string; type: string; mandatory: boolean }) => `${a.name}:${a.type}:${a.mandatory}`,
      ),
    ).toEqual([
      'eventType:TEXT:true',
      'effectiveDate:DATE:true',
      'amount:DECIMAL:false',
      'currency:TEXT:false',
      'legalEntity:TEXT:true',
      'branch:TEXT:true',
      'productCode:TEXT:false',
    ]);
    expect((await get('/api/v1/namespaces/loans/entities/nothing')).statusCode).toBe(404);
    expect((await get('/api/v1/namespaces/loans/entities/nothing/example')).json().type).toBe(
      'urn:ledgerflow:problem:entity-not-found',
    );
  });

  it('gives an example chunk with every attribute set', async () => {
    const example = (await get('/api/v1/namespaces/loans/entities/loanTransaction/example')).json();
    expect(example.chunkName).toBe('example-loanTransaction');
    expect(example.data).toHaveLength(1);
    const configured = realisticConfiguration().configuration.entities[0]?.attributes as { name: string }[];
    expect(Object.keys(example.data[0])).toEqual(configured.map((a) => a.name));
  });

  it('offers the closest configured names when a namespace or an entity is unknown', async () => {
    const entity = await get('/api/v1/namespaces/ledger/entities/journals');
    expect(entity.statusCode).toBe(404);
    expect(entity.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:entity-not-found',
      detail: 'no entity journals in namespace ledger. Did you mean "journal"?',
      suggestions: ['journal'],
    });
    const example = await get('/api/v1/namespaces/ledger/entities/BusinessEvents/example');
    expect(example.json()).toMatchObject({ suggestions: ['businessEvent'] });
    const namespace = await get('/api/v1/namespaces/Ledgr/entities/journal');
    expect(namespace.statusCode).toBe(404);
    expect(namespace.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:entity-not-found',
      detail: 'no namespace Ledgr. Did you mean "ledger"?',
      suggestions: ['ledger'],
    });
    const list = await get('/api/v1/namespaces/loan/entities');
    expect(list.statusCode).toBe(404);
    expect(list.json()).toMatchObject({
      detail: 'no namespace loan. Did you mean "loans"?',
      suggestions: ['loans'],
    });
    const unrelated = await get('/api/v1/namespaces/ledger/entities/somethingElse');
    expect(unrelated.json()).toMatchObject({
      detail: 'no entity somethingElse in namespace ledger.',
      suggestions: [],
    });

    const writer = await t.tokenFor(['bulk-operator']);
    const session = await t.call(writer, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransactions' },
    });
    expect(session.statusCode).toBe(404);
    expect(session.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:entity-not-found',
      suggestions: ['loanTransaction'],
    });
  });

  it('gives ledger examples that are accepted and processed into journals without errors', async () => {
    const writer = await t.tokenFor(['bulk-operator']);
    const journalsReader = await t.tokenFor(['admin']);
    for (const entity of ['businessEvent', 'journal']) {
      const example = await get(`/api/v1/namespaces/ledger/entities/${entity}/example`);
      expect(example.statusCode).toBe(200);
      const session = await t.call(writer, {
        method: 'POST',
        url: '/api/v1/ingestions',
        payload: { namespace: 'ledger', entity },
      });
      const { ingestionId } = session.json();
      const chunk = await t.call(writer, {
        method: 'POST',
        url: `/api/v1/ingestions/${ingestionId}`,
        headers: { 'content-type': 'application/json' },
        payload: example.body,
      });
      expect(chunk.statusCode, chunk.body).toBe(201);
      expect(chunk.json()).toMatchObject({ acceptedRows: example.json().data.length, failedRows: 0 });
      const closed = await t.call(writer, {
        method: 'PATCH',
        url: `/api/v1/ingestions/${ingestionId}`,
        headers: { 'content-type': 'application/merge-patch+json' },
        payload: { state: 'closed' },
      });
      expect(closed.statusCode).toBe(200);
      await t.services.processor.drain();
      const status = await t.call(writer, { method: 'GET', url: `/api/v1/ingestions/${ingestionId}` });
      expect(status.json(), entity).toMatchObject({ state: 'closed', processingStatus: 'completed' });
      const errors = await t.call(writer, { method: 'GET', url: `/api/v1/ingestions/${ingestionId}/errors` });
      expect(errors.json().data, entity).toEqual([]);
      const journals = await t.call(journalsReader, {
        method: 'GET',
        url: `/api/v1/journals?ingestionId=${ingestionId}`,
      });
      expect(journals.statusCode).toBe(200);
      expect(journals.json().data.length, entity).toBeGreaterThan(0);
    }
  });
});
