import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  ingestClosedSession,
  realisticConfiguration,
  uploadRealisticConfiguration,
} from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

/**
 * Issue 51: the state-changing routes and the change runner. Every POST, PUT, PATCH and DELETE of
 * the OpenAPI document is named here once: on the runner (and then proved, below, to write its
 * audit entry, to answer a repeat of its `Idempotency-Key` with the first answer, another request
 * under the key with 422, and a dry run without writing), outside it by design, or still on its
 * own path (the rest of the issue's work).
 */

const EVENTS = '/api/v1/event-deliveries';

/** Routes outside the runner by design, with why. */
const OUTSIDE_BY_DESIGN: Record<string, string> = {
  issueToken: 'the OAuth 2.0 token endpoint (RFC 6749): form bodies, no audit entry, its own answers',
  revokeToken: 'the OAuth 2.0 revocation endpoint (RFC 7009): answers 200 whatever the token',
  submitChunk: 'ingestion: a chunk keeps its answer under its own key per session, with its records',
  createIngestionSession:
    'ingestion: opened by upstream systems at the pace of their data; a session id is the answer, and an unused one expires',
  closeIngestionSession:
    'ingestion: closing is idempotent by nature (a closed session answers as it is), committed with the other writes of its moment',
};

/** Routes that still keep their rules on their own path: the rest of the runner's work. */
const NOT_YET_ON_THE_RUNNER: string[] = [];

/** One request of a route. */
interface Call {
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  payload?: object;
}

/** A route on the runner: a request of it, another request under the same key, and what it answers. */
interface Sample {
  operationId: string;
  action: string;
  status: number;
  call: () => Call;
  other: () => Call;
  /** Run before the sample's first request. */
  before?: () => Promise<void>;
  /** Run once the real request answered. */
  after?: (answer: LightMyRequestResponse) => Promise<void> | void;
  /** The entries written after the sample's own, by a change it runs (an approval's action). */
  alsoAudited?: string[];
}

/** What the dry runs must leave as they were. */
const WATCHED_TABLES = [
  'event_subscriptions',
  'event_secrets',
  'event_deliveries',
  'audit_log',
  'change_answers',
  'extraction_configurations',
  'extraction_executions',
  'extraction_parts',
  'reprocess_schedule',
  'users',
  'credentials',
  'period_states',
  'period_states_version',
  'period_snapshots',
  'period_snapshot_lines',
  'approval_requests',
  'approval_day_counts',
  'reprocess_runs',
  'reversals',
  'journals',
  'events',
  'configuration',
  'configuration_revisions',
] as const;

type OpenApi = {
  paths: Record<string, Record<string, { operationId: string; parameters?: { name: string; in: string }[] }>>;
};

function changingOperations(): Map<string, { name: string; in: string }[]> {
  const doc = JSON.parse(
    readFileSync(new URL('../../docs/api/openapi.json', import.meta.url), 'utf8'),
  ) as OpenApi;
  const operations = new Map<string, { name: string; in: string }[]>();
  for (const methods of Object.values(doc.paths))
    for (const [method, operation] of Object.entries(methods))
      if (['post', 'put', 'patch', 'delete'].includes(method))
        operations.set(operation.operationId, operation.parameters ?? []);
  return operations;
}

