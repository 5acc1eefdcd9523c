import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/modules/audit/entry.js';
import { PASSWORD, signIn, userWith } from '../admin/helpers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

/**
 * Every audit entry names what caused it: a change made through the API names the credential's
 * owner and its client id; one made in the administration interface names the signed-in user and
 * no client id; one the service makes by itself names `system` and says why (`details.cause`).
 * Runs on SQLite and PostgreSQL.
 */
describe('who the audit trail names for each change', () => {
  let t: TestApp;
  let operator: { clientId: string; ownerEmail: string; token: string };
  let approver: { clientId: string; ownerEmail: string; token: string };

  async function caller(roles: string[]) {
    const credential = await t.credentialFor(roles);
    const { access_token: token } = await t.services.tokens.clientCredentialsGrant(credential);
    return { clientId: credential.clientId, ownerEmail: credential.ownerEmail, token };
  }

  /** The entries written after position `after`. */
  async function since(after: number): Promise<AuditEntry[]> {
    const entries: AuditEntry[] = [];
    for await (const entry of t.services.audit.entries(after)) entries.push(entry);
    return entries;
  }

  async function call(token: string, method: 'POST' | 'PUT', url: string, payload?: object) {
    const answer = await t.call(token, { method, url, ...(payload === undefined ? {} : { payload }) });
    expect(answer.statusCode, answer.body).toBeLessThan(300);
    return answer.json();
  }

  beforeAll(async () => {
    t = await createTestApp({ approvalRequired: ['reversal'] });
    await t.services.configuration.upload(realisticConfiguration(), { user: 'setup@example.test' });
    operator = await caller(['admin']);
    approver = await caller(['admin']);
    await ingestClosedSession(t, operator.token, 'businessEvent', [businessEvent()]);
    await t.services.processor.drain();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('through the API: the owner and the client id, for reprocessing, webhooks, periods and approvals', async () => {
    const after = (await t.services.audit.head()).seq;
    await call(operator.token, 'POST', '/api/v1/processing-errors/reprocess', { all: true });
    await call(operator.token, 'PUT', '/api/v1/processing-errors/reprocess-schedule', {
      mode: 'daily',
      dailyAt: '03:00',
      intervalMinutes: 180,
      maxAttempts: 5,
    });
    await call(operator.token, 'POST', '/api/v1/event-deliveries/secrets');
    await call(operator.token, 'POST', '/api/v1/periods/lock', {
      accountingConfig: 'LOCAL_GAAP',
      node: { legalEntity: 'LF_NL', branch: 'AMS' },
      firstDay: '2026-09-01',
    });
    const pending = await call(operator.token, 'POST', '/api/v1/reversals', {
      selection: { from: '2026-11-01', to: '2026-11-30', accountingConfig: 'IFRS' },
      reason: 'wrong feed',
    });
    const rejected = await t.call(approver.token, {
      method: 'POST',
      url: `/api/v1/approval-requests/${pending.requestId}/reject`,
      payload: { reason: 'not this one' },
    });
    expect(rejected.statusCode, rejected.body).toBe(200);

    const entries = await since(after);
    const byAction = (action: string) => entries.filter((e) => e.action === action);
    for (const action of [
      'processing.reprocess',
      'processing.reprocess-schedule',
      'webhooks.secret-create',
      'periods.lock',
      'approval.requested',
    ]) {
      expect(byAction(action), action).toHaveLength(1);
      expect(byAction(action)[0], action).toMatchObject({
        actor: operator.ownerEmail,
        clientId: operator.clientId,
      });
    }
    expect(byAction('approval.rejected')[0]).toMatchObject({
      actor: approver.ownerEmail,
      clientId: approver.clientId,
    });
  });

  it('in the administration interface: the signed-in user, and no client id', async () => {
    const email = await userWith(t, ['admin']);
    const session = await signIn(t, email, PASSWORD);
    const after = (await t.services.audit.head()).seq;
    const answer = await session.post('/admin/processing-errors/reprocess', { all: 'true' });
    expect(answer.statusCode, answer.body).toBe(303);
    const locked = await session.post('/admin/periods/lock', {
      accountingConfig: 'LOCAL_GAAP',
      node: JSON.stringify({ legalEntity: 'LF_NL', branch: 'AMS' }),
      firstDay: '2026-08-01',
    });
    expect(locked.statusCode, locked.body).toBe(303);
    const entries = await since(after);
    for (const action of ['processing.reprocess', 'periods.lock']) {
      const [entry] = entries.filter((e) => e.action === action);
      expect(entry, action).toMatchObject({ actor: email, clientId: null });
    }
  });

  it('by the service itself: system, and why', async () => {
    const after = (await t.services.audit.head()).seq;
    // The schedule set above is due at 03:00 UTC: the clock moves past it, and a tick starts it.
    t.clock.set('2026-11-21T03:00:01Z');
    await t.services.reprocessing.tick();
    const [entry] = (await since(after)).filter((e) => e.action === 'processing.reprocess');
    expect(entry).toMatchObject({
      actor: 'system',
      clientId: null,
      details: { trigger: 'scheduled', cause: 'the reprocessing schedule was due' },
    });
  });
});
