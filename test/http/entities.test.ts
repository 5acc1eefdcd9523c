import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { itRequiresPermission } from '../helpers/auth-cases.js';
import { realisticConfiguration } from '../helpers/fixtures.js';

/** Entity metadata (contract 3.1). */
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
  const app = () => t;
  const get = (url: string) => t.call(reader, { method: 'GET', url });

  itRequiresPermission(app, { method: 'GET', url: '/api/v1/namespaces' }, 'configuration:read', []);
  itRequiresPermission(
    app,
    { method: 'GET', url: '/api/v1/namespaces/loans/entities/loanTransaction/example' },
    'configuration:read',
    [],
  );

  it('lists the namespaces of user entities and the ledger', async () => {
    expect((await get('/api/v1/namespaces')).json()).toEqual({
      data: [{ name: 'loans' }, { name: 'ledger' }],
    });
  });

  it('lists the entities of a namespace, and 404s an unknown one', async () => {
    expect(
      (await get('/api/v1/namespaces/ledger/entities')).json().data.map((e: { name: string }) => e.name),
    ).toEqual(['businessEvent', 'journal']);
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
});