describe('state-changing routes and the change runner', () => {
  let t: TestApp;
  let admin: string;
  /** Who `admin` is, as an approval request names its maker. */
  const adminCaller = { email: '', clientId: '' };
  const ids = { subscription: 0, delivery: 0 };
  const extracts = { configuration: 0 };
  /** The session whose journals the reversal sample reverses. */
  const reversal = { ingestionId: '' };
  const EXTRACTS = '/api/v1/extraction-configurations';
  const secrets: string[] = [];
  /** The credential the access samples create and revoke, with its secret. */
  const credential = { clientId: '', clientSecret: '' };
  const ACCESS_USER = 'runner-sample@example.test';
  /** The approval requests the decision samples decide: one of another user, one of the caller. */
  const approval = { others: '', own: '', approved: '' };
  /** October 2026 of the Amsterdam node: closed by the calendar on the tests' day, 2026-11-20. */
  const OCTOBER = { accountingConfig: 'LOCAL_GAAP', node: { legalEntity: 'LF_NL', branch: 'AMS' } };
  /** A deletion waiting for approval, asked for by another user (the kind need not be required). */
  const deletionAskedByAnother = async (): Promise<string> => {
    const other = await t.credentialFor(['admin']);
    const { request } = await t.services.approvals.request(
      'configuration.delete',
      {},
      { email: other.ownerEmail, clientId: other.clientId },
      undefined,
    );
    return request.requestId;
  };
  const period = (action: string, firstDay: string, reason?: string): Call => ({
    method: 'POST',
    url: `/api/v1/periods/${action}`,
    payload: { ...OCTOBER, firstDay, ...(reason === undefined ? {} : { reason }) },
  });

  const samples: Sample[] = [
    {
      operationId: 'createEventSecret',
      action: 'webhooks.secret-create',
      status: 201,
      call: () => ({ method: 'POST', url: `${EVENTS}/secrets` }),
      other: () => ({ method: 'POST', url: `${EVENTS}/secrets/rotate`, payload: {} }),
      after: (answer) => {
        secrets.push(answer.json().secret);
      },
    },
    {
      operationId: 'createEventSubscription',
      action: 'webhooks.subscription-create',
      status: 201,
      call: () => ({
        method: 'POST',
        url: `${EVENTS}/subscriptions`,
        payload: { url: 'https://hooks.example.com/a', eventTypes: ['configuration.changed'] },
      }),
      other: () => ({
        method: 'POST',
        url: `${EVENTS}/subscriptions`,
        payload: { url: 'https://hooks.example.com/b', eventTypes: ['configuration.changed'] },
      }),
      after: async (answer) => {
        ids.subscription = answer.json().id;
        // An event of its type, for the redeliveries below.
        await uploadRealisticConfiguration(t);
      },
    },
    {
      operationId: 'redeliverEventSubscription',
      action: 'webhooks.redeliver',
      status: 202,
      call: () => ({
        method: 'POST',
        url: `${EVENTS}/subscriptions/${ids.subscription}/redeliver`,
        payload: { since: '2000-01-01T00:00:00Z' },
      }),
      other: () => ({
        method: 'POST',
        url: `${EVENTS}/subscriptions/${ids.subscription}/redeliver`,
        payload: { since: '2001-01-01T00:00:00Z' },
      }),
      after: async (answer) => {
        expect(answer.json().events).toBeGreaterThan(0);
        const deliveries = await t.call(admin, { method: 'GET', url: `${EVENTS}/deliveries` });
        ids.delivery = deliveries.json().data[0].id;
      },
    },
    {
      operationId: 'redeliverEventDelivery',
      action: 'webhooks.redeliver',
      status: 202,
      call: () => ({ method: 'POST', url: `${EVENTS}/deliveries/${ids.delivery}/redeliver` }),
      other: () => ({ method: 'POST', url: `${EVENTS}/deliveries/${ids.delivery + 1000}/redeliver` }),
    },
    {
      operationId: 'updateEventSubscription',
      action: 'webhooks.subscription-update',
      status: 200,
      call: () => ({
        method: 'PATCH',
        url: `${EVENTS}/subscriptions/${ids.subscription}`,
        payload: { description: 'books' },
      }),
      other: () => ({
        method: 'PATCH',
        url: `${EVENTS}/subscriptions/${ids.subscription}`,
        payload: { description: 'other' },
      }),
    },
    {
      operationId: 'pauseEventSubscription',
      action: 'webhooks.subscription-pause',
      status: 200,
      call: () => ({ method: 'POST', url: `${EVENTS}/subscriptions/${ids.subscription}/pause` }),
      other: () => ({ method: 'POST', url: `${EVENTS}/subscriptions/${ids.subscription + 1000}/pause` }),
    },
    {
      operationId: 'resumeEventSubscription',
      action: 'webhooks.subscription-resume',
      status: 200,
      call: () => ({ method: 'POST', url: `${EVENTS}/subscriptions/${ids.subscription}/resume` }),
      other: () => ({ method: 'POST', url: `${EVENTS}/subscriptions/${ids.subscription}/pause` }),
    },
    {
      operationId: 'rotateEventSecret',
      action: 'webhooks.secret-rotate',
      status: 201,
      call: () => ({ method: 'POST', url: `${EVENTS}/secrets/rotate`, payload: { overlapSeconds: 60 } }),
      other: () => ({ method: 'POST', url: `${EVENTS}/secrets/rotate`, payload: { overlapSeconds: 120 } }),
      after: (answer) => {
        secrets.push(answer.json().secret);
      },
    },
    {
      operationId: 'deleteEventSubscription',
      action: 'webhooks.subscription-delete',
      status: 204,
      call: () => ({ method: 'DELETE', url: `${EVENTS}/subscriptions/${ids.subscription}` }),
      other: () => ({ method: 'DELETE', url: `${EVENTS}/subscriptions/${ids.subscription + 1000}` }),
    },
    {
      operationId: 'setReprocessSchedule',
      action: 'processing.reprocess-schedule',
      status: 200,
      call: () => ({
        method: 'PUT',
        url: '/api/v1/processing-errors/reprocess-schedule',
        payload: { mode: 'interval', dailyAt: '08:00', intervalMinutes: 240, maxAttempts: 5 },
      }),
      other: () => ({
        method: 'PUT',
        url: '/api/v1/processing-errors/reprocess-schedule',
        payload: { mode: 'interval', dailyAt: '08:00', intervalMinutes: 300, maxAttempts: 5 },
      }),
    },
    {
      // Its dry run is the engine's over the selected records (what would post, what would fail
      // again); a run with no open error to queue is finished at once: 200.
      operationId: 'reprocessProcessingErrors',
      action: 'processing.reprocess',
      status: 200,
      call: () => ({ method: 'POST', url: '/api/v1/processing-errors/reprocess', payload: { all: true } }),
      other: () => ({
        method: 'POST',
        url: '/api/v1/processing-errors/reprocess',
        payload: { code: 'no-account' },
      }),
      after: (answer) => {
        expect(answer.json()).toMatchObject({ trigger: 'manual', state: 'finished', queued: 0 });
      },
    },
    {
      operationId: 'reverseJournals',
      action: 'journals.reverse',
      status: 201,
      before: async () => {
        const effectiveDate = '2026-11-18';
        reversal.ingestionId = await ingestClosedSession(t, admin, 'businessEvent', [
          businessEvent({ effectiveDate }),
          businessEvent({ effectiveDate, amount: '12.34' }),
        ]);
        await t.services.processor.drain();
      },
      call: () => ({
        method: 'POST',
        url: '/api/v1/reversals',
        payload: { selection: { ingestionId: reversal.ingestionId }, reason: 'wrong feed' },
      }),
      other: () => ({
        method: 'POST',
        url: '/api/v1/reversals',
        payload: { selection: { ingestionId: reversal.ingestionId }, reason: 'another reason' },
      }),
      after: async (answer) => {
        expect(answer.json().journals).toBeGreaterThan(0);
        const announced = await t.store.db
          .selectFrom('events')
          .select('type')
          .where('type', '=', 'reversal.completed')
          .execute();
        expect(announced).toHaveLength(1);
      },
    },
    {
      // Its dry run checks the document and counts what an upload would wipe, reading only.
      operationId: 'uploadConfiguration',
      action: 'configuration.upload',
      status: 200,
      call: () => ({ method: 'PUT', url: '/api/v1/configuration/bulk', payload: realisticConfiguration() }),
      other: () => ({
        method: 'PUT',
        url: '/api/v1/configuration/bulk?keep=processing-data',
        payload: realisticConfiguration(),
      }),
      after: (answer) => {
        expect(answer.json().deleted.journals).toBeGreaterThan(0);
        expect(answer.headers.etag).toBeDefined();
      },
    },
    {
      operationId: 'createExtractionConfiguration',
      action: 'extracts.configuration-create',
      status: 201,
      call: () => ({
        method: 'POST',
        url: EXTRACTS,
        payload: { name: 'runner', source: 'posted-journals', incremental: true },
      }),
      other: () => ({
        method: 'POST',
        url: EXTRACTS,
        payload: { name: 'other', source: 'posted-journals', incremental: true },
      }),
      after: (answer) => {
        extracts.configuration = answer.json().id;
        expect(answer.headers.location).toBe(`${EXTRACTS}/${extracts.configuration}`);
      },
    },
    {
      operationId: 'updateExtractionConfiguration',
      action: 'extracts.configuration-update',
      status: 200,
      call: () => ({
        method: 'PATCH',
        url: `${EXTRACTS}/${extracts.configuration}`,
        payload: { state: 'Active' },
      }),
      other: () => ({
        method: 'PATCH',
        url: `${EXTRACTS}/${extracts.configuration}`,
        payload: { name: 'x' },
      }),
      after: async () => {
        // Asynchronous extractions need their feature flag, for the trigger below.
        const document = realisticConfiguration();
        (document.configuration.featureFlags as Record<string, boolean>)['extracts-in-bulk'] = true;
        const put = await t.call(await t.tokenFor(['bulk-operator']), {
          method: 'PUT',
          url: '/api/v1/configuration/bulk?keep=processing-data',
          payload: document,
        });
        expect(put.statusCode, put.body).toBe(200);
      },
    },
    {
      operationId: 'triggerExtraction',
      action: 'extracts.execution-start',
      status: 202,
      call: () => ({ method: 'POST', url: `${EXTRACTS}/${extracts.configuration}/executions` }),
      other: () => ({ method: 'POST', url: `${EXTRACTS}/${extracts.configuration + 1000}/executions` }),
      // The maker, woken once the trigger committed, makes the file.
      after: () => t.services.extractExecutions.idle(),
    },
    {
      operationId: 'incrementExtraction',
      action: 'extracts.increment',
      status: 200,
      call: () => ({ method: 'POST', url: `${EXTRACTS}/${extracts.configuration}/increment` }),
      other: () => ({ method: 'POST', url: `${EXTRACTS}/${extracts.configuration + 1000}/increment` }),
      after: (answer) => {
        expect(answer.json().status).toBe('latest offsets incremented');
      },
    },
    {
      operationId: 'deleteExtractionConfiguration',
      action: 'extracts.configuration-delete',
      status: 204,
      call: () => ({ method: 'DELETE', url: `${EXTRACTS}/${extracts.configuration}` }),
      other: () => ({ method: 'DELETE', url: `${EXTRACTS}/${extracts.configuration + 1000}` }),
    },
    {
      operationId: 'createUser',
      action: 'users.create',
      status: 201,
      call: () => ({
        method: 'POST',
        url: '/api/v1/users',
        payload: { email: ACCESS_USER, roles: ['viewer'] },
      }),
      other: () => ({
        method: 'POST',
        url: '/api/v1/users',
        payload: { email: 'runner-other@example.test', roles: ['viewer'] },
      }),
    },
    {
      operationId: 'updateUser',
      action: 'users.update',
      status: 200,
      call: () => ({
        method: 'PATCH',
        url: `/api/v1/users/${ACCESS_USER}`,
        payload: { displayName: 'Sample' },
      }),
      other: () => ({
        method: 'PATCH',
        url: `/api/v1/users/${ACCESS_USER}`,
        payload: { displayName: 'Other' },
      }),
    },
    {
      operationId: 'createCredential',
      action: 'credentials.create',
      status: 201,
      call: () => ({
        method: 'POST',
        url: '/api/v1/credentials',
        payload: { ownerEmail: ACCESS_USER, name: 'a' },
      }),
      other: () => ({
        method: 'POST',
        url: '/api/v1/credentials',
        payload: { ownerEmail: ACCESS_USER, name: 'b' },
      }),
      after: (answer) => {
        Object.assign(credential, answer.json());
      },
    },
    {
      operationId: 'revokeCredential',
      action: 'credentials.revoke',
      status: 204,
      call: () => ({ method: 'DELETE', url: `/api/v1/credentials/${credential.clientId}` }),
      other: () => ({ method: 'DELETE', url: `/api/v1/credentials/${credential.clientId}x` }),
    },
    {
      operationId: 'lockPeriod',
      action: 'periods.lock',
      status: 200,
      call: () => period('lock', '2026-10-01'),
      other: () => period('lock', '2026-09-01'),
      after: (answer) => {
        expect(answer.json()).toMatchObject({ period: { state: 'locked', snapshots: 1 } });
      },
    },
    {
      operationId: 'reopenPeriod',
      action: 'periods.reopen',
      status: 200,
      call: () => period('reopen', '2026-10-01', 'a late correction'),
      other: () => period('reopen', '2026-10-01', 'another reason'),
    },
    {
      operationId: 'rejectApprovalRequest',
      action: 'approval.rejected',
      status: 200,
      before: async () => {
        approval.others = await deletionAskedByAnother();
      },
      call: () => ({
        method: 'POST',
        url: `/api/v1/approval-requests/${approval.others}/reject`,
        payload: { reason: 'not now' },
      }),
      other: () => ({
        method: 'POST',
        url: `/api/v1/approval-requests/${approval.others}/reject`,
        payload: { reason: 'never' },
      }),
      after: (answer) => {
        expect(answer.json()).toMatchObject({ status: 'rejected', reason: 'not now' });
      },
    },
    {
      operationId: 'cancelApprovalRequest',
      action: 'approval.canceled',
      status: 200,
      // Only its maker cancels a request.
      before: async () => {
        const { request } = await t.services.approvals.request(
          'configuration.delete',
          {},
          adminCaller,
          undefined,
        );
        approval.own = request.requestId;
      },
      call: () => ({ method: 'POST', url: `/api/v1/approval-requests/${approval.own}/cancel` }),
      other: () => ({ method: 'POST', url: `/api/v1/approval-requests/${approval.others}/cancel` }),
      after: (answer) => {
        expect(answer.json()).toMatchObject({ status: 'canceled' });
      },
    },
    {
      operationId: 'closePeriod',
      action: 'periods.close',
      status: 200,
      call: () => period('close', '2026-10-01'),
      other: () => period('close', '2026-11-01'),
      after: (answer) => {
        expect(answer.json()).toMatchObject({ period: { state: 'closed', snapshots: 2 } });
      },
    },
    {
      // Its dry run checks the claim of the approval and runs nothing; the approved deletion
      // runs in its own change, with its own entry.
      operationId: 'approveApprovalRequest',
      action: 'approval.approved',
      alsoAudited: ['configuration.delete'],
      status: 200,
      before: async () => {
        approval.approved = await deletionAskedByAnother();
      },
      call: () => ({ method: 'POST', url: `/api/v1/approval-requests/${approval.approved}/approve` }),
      other: () => ({ method: 'POST', url: `/api/v1/approval-requests/${approval.others}/approve` }),
      after: (answer) => {
        expect(answer.json()).toMatchObject({ status: 'approved' });
      },
    },
    {
      // Last: it empties the configuration the samples above use.
      operationId: 'deleteConfiguration',
      action: 'configuration.delete',
      status: 204,
      call: () => ({ method: 'DELETE', url: '/api/v1/configuration/bulk' }),
      other: () => ({ method: 'PUT', url: '/api/v1/configuration/bulk', payload: realisticConfiguration() }),
    },
  ];

  beforeAll(async () => {
    t = await createTestApp();
    const credential = await t.credentialFor(['admin']);
    Object.assign(adminCaller, { email: credential.ownerEmail, clientId: credential.clientId });
    admin = (await t.services.tokens.clientCredentialsGrant(credential)).access_token;
  });
  afterAll(async () => t?.close());

  const send = (call: Call, key?: string, dryRun = false) =>
    t.call(admin, {
      method: call.method,
      url: `${call.url}${dryRun ? '?dryRun=true' : ''}`,
      ...(call.payload === undefined ? {} : { payload: call.payload }),
      ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
    });

  const snapshot = async (): Promise<string> => {
    const tables: Record<string, unknown[]> = {};
    for (const table of WATCHED_TABLES)
      tables[table] = await t.store.db.selectFrom(table).selectAll().execute();
    return JSON.stringify(tables);
  };

  const auditActions = async (): Promise<string[]> =>
    (await t.store.db.selectFrom('audit_log').select('action').orderBy('seq').execute()).map(
      (row) => row.action,
    );

  it('names every state-changing route once: on the runner, outside it by design, or not yet', () => {
    const named = [
      ...samples.map((s) => s.operationId),
      ...Object.keys(OUTSIDE_BY_DESIGN),
      ...NOT_YET_ON_THE_RUNNER,
    ];
    expect(new Set(named).size).toBe(named.length);
    expect([...named].sort()).toEqual([...changingOperations().keys()].sort());
  });

  it('documents dryRun and Idempotency-Key on every route on the runner', () => {
    const operations = changingOperations();
    for (const sample of samples)
      expect(operations.get(sample.operationId)?.map((p) => `${p.in}:${p.name}`)).toEqual(
        expect.arrayContaining(['query:dryRun', 'header:idempotency-key']),
      );
  });

  it('runs each route on the runner: a dry run writes nothing, a change is audited once, its key replays or refuses', async () => {
    for (const sample of samples) {
      const key = `key-${sample.operationId}`;
      await sample.before?.();
      // A redelivery wakes the deliverer, whose attempt changes the delivery; the tests start no poll.
      await t.services.deliverer.idle();
      const before = await snapshot();
      const dry = await send(sample.call(), key, true);
      expect(dry.statusCode, `${sample.operationId} dry run: ${dry.body}`).toBe(200);
      expect(await snapshot(), `${sample.operationId} dry run`).toBe(before);

      const actions = await auditActions();
      const made = await send(sample.call(), key);
      expect(made.statusCode, `${sample.operationId}: ${made.body}`).toBe(sample.status);
      expect(await auditActions(), sample.operationId).toEqual([
        ...actions,
        sample.action,
        ...(sample.alsoAudited ?? []),
      ]);
      await sample.after?.(made);

      const written = await auditActions();
      const again = await send(sample.call(), key);
      expect(again.statusCode, `${sample.operationId} repeated`).toBe(sample.status);
      expect(again.headers['idempotent-replayed'], sample.operationId).toBe('true');
      expect(again.body, sample.operationId).toBe(made.body);

      const other = await send(sample.other(), key);
      expect(other.statusCode, `${sample.operationId} other request: ${other.body}`).toBe(422);
      expect(other.json().type, sample.operationId).toContain('idempotency-key-reused');
      expect(await auditActions(), `${sample.operationId}: no entry for the repeat and the refusal`).toEqual(
        written,
      );
    }
  });

  it('makes one change of two requests sent at once under one key, answering both alike', async () => {
    const call: Call = {
      method: 'POST',
      url: `${EVENTS}/subscriptions`,
      payload: { url: 'https://hooks.example.com/race', eventTypes: ['ingestion.closed'] },
    };
    const answers = await Promise.all([send(call, 'race'), send(call, 'race'), send(call, 'race')]);
    expect(answers.map((a) => a.statusCode)).toEqual([201, 201, 201]);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(2);
    const rows = await t.store.db
      .selectFrom('event_subscriptions')
      .select('id')
      .where('url', '=', 'https://hooks.example.com/race')
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('keeps a signing secret answered under a key sealed, never in clear', async () => {
    expect(secrets).toHaveLength(2);
    const kept = await t.store.db.selectFrom('change_answers').select('answer').execute();
    const all = kept.map((row) => row.answer).join('\n');
    for (const secret of secrets) expect(all).not.toContain(secret.slice(6));
  });

  it('keeps a new credential answered under a key sealed, never its secret in clear', async () => {
    expect(credential.clientSecret).toMatch(/^lfs_/);
    const kept = await t.store.db.selectFrom('change_answers').select('answer').execute();
    expect(kept.map((row) => row.answer).join('\n')).not.toContain(credential.clientSecret.slice(4));
  });
});
