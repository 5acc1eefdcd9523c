import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';

/**
 * Issue 3: a PUT racing with chunk submissions and reads never exposes a mix of old and new
 * configuration. Two configurations alternate: X knows an optional `note` on loan
 * transactions, Y does not. Readers must see X or Y whole; a chunk carrying `note` may be
 * stored only in a session opened under X, and no record may outlive the upload that replaced
 * its configuration.
 */
describe('configuration upload racing with chunks and reads', () => {
  let t: TestApp;
  let operator: string;
  const x = realisticConfiguration();
  const xEntity = x.configuration.entities[0];
  if (xEntity === undefined) throw new Error('fixture entity missing');
  (xEntity.attributes as unknown[]).push({
    name: 'note',
    label: 'Note',
    mandatory: false,
    source: 'input',
    type: { typeName: 'TEXT' },
  });
  const y = realisticConfiguration();

  beforeAll(async () => {
    t = await createTestApp();
    operator = await t.tokenFor(['bulk-operator']);
  });
  afterAll(async () => t?.close());

  it('never mixes the two', async () => {
    const put = (document: unknown) =>
      t.call(operator, { method: 'PUT', url: '/api/v1/configuration/bulk', payload: document as object });
    expect((await put(x)).statusCode).toBe(200);
    const xText = JSON.stringify(x.configuration.entities);
    const yText = JSON.stringify(y.configuration.entities);
    const seen = new Set<string>();
    let stop = false;
    // Every loop is bounded, so the test ends even if one side starves the others.
    const ROUNDS_MAX = 150;

    const uploader = async () => {
      for (let i = 0; i < 12; i += 1) expect((await put(i % 2 === 0 ? y : x)).statusCode).toBe(200);
      stop = true;
    };
    const reader = async () => {
      for (let round = 0; round < ROUNDS_MAX && !stop; round += 1) {
        const response = await t.call(operator, { method: 'GET', url: '/api/v1/configuration/bulk' });
        const entities = JSON.stringify(response.json().configuration.entities);
        expect([xText, yText]).toContain(entities);
        seen.add(entities === xText ? 'x' : 'y');
      }
    };
    const statuses: number[] = [];
    const submitter = async () => {
      for (let round = 0; round < ROUNDS_MAX && !stop; round += 1) {
        const opened = await t.call(operator, {
          method: 'POST',
          url: '/api/v1/ingestions',
          payload: { namespace: 'loans', entity: 'loanTransaction' },
        });
        if (opened.statusCode !== 201) continue;
        const id = opened.json().ingestionId;
        for (let i = 0; i < 3 && !stop; i += 1) {
          const chunk = await t.call(operator, {
            method: 'POST',
            url: `/api/v1/ingestions/${id}`,
            payload: { data: [loanRecord(i, { note: 'with note' })] },
          });
          statuses.push(chunk.statusCode);
          // 201 under X, 400 under Y (unknown field), 404 when an upload wiped the session.
          expect([201, 400, 404]).toContain(chunk.statusCode);
        }
      }
    };
    await Promise.all([uploader(), reader(), reader(), submitter(), submitter()]);
    expect(seen.size).toBeGreaterThan(0);
    expect(statuses.length).toBeGreaterThan(0);

    // The last upload was X; whatever is stored now belongs to sessions opened under X.
    const final = await t.call(operator, { method: 'GET', url: '/api/v1/configuration/bulk' });
    expect(JSON.stringify(final.json().configuration.entities)).toBe(xText);
    const sessions = (await t.call(operator, { method: 'GET', url: '/api/v1/ingestions?limit=1000' })).json();
    const records = (
      await t.call(operator, {
        method: 'GET',
        url: '/api/v1/namespaces/loans/entities/loanTransaction/records?limit=1000',
      })
    ).json();
    const live = new Set(sessions.data.map((s: { ingestionId: string }) => s.ingestionId));
    for (const record of records.data) expect(live.has(record.ingestionId)).toBe(true);
    const audit = (await t.call(operator, { method: 'GET', url: '/api/v1/audit-log?limit=1000' })).json();
    const revisions = audit.data.map((e: { revision: number }) => e.revision);
    expect(new Set(revisions).size).toBe(revisions.length);
  });
});
