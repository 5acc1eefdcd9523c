import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';

const BULK = '/api/v1/configuration/bulk';

describe('Configuration Data bulk endpoints', () => {
  let t: TestApp;
  let operator: string;
  let reader: string;
  beforeAll(async () => {
    t = await createTestApp();
    operator = await t.tokenFor(['bulk-operator']);
    reader = await t.tokenFor(['api-client']);
  });
  afterAll(async () => t?.close());

  const put = (token: string, payload: unknown) =>
    t.call(token, { method: 'PUT', url: BULK, payload: payload as object });
  const get = (token: string) => t.call(token, { method: 'GET', url: BULK });

  describe('on a fresh instance', () => {
    beforeEach(async () => {
      expect((await t.call(operator, { method: 'DELETE', url: BULK })).statusCode).toBe(204);
    });

    it('downloads every section empty, with version, download time and the caller e-mail', async () => {
      const response = await get(reader);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body)).toEqual(['configuration', 'downloadTime', 'downloadedBy', 'version']);
      expect(body.version).toBe('v20230211');
      expect(body.downloadedBy).toMatch(/@example\.test$/);
      expect(body.downloadTime).toEqual({ seconds: expect.any(Number), nanos: expect.any(Number) });
      expect(body.downloadTime.seconds).toBe(Math.floor(t.clock.now().getTime() / 1000));
      expect(body.configuration).toEqual({
        accountLookups: [],
        accountingConfigurations: [],
        businessCalendars: [],
        businessDateSettings: {},
        businessEventDefinition: {},
        businessEventTypes: [],
        dimensionSets: [],
        entities: [],
        featureFlags: {},
        fiscalCalendars: [],
        flows: [],
        journalDefinition: {},
        journalTypes: [],
        nodeValues: [],
        nodes: [],
        postingComponentIdentifications: [],
        postingComponents: [],
      });
    });
  });

  it('round-trips the realistic configuration: PUT, GET, PUT of what GET returned, GET again', async () => {
    const fixture = realisticConfiguration();
    const first = await put(operator, fixture);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({
      version: 'v20230211',
      sections: expect.objectContaining({
        accountingConfigurations: 2,
        nodes: 2,
        postingComponents: 6,
        flows: 1,
        entities: 1,
      }),
      deleted: { ingestions: 0, records: 0, journals: 0, journalLines: 0, processingErrors: 0 },
    });
    const downloaded = (await get(reader)).json();
    expect(downloaded.configuration).toEqual(fixture.configuration);
    const second = await put(operator, downloaded);
    expect(second.statusCode).toBe(200);
    const again = (await get(reader)).json();
    expect(again.configuration).toEqual(downloaded.configuration);
    expect(JSON.stringify(again.configuration)).toBe(JSON.stringify(downloaded.configuration));
  });

  it('keeps each attribute type in the form it was uploaded in: canonical, shorthand or mixed', async () => {
    const fixture = realisticConfiguration();
    const attributes = fixture.configuration.entities[0]?.attributes as { type: unknown }[];
    const written = [
      { typeName: 'PrimitiveType', primitive: 'UUID' },
      { typeName: 'TEXT' },
      { typeName: 'date' },
      { typeName: 'PrimitiveType', primitive: 'DATETIME' },
      { typeName: 'PrimitiveType', primitive: 'AMOUNT' },
      { typeName: 'text' },
      { typeName: 'PrimitiveType', primitive: 'TEXT' },
      { typeName: 'TEXT' },
      { typeName: 'PrimitiveType', primitive: 'TEXT' },
      { typeName: 'INTEGER' },
      { typeName: 'PrimitiveType', primitive: 'BOOLEAN' },
      { typeName: 'ListType', elementType: 'DECIMAL' },
    ];
    written.forEach((type, i) => {
      const attribute = attributes[i];
      if (attribute !== undefined) attribute.type = type;
    });
    expect((await put(operator, fixture)).statusCode).toBe(200);
    const downloaded = (await get(reader)).json().configuration;
    expect(downloaded.entities[0].attributes.map((a: { type: unknown }) => a.type)).toEqual(written);
    expect(JSON.stringify(downloaded.entities[0].attributes[0].type)).toBe(
      '{"typeName":"PrimitiveType","primitive":"UUID"}',
    );
    // Both forms of one type validate records alike.
    const entity = await t.call(reader, {
      method: 'GET',
      url: '/api/v1/namespaces/loans/entities/loanTransaction',
    });
    expect(entity.json().attributes.map((a: { type: string }) => a.type)).toEqual([
      'UUID',
      'TEXT',
      'DATE',
      'DATETIME',
      'DECIMAL',
      'TEXT',
      'TEXT',
      'TEXT',
      'TEXT',
      'INTEGER',
      'BOOLEAN',
      'LIST',
    ]);
  });

  it("accepts the product's canonical attribute types and names a wrong primitive with the allowed values", async () => {
    const fixture = realisticConfiguration();
    const attributes = fixture.configuration.entities[0]?.attributes as { type: unknown }[];
    expect(attributes[0]?.type).toEqual({ typeName: 'PrimitiveType', primitive: 'UUID' });
    expect((await put(operator, fixture)).statusCode).toBe(200);
    const broken = realisticConfiguration();
    const brokenAttributes = broken.configuration.entities[0]?.attributes as { type: unknown }[];
    if (brokenAttributes[2] !== undefined)
      brokenAttributes[2].type = { typeName: 'PrimitiveType', primitive: 'DAY' };
    const response = await put(operator, broken);
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual([
      {
        path: '/configuration/entities/0/attributes/2/type/primitive',
        message: 'must be one of TEXT, DATE, DATETIME, INTEGER, DECIMAL, AMOUNT, BOOLEAN, UUID',
      },
    ]);
  });

  it('accepts a string downloadTime and no downloadedBy', async () => {
    const fixture = realisticConfiguration();
    fixture.downloadTime = '2026-11-22T10:00:00Z';
    delete fixture.downloadedBy;
    expect((await put(operator, fixture)).statusCode).toBe(200);
  });

  it('reports every fault at once with JSON Pointer paths and changes nothing', async () => {
    expect((await put(operator, realisticConfiguration())).statusCode).toBe(200);
    const before = (await get(reader)).json().configuration;
    const broken = realisticConfiguration();
    const c = broken.configuration as Record<string, Array<Record<string, unknown>>>;
    (c.postingComponents as Array<Record<string, unknown>>)[0] = {
      ...c.postingComponents?.[0],
      journalType: 'NOPE',
    };
    (c.journalTypes as Array<Record<string, unknown>>)[1] = { ...c.journalTypes?.[1], behavior: 'SOMETIMES' };
    (c.nodes as Array<Record<string, unknown>>)[0] = { ...c.nodes?.[0], timeZone: 'Mars/Olympus_Mons' };
    const response = await put(operator, broken);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toContain('application/problem+json');
    const body = response.json();
    expect(body.type).toBe('urn:ledgerflow:problem:configuration-invalid');
    const paths = body.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(['/configuration/journalTypes/1/behavior', '/configuration/nodes/0/timeZone']),
    );
    expect((await get(reader)).json().configuration).toEqual(before);
  });

  it('names the cross-reference at fault', async () => {
    const broken = realisticConfiguration();
    const components = broken.configuration.postingComponents as Array<Record<string, unknown>>;
    components[3] = { ...components[3], journalType: 'MISSING' };
    const response = await put(operator, broken);
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toContainEqual({
      path: '/configuration/postingComponents/3/journalType',
      message: expect.stringContaining('MISSING'),
    });
  });

  it.each([
    ['a missing version', (d: Record<string, unknown>) => delete d.version, '/version'],
    ['an unknown version', (d: Record<string, unknown>) => (d.version = 'v19990101'), '/version'],
    [
      'an unknown section',
      (d: { configuration: Record<string, unknown> }) => (d.configuration.ledgers = []),
      '/configuration/ledgers',
    ],
    [
      'a wrong type',
      (d: { configuration: Record<string, unknown> }) => (d.configuration.nodes = 'many'),
      '/configuration/nodes',
    ],
    ['an unknown top-level member', (d: Record<string, unknown>) => (d.comment = 'x'), '/comment'],
  ])('refuses %s with a 400 naming %s', async (_name, change, path) => {
    const document = realisticConfiguration();
    change(document as never);
    const response = await put(operator, document);
    expect(response.statusCode).toBe(400);
    const errors = response.json().errors as { path: string; message: string }[];
    expect(errors.map((e) => e.path)).toContain(path);
    if (path === '/version')
      expect(errors.find((e) => e.path === '/version')?.message).toContain('v20230211');
  });

  it('refuses malformed JSON and a body over the size limit, and accepts 10 MB', async () => {
    const malformed = await t.call(operator, {
      method: 'PUT',
      url: BULK,
      headers: { 'content-type': 'application/json' },
      payload: '{"version": "v20230211", "configuration": {',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().type).toBe('urn:ledgerflow:problem:malformed-json');

    const big = realisticConfiguration();
    const lookups = big.configuration.accountLookups as Array<{
      postingCode: string;
      accountLookupPatterns: { account: string }[];
    }>;
    for (let i = 0; lookups.length < 120_000; i += 1) {
      lookups.push({
        postingCode: `BULK_${i}_${'x'.repeat(20)}`,
        accountLookupPatterns: [{ account: `9${String(i).padStart(8, '0')}` }],
      });
    }
    const payload = JSON.stringify(big);
    expect(payload.length).toBeGreaterThan(10 * 1024 * 1024);
    const accepted = await t.call(operator, {
      method: 'PUT',
      url: BULK,
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().sections.accountLookups).toBe(lookups.length);

    const tooBig = await t.call(operator, {
      method: 'PUT',
      url: BULK,
      headers: { 'content-type': 'application/json' },
      payload: `${payload}${' '.repeat(33 * 1024 * 1024 - payload.length)}`,
    });
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json().type).toBe('urn:ledgerflow:problem:payload-too-large');
  });

  it('lets api-client read but not upload or delete; bulk-operator may', async () => {
    expect((await get(reader)).statusCode).toBe(200);
    expect((await put(reader, realisticConfiguration())).statusCode).toBe(403);
    expect((await t.call(reader, { method: 'DELETE', url: BULK })).statusCode).toBe(403);
    expect((await put(operator, realisticConfiguration())).statusCode).toBe(200);
    expect((await t.call(operator, { method: 'DELETE', url: BULK })).statusCode).toBe(204);
  });

  it('deletes the configuration and keeps users and credentials', async () => {
    expect((await put(operator, realisticConfiguration())).statusCode).toBe(200);
    expect((await t.call(operator, { method: 'DELETE', url: BULK })).statusCode).toBe(204);
    const after = (await get(operator)).json();
    expect(after.configuration.nodes).toEqual([]);
    expect(after.configuration.businessEventDefinition).toEqual({});
    // The same credential still works: users and credentials are not configuration.
    expect((await get(reader)).statusCode).toBe(200);
  });

  it('records uploads and deletions in the audit log, newest first', async () => {
    const admin = await t.tokenFor(['admin']);
    await put(operator, realisticConfiguration());
    await t.call(operator, { method: 'DELETE', url: BULK });
    const response = await t.call(reader, { method: 'GET', url: '/api/v1/audit-log?limit=2' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ page: 0, limit: 2, totalSize: expect.any(Number) });
    expect(body.data[0]).toMatchObject({
      action: 'configuration.delete',
      actor: expect.stringMatching(/@example\.test$/),
      version: 'v20230211',
    });
    expect(body.data[1]).toMatchObject({
      action: 'configuration.upload',
      sections: expect.objectContaining({ nodes: 2 }),
    });
    expect(body.data[0].revision).toBe(body.data[1].revision + 1);
    expect((await t.call(admin, { method: 'GET', url: '/api/v1/audit-log' })).statusCode).toBe(200);
  });
});
