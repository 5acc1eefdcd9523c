import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { type Signed, signIn, userWith } from './helpers.js';

/** Extracts in the administration interface: configurations, a preview, executions (issue 25). */
describe('extracts in the administration interface', () => {
  let t: TestApp;
  let viewer: Signed;
  let configId: number;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    viewer = await signIn(t, await userWith(t, ['viewer']));
    const operator = await t.tokenFor(['bulk-operator']);
    const document = realisticConfiguration();
    (document.configuration.featureFlags as Record<string, boolean>)['extracts-in-bulk'] = true;
    await t.call(operator, { method: 'PUT', url: '/api/v1/configuration/bulk', payload: document });
    await ingestClosedSession(t, operator, 'businessEvent', [businessEvent({ amount: '77.70' })]);
    await t.services.processor.drain();
    const { answer: made } = await t.services.extracts.create(
      {
        name: 'GL <lines>',
        description: null,
        source: 'journal-lines',
        filters: { accountingConfig: 'IFRS' },
        fields: ['account', 'transactionAmount', 'drCr'],
        format: 'csv',
        incremental: true,
      },
      { actor: { user: 'test@example.test' } },
    );
    configId = made.id;
    await t.services.extracts.update(configId, { state: 'Active' }, { actor: { user: 'test@example.test' } });
  });
  afterAll(async () => t?.close());

  it('lists the configurations by state, escaped, with a link in the navigation', async () => {
    const list = await viewer.get('/admin/extracts');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('href="/admin/extracts"');
    expect(list.body).toContain(`<a href="/admin/extracts/${configId}">GL &lt;lines&gt;</a>`);
    const drafts = await viewer.get('/admin/extracts?state=Draft');
    expect(drafts.body).toContain('No Draft extraction configuration');
  });

  it('previews the rows without fixing a pending read, and serves an execution file', async () => {
    const detail = await viewer.get(`/admin/extracts/${configId}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('<td>77.70</td>');
    expect(detail.body).toContain('<td>-77.70</td>');
    expect((await t.services.extracts.get(configId)).pendingPosition).toBeNull();

    const { answer: execution } = await t.services.extractExecutions.trigger(configId, {
      actor: { user: 'test@example.test' },
    });
    await t.services.extractExecutions.idle();
    const withExecution = await viewer.get(`/admin/extracts/${configId}`);
    expect(withExecution.body).toContain(`href="/admin/extracts/executions/${execution.id}/file"`);
    const file = await viewer.get(`/admin/extracts/executions/${execution.id}/file`);
    expect(file.statusCode).toBe(200);
    expect(file.body.split('\r\n')[0]).toBe('account,transactionAmount,drCr');
    expect(file.body).toContain('1300,77.70,DR');

    expect((await viewer.get('/admin/extracts/999999')).statusCode).toBe(404);
    expect((await viewer.get('/admin/extracts/nope')).statusCode).toBe(404);
  });

  it('says the extract changes on the audit page in words, with the configuration linked', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const audit = await admin.get('/admin/audit');
    expect(audit.statusCode).toBe(200);
    const link = `<a href="/admin/extracts/${configId}">GL &lt;lines&gt; (${configId})</a>`;
    expect(audit.body).toContain('Created an extraction configuration');
    expect(audit.body).toContain(`<dt>Configuration</dt><dd>${link}</dd>`);
    expect(audit.body).toContain('Changed an extraction configuration');
    expect(audit.body).toContain('<dt>State</dt><dd>Active <span class="muted">(was Draft)</span></dd>');
    expect(audit.body).toContain('Started an asynchronous extraction');
    expect(audit.body).toContain('<dt>Execution</dt>');
  });
});
