import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../src/composition/services.js';
import { buildApp } from '../../src/http/app.js';
import { ManualClock } from '../../src/lib/clock.js';
import { approvalDecisions } from '../../src/modules/approvals/changes.js';
import { APPROVAL_RUN_LEASE_MS } from '../../src/modules/approvals/service.js';
import { ChangeRunner } from '../../src/modules/changes/runner.js';
import { createChangeStore } from '../../src/storage/changes/change-store.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { TEST_DIALECT } from '../helpers/store.js';

/** Friday 2026-11-20, 10:00 UTC: the business date of the Amsterdam node is 2026-11-20. */
const NOW = '2026-11-20T10:00:00Z';
const ALL_KINDS = ['configuration.upload', 'configuration.delete', 'reversal', 'period.reopen'] as const;

type ApprovalRequest = {
  requestId: string;
  kind: string;
  status: string;
  makerEmail: string;
  documentSha256: string;
  revision: number;
  dryRun: Record<string, unknown>;
  summary: Record<string, unknown>;
  decidedBy: string | null;
  reason: string | null;
  outcome: Record<string, unknown> | null;
  problem: { code: string; detail: string } | null;
};

let t: TestApp;
/** A bulk operator: the maker. */
let maker: { token: string; email: string };
/** An administrator: the approver. */
let approver: string;

async function userToken(roles: string[]): Promise<{ token: string; email: string }> {
  const credential = await t.credentialFor(roles);
  const { access_token: token } = await t.services.tokens.clientCredentialsGrant(credential);
  return { token, email: credential.ownerEmail };
}

beforeEach(async () => {
  t = await createTestApp({ approvalRequired: [...ALL_KINDS] }, { clock: new ManualClock(NOW) });
  // The first configuration is stored by the service itself: only requests through the API wait.
  await t.services.configuration.upload(realisticConfiguration(), { user: 'setup@example.test' });
  maker = await userToken(['bulk-operator']);
  approver = (await userToken(['admin'])).token;
});
afterEach(async () => {
  await t.close();
});

async function revision(): Promise<string | undefined> {
  const download = await t.call(maker.token, { method: 'GET', url: '/api/v1/configuration/bulk' });
  return download.headers.etag as string | undefined;
}

function act(token: string, requestId: string, action: 'approve' | 'reject' | 'cancel', reason?: string) {
  return t.call(token, {
    method: 'POST',
    url: `/api/v1/approval-requests/${requestId}/${action}`,
    ...(reason === undefined ? {} : { payload: { reason } }),
  });
}

async function metrics(): Promise<{ awaitingApproval: number; deniedApproval: number }> {
  const answer = await t.call(approver, {
    method: 'GET',
    url: '/api/v1/statistics/operational-dashboard/journal-metrics?from=2026-11-01&to=2026-12-01',
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json();
}

async function ingest(data: unknown[]): Promise<string> {
  const ingestionId = await ingestClosedSession(t, maker.token, 'businessEvent', data);
  await t.services.processor.drain();
  return ingestionId;
}

function upload(token: string, body: unknown, query = '') {
  return t.call(token, {
    method: 'PUT',
    url: `/api/v1/configuration/bulk${query}`,
    payload: body as Record<string, unknown>,
  });
}

/** The realistic configuration with one more optional attribute: a change that keeps the data. */
function withNote(): ReturnType<typeof realisticConfiguration> {
  const document = realisticConfiguration();
  const entity = document.configuration.entities[0];
  if (entity === undefined) throw new Error('no entity');
  entity.attributes.push({
    name: 'approvalNote',
    label: 'Approval note',
    mandatory: false,
    source: 'input',
    type: { typeName: 'PrimitiveType', primitive: 'TEXT' },
  });
  return document;
}

describe('a configuration upload waiting for approval', () => {
  it('changes nothing until another user approves it; then it runs as the approver, on behalf of the maker', async () => {
    const before = await revision();
    const made = await upload(maker.token, withNote(), '?keep=processing-data');
    expect(made.statusCode, made.body).toBe(202);
    const request = made.json() as ApprovalRequest;
    expect(made.headers.location).toBe(`/api/v1/approval-requests/${request.requestId}`);
    expect(request).toMatchObject({
      kind: 'configuration.upload',
      status: 'pending-approval',
      makerEmail: maker.email,
      decidedBy: null,
      outcome: null,
    });
    expect(request.documentSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(request.dryRun).toMatchObject({ keepProcessingData: true, wouldDelete: { ingestions: 0 } });
    expect(request.summary).toMatchObject({ added: 1, removed: 0 });
    expect(await revision()).toBe(before);
    expect(await metrics()).toEqual(expect.objectContaining({ awaitingApproval: 1, deniedApproval: 0 }));

    // Four eyes: not the maker, not through another credential of the maker either.
    const own = await act(maker.token, request.requestId, 'approve');
    expect(own.statusCode).toBe(403);
    const { answer: makerAdminCredential } = await t.services.access.createCredential(
      { ownerEmail: maker.email },
      { actor: { user: 'test-setup' } },
    );
    await t.services.access.updateUser(
      maker.email,
      { roles: ['bulk-operator', 'admin'] },
      { actor: { user: 'test-setup' } },
    );
    const { access_token: sameUser } = await t.services.tokens.clientCredentialsGrant(makerAdminCredential);
    const other = await act(sameUser, request.requestId, 'approve');
    expect(other.statusCode, other.body).toBe(403);
    expect(other.json().type).toBe('urn:ledgerflow:problem:approval-by-maker');

    const approved = await act(approver, request.requestId, 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    const done = approved.json() as ApprovalRequest;
    expect(done.status).toBe('approved');
    expect(done.outcome).toMatchObject({ revision: request.revision + 1 });
    expect(await revision()).toBe(`"revision-${request.revision + 1}"`);
    const kept = await t.services.revisions.list(0, 1);
    expect(kept.rows[0]?.sha256).toBe(request.documentSha256);
    expect(await metrics()).toEqual(expect.objectContaining({ awaitingApproval: 0, deniedApproval: 0 }));

    const again = await act(approver, request.requestId, 'approve');
    expect(again.statusCode).toBe(409);
    expect(again.json().type).toBe('urn:ledgerflow:problem:approval-not-pending');

    const audit = await t.call(approver, { method: 'GET', url: '/api/v1/audit-log?limit=10' });
    const actions = (audit.json().data as { action: string }[]).map((entry) => entry.action);
    // The credential and role change made above for the four-eyes check are audited too.
    const ofTheRequest = actions.filter((action) => !/^(users|credentials)\./.test(action));
    expect(ofTheRequest.slice(0, 3)).toEqual([
      'configuration.upload',
      'approval.approved',
      'approval.requested',
    ]);
  });

  it('asked again while it waits (a retried PUT), answers the same request; another action or user makes another', async () => {
    const first = await upload(maker.token, withNote(), '?keep=processing-data');
    expect(first.statusCode, first.body).toBe(202);
    const retried = await upload(maker.token, withNote(), '?keep=processing-data');
    expect(retried.statusCode, retried.body).toBe(202);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    const request = first.json() as ApprovalRequest;
    expect(retried.json()).toEqual(request);
    expect(retried.headers.location).toBe(first.headers.location);
    expect(await metrics()).toEqual(expect.objectContaining({ awaitingApproval: 1 }));

    // The same document without keeping the data is another action; another user's is theirs.
    const wiping = await upload(maker.token, withNote());
    expect(wiping.statusCode, wiping.body).toBe(202);
    expect(wiping.headers['idempotent-replayed']).toBeUndefined();
    const colleague = await userToken(['bulk-operator']);
    const theirs = await upload(colleague.token, withNote(), '?keep=processing-data');
    expect(theirs.statusCode, theirs.body).toBe(202);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(new Set([request.requestId, wiping.json().requestId, theirs.json().requestId]).size).toBe(3);

    // Once decided, the same action asked again is a new request.
    expect((await act(approver, request.requestId, 'reject', 'not now')).statusCode).toBe(200);
    const anew = await upload(maker.token, withNote(), '?keep=processing-data');
    expect(anew.statusCode, anew.body).toBe(202);
    expect(anew.json().requestId).not.toBe(request.requestId);
    expect(await metrics()).toEqual(expect.objectContaining({ awaitingApproval: 3, deniedApproval: 1 }));
  });

  it('a bad document is refused at once, and no request is made', async () => {
    const made = await upload(maker.token, { version: '1', configuration: { entities: 'no' } });
    expect(made.statusCode).toBe(400);
    const list = await t.call(approver, { method: 'GET', url: '/api/v1/approval-requests' });
    expect(list.json().totalSize).toBe(0);
  });

  it('is invalidated by another upload in between: nothing changes, and a repeat of its key answers the same', async () => {
    const first = (await upload(maker.token, withNote(), '?keep=processing-data')).json() as ApprovalRequest;
    // Another change lands first (made directly by the service, as an earlier approval would).
    await t.services.configuration.upload(realisticConfiguration(), { user: 'other@example.test' });
    const moved = await revision();
    const approve = () =>
      t.call(approver, {
        method: 'POST',
        url: `/api/v1/approval-requests/${first.requestId}/approve`,
        headers: { 'idempotency-key': 'approve-once' },
      });
    const approved = await approve();
    expect(approved.statusCode, approved.body).toBe(409);
    expect(approved.json().type).toBe('urn:ledgerflow:problem:approval-invalidated');
    const again = await approve();
    expect(again.statusCode, again.body).toBe(409);
    // The same problem; only what names this answer (its reference and moment) differs.
    const { reference: _first, timestamp: _at, ...problem } = approved.json();
    expect(again.json()).toEqual({
      ...problem,
      reference: expect.any(String),
      timestamp: expect.any(String),
    });
    expect(await revision()).toBe(moved);
    const after = await t.call(approver, {
      method: 'GET',
      url: `/api/v1/approval-requests/${first.requestId}`,
    });
    expect(after.json()).toMatchObject({ status: 'invalid', problem: { code: 'approval-invalidated' } });
  });
});

describe('an approved request whose instance stopped while its action ran', () => {
  /** Makes an upload request and approves it as `approve` does first; the instance "stops" there. */
  async function madeAndClaimed(): Promise<ApprovalRequest> {
    const made = await upload(maker.token, withNote(), '?keep=processing-data');
    expect(made.statusCode, made.body).toBe(202);
    const request = made.json() as ApprovalRequest;
    const decider = { email: 'approver@example.test', clientId: 'approver-client' };
    const { answer: claimed } = await new ChangeRunner(createChangeStore(t.store), t.clock).run(
      approvalDecisions.approve,
      { requestId: request.requestId, decider },
      { actor: { user: decider.email, clientId: decider.clientId } },
    );
    expect(claimed.status).toBe('processing');
    return request;
  }

  /** The upload an approval of `request` runs, as its kind runs it. */
  function runUpload(request: ApprovalRequest) {
    return t.services.configuration.uploadBound(
      withNote(),
      { user: 'approver@example.test' },
      {
        documentSha256: request.documentSha256,
        keepProcessingData: true,
        revision: request.revision,
        wouldDelete: request.dryRun.wouldDelete as never,
        approvalRequestId: request.requestId,
      },
    );
  }

  const storedRevision = () => t.services.configuration.checkedRevision(undefined);

  it('is recovered as failed once its lease is over; nothing changed', async () => {
    const before = await storedRevision();
    const request = await madeAndClaimed();
    t.clock.advance(APPROVAL_RUN_LEASE_MS - 1000);
    expect(await t.services.approvals.recoverInterrupted()).toBe(0);
    t.clock.advance(2000);
    expect(await t.services.approvals.recoverInterrupted()).toBe(1);
    expect(await t.services.approvals.get(request.requestId)).toMatchObject({
      status: 'failed',
      problem: { code: 'approval-interrupted' },
    });
    expect(await storedRevision()).toBe(before);
    expect(await t.services.approvals.recoverInterrupted()).toBe(0);
    const audit = await t.services.audit.list({ page: 0 }, 5);
    expect(audit.rows[0]).toMatchObject({ action: 'approval.failed' });
  });

  it('its action commits with the request approved, and an action whose request was recovered cannot commit', async () => {
    const first = await madeAndClaimed();
    // The action commits; the instance stops before the outcome is added.
    expect((await runUpload(first)).kind).toBe('done');
    expect(await t.services.approvals.get(first.requestId)).toMatchObject({
      status: 'approved',
      outcome: null,
    });
    t.clock.advance(APPROVAL_RUN_LEASE_MS + 1000);
    expect(await t.services.approvals.recoverInterrupted()).toBe(0);
    expect((await t.services.approvals.get(first.requestId)).status).toBe('approved');

    maker = await userToken(['bulk-operator']);
    const second = await madeAndClaimed();
    const before = await storedRevision();
    t.clock.advance(APPROVAL_RUN_LEASE_MS + 1000);
    expect(await t.services.approvals.recoverInterrupted()).toBe(1);
    // Its action, still running on the stopped instance, comes to its commit: refused, undone.
    await expect(runUpload(second)).rejects.toMatchObject({ code: 'approval-not-pending' });
    expect(await storedRevision()).toBe(before);
    expect((await t.services.approvals.get(second.requestId)).status).toBe('failed');
  });
});

describe('a configuration deletion waiting for approval', () => {
  it('wipes nothing while it waits; a rejection with a reason counts as denied and never runs', async () => {
    await ingest([businessEvent()]);
    const made = await t.call(maker.token, { method: 'DELETE', url: '/api/v1/configuration/bulk' });
    expect(made.statusCode, made.body).toBe(202);
    const request = made.json() as ApprovalRequest;
    expect(request.dryRun).toMatchObject({ wouldDelete: { ingestions: 1, records: 1 } });
    const sessions = await t.call(maker.token, { method: 'GET', url: '/api/v1/ingestions' });
    expect(sessions.json().totalSize).toBe(1);

    const blank = await act(approver, request.requestId, 'reject', ' ');
    expect(blank.statusCode).toBe(400);
    const rejected = await act(approver, request.requestId, 'reject', 'not announced');
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json()).toMatchObject({ status: 'rejected', reason: 'not announced' });
    expect(await metrics()).toEqual(expect.objectContaining({ awaitingApproval: 0, deniedApproval: 1 }));
    expect((await act(approver, request.requestId, 'approve')).statusCode).toBe(409);
  });

  it('is invalidated when the data it would wipe changed, even at the same revision', async () => {
    const request = (
      await t.call(maker.token, { method: 'DELETE', url: '/api/v1/configuration/bulk' })
    ).json() as ApprovalRequest;
    await ingest([businessEvent()]);
    const approved = await act(approver, request.requestId, 'approve');
    expect(approved.statusCode, approved.body).toBe(409);
    const sessions = await t.call(maker.token, { method: 'GET', url: '/api/v1/ingestions' });
    expect(sessions.json().totalSize).toBe(1);
  });

  it('its maker may cancel it, no one else; an approved deletion wipes', async () => {
    await ingest([businessEvent()]);
    const first = (
      await t.call(maker.token, { method: 'DELETE', url: '/api/v1/configuration/bulk' })
    ).json() as ApprovalRequest;
    expect((await act(approver, first.requestId, 'cancel')).statusCode).toBe(403);
    const canceled = await act(maker.token, first.requestId, 'cancel');
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(canceled.json().status).toBe('canceled');

    const second = (
      await t.call(maker.token, { method: 'DELETE', url: '/api/v1/configuration/bulk' })
    ).json() as ApprovalRequest;
    const approved = await act(approver, second.requestId, 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json().outcome).toMatchObject({ deleted: { ingestions: 1 } });
    const sessions = await t.call(maker.token, { method: 'GET', url: '/api/v1/ingestions' });
    expect(sessions.json().totalSize).toBe(0);

    const pending = await t.call(approver, {
      method: 'GET',
      url: '/api/v1/approval-requests?status=canceled',
    });
    expect(pending.json().data.map((r: ApprovalRequest) => r.requestId)).toEqual([first.requestId]);
  });
});

describe('a reversal waiting for approval', () => {
  const range = { accountingConfig: 'IFRS', from: '2026-11-01', to: '2026-11-30' };

  it('reverses nothing until approved; an idempotent repeat answers the same request', async () => {
    const ingestionId = await ingest([businessEvent({ effectiveDate: '2026-11-18' })]);
    const body = { selection: { ingestionId }, reason: 'wrong amount' };
    const dryRun = await t.call(maker.token, {
      method: 'POST',
      url: '/api/v1/reversals?dryRun=true',
      payload: body,
    });
    expect(dryRun.statusCode).toBe(200);
    const made = await t.call(maker.token, {
      method: 'POST',
      url: '/api/v1/reversals',
      payload: body,
      headers: { 'idempotency-key': 'k1' },
    });
    expect(made.statusCode, made.body).toBe(202);
    const request = made.json() as ApprovalRequest;
    const { dryRun: _flag, ...counts } = dryRun.json();
    expect(request.dryRun).toEqual(counts);
    const repeat = await t.call(maker.token, {
      method: 'POST',
      url: '/api/v1/reversals',
      payload: body,
      headers: { 'idempotency-key': 'k1' },
    });
    expect(repeat.statusCode).toBe(202);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.json().requestId).toBe(request.requestId);
    const reversals = await t.call(maker.token, { method: 'GET', url: '/api/v1/reversals' });
    expect(reversals.json().totalSize).toBe(0);

    const approved = await act(approver, request.requestId, 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    const outcome = approved.json().outcome as { reversalId: string; journals: number };
    expect(outcome.journals).toBe(counts.journals);
    const journals = await t.call(maker.token, {
      method: 'GET',
      url: `/api/v1/journals?reversalId=${outcome.reversalId}`,
    });
    expect(journals.json().totalSize).toBe(counts.journals);
  });

  it('a reversal of journals reversed already is refused at once: there is nothing to approve', async () => {
    const ingestionId = await ingest([businessEvent({ effectiveDate: '2026-11-18' })]);
    const body = { selection: { ingestionId }, reason: 'wrong amount' };
    const made = await t.call(maker.token, { method: 'POST', url: '/api/v1/reversals', payload: body });
    expect(made.statusCode, made.body).toBe(202);
    const approved = await act(approver, (made.json() as ApprovalRequest).requestId, 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    const again = await t.call(maker.token, { method: 'POST', url: '/api/v1/reversals', payload: body });
    expect(again.statusCode, again.body).toBe(422);
    expect(again.json().type).toBe('urn:ledgerflow:problem:nothing-to-reverse');
    expect((await metrics()).awaitingApproval).toBe(0);
  });

  it('is invalidated by new journals that change its dry-run counts', async () => {
    await ingest([businessEvent({ effectiveDate: '2026-11-18' })]);
    const made = await t.call(maker.token, {
      method: 'POST',
      url: '/api/v1/reversals',
      payload: { selection: range, reason: 'month wrong' },
    });
    expect(made.statusCode, made.body).toBe(202);
    await ingest([businessEvent({ effectiveDate: '2026-11-19' })]);
    const approved = await act(approver, made.json().requestId, 'approve');
    expect(approved.statusCode, approved.body).toBe(409);
    expect(approved.json().type).toBe('urn:ledgerflow:problem:approval-invalidated');
    const reversals = await t.call(maker.token, { method: 'GET', url: '/api/v1/reversals' });
    expect(reversals.json().totalSize).toBe(0);
  });

  it('two approvals at once run it once', async () => {
    await ingest([businessEvent({ effectiveDate: '2026-11-18' })]);
    const made = await t.call(maker.token, {
      method: 'POST',
      url: '/api/v1/reversals',
      payload: { selection: range, reason: 'month wrong' },
    });
    const second = (await userToken(['admin'])).token;
    const answers = await Promise.all([
      act(approver, made.json().requestId, 'approve'),
      act(second, made.json().requestId, 'approve'),
    ]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409]);
    const reversals = await t.call(maker.token, { method: 'GET', url: '/api/v1/reversals' });
    expect(reversals.json().totalSize).toBe(1);
  });
});

describe('a period reopening waiting for approval', () => {
  /** September of the Amsterdam node, closed by the calendar on 2026-11-20. */
  const SEPTEMBER = {
    accountingConfig: 'LOCAL_GAAP',
    node: { legalEntity: 'LF_NL', branch: 'AMS' },
    firstDay: '2026-09-01',
  };

  async function september(token: string): Promise<{ state: string; basis: string; reason: string | null }> {
    const answer = await t.call(token, {
      method: 'GET',
      url: `/api/v1/periods?accountingConfig=LOCAL_GAAP&from=2026-09-01&to=2026-09-30&node=${encodeURIComponent(JSON.stringify(SEPTEMBER.node))}`,
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const [period] = answer.json().periods;
    return period;
  }

  function periodAction(token: string, action: 'reopen' | 'lock', body: Record<string, unknown>) {
    return t.call(token, { method: 'POST', url: `/api/v1/periods/${action}`, payload: body });
  }

  it('opens nothing until another user approves it; the maker cannot approve it', async () => {
    const controller = await userToken(['admin']);
    const made = await periodAction(controller.token, 'reopen', { ...SEPTEMBER, reason: 'late invoice' });
    expect(made.statusCode, made.body).toBe(202);
    const request = made.json() as ApprovalRequest;
    expect(request).toMatchObject({
      kind: 'period.reopen',
      status: 'pending-approval',
      makerEmail: controller.email,
      dryRun: { state: 'closed', basis: 'calendar', actedAt: null },
      summary: { firstDay: '2026-09-01', lastDay: '2026-09-30', reason: 'late invoice' },
    });
    expect(await september(approver)).toMatchObject({ state: 'closed', basis: 'calendar' });
    expect((await metrics()).awaitingApproval).toBe(1);

    const own = await act(controller.token, request.requestId, 'approve');
    expect(own.statusCode, own.body).toBe(403);
    const approved = await act(approver, request.requestId, 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({
      status: 'approved',
      outcome: { state: 'open', basis: 'reopened' },
    });
    expect(await september(approver)).toMatchObject({
      state: 'open',
      basis: 'reopened',
      reason: 'late invoice',
    });
    expect((await metrics()).awaitingApproval).toBe(0);
  });

  it('a period open already is refused at once, and no request is made', async () => {
    const controller = await userToken(['admin']);
    const open = await periodAction(controller.token, 'reopen', {
      ...SEPTEMBER,
      firstDay: '2026-11-01',
      reason: 'open already',
    });
    expect(open.statusCode, open.body).toBe(409);
    expect(open.json().type).toBe('urn:ledgerflow:problem:period-state-conflict');
    expect((await metrics()).awaitingApproval).toBe(0);
  });

  it('answers a dry run at once, as the reopening would, with no request made and nothing changed', async () => {
    const controller = await userToken(['admin']);
    const dry = await t.call(controller.token, {
      method: 'POST',
      url: '/api/v1/periods/reopen?dryRun=true',
      payload: { ...SEPTEMBER, reason: 'late invoice' },
    });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json()).toMatchObject({
      period: { state: 'open', basis: 'reopened', reason: 'late invoice' },
    });
    expect(await september(approver)).toMatchObject({ state: 'closed', basis: 'calendar' });
    expect((await metrics()).awaitingApproval).toBe(0);
  });

  it('is invalidated by a lock in between: the period stays locked', async () => {
    const controller = await userToken(['admin']);
    const made = await periodAction(controller.token, 'reopen', { ...SEPTEMBER, reason: 'late invoice' });
    expect(made.statusCode, made.body).toBe(202);
    const locked = await periodAction(approver, 'lock', SEPTEMBER);
    expect(locked.statusCode, locked.body).toBe(200);
    const { requestId } = made.json() as ApprovalRequest;
    const approved = await act(approver, requestId, 'approve');
    expect(approved.statusCode, approved.body).toBe(409);
    expect(approved.json().type).toBe('urn:ledgerflow:problem:approval-invalidated');
    const after = (
      await t.call(approver, { method: 'GET', url: `/api/v1/approval-requests/${requestId}` })
    ).json();
    expect(after).toMatchObject({
      status: 'invalid',
      outcome: null,
      problem: { code: 'approval-invalidated' },
    });
    expect(after.problem.detail).toContain('locked');
    expect(await september(approver)).toMatchObject({ state: 'locked', basis: 'locked-by-hand' });
  });
});

describe('an Idempotency-Key repeated with another body while approval is on', () => {
  /** Sends `first`, then `second` under the same key: the second is refused, the first replayed. */
  async function reusedKey(
    token: string,
    request: (payload: Record<string, unknown>, key: string) => Promise<{ statusCode: number; body: string }>,
    first: Record<string, unknown>,
    second: Record<string, unknown>,
  ): Promise<void> {
    const made = await request(first, 'same-key');
    expect(made.statusCode, made.body).toBe(202);
    const other = await request(second, 'same-key');
    expect(other.statusCode, other.body).toBe(422);
    expect(JSON.parse(other.body).type).toBe('urn:ledgerflow:problem:idempotency-key-reused');
    const again = await request(first, 'same-key');
    expect(again.statusCode, again.body).toBe(202);
    expect(JSON.parse(again.body).requestId).toBe(JSON.parse(made.body).requestId);
    const pending = await t.call(token, {
      method: 'GET',
      url: '/api/v1/approval-requests?status=pending-approval',
    });
    expect(pending.json().data).toHaveLength(1);
  }

  it('a reversal: 422 idempotency-key-reused, as without approval', async () => {
    const ingestionId = await ingest([businessEvent({ effectiveDate: '2026-11-18' })]);
    await reusedKey(
      approver,
      (payload, key) =>
        t.call(maker.token, {
          method: 'POST',
          url: '/api/v1/reversals',
          payload,
          headers: { 'idempotency-key': key },
        }),
      { selection: { ingestionId }, reason: 'wrong amount' },
      { selection: { ingestionId }, reason: 'another reason' },
    );
  });

  it('a period reopening: 422 idempotency-key-reused', async () => {
    const controller = await userToken(['admin']);
    const september = {
      accountingConfig: 'LOCAL_GAAP',
      node: { legalEntity: 'LF_NL', branch: 'AMS' },
      firstDay: '2026-09-01',
    };
    await reusedKey(
      approver,
      (payload, key) =>
        t.call(controller.token, {
          method: 'POST',
          url: '/api/v1/periods/reopen',
          payload,
          headers: { 'idempotency-key': key },
        }),
      { ...september, reason: 'late invoice' },
      { ...september, firstDay: '2026-08-01', reason: 'late invoice' },
    );
  });
});

describe('approval off (the default)', () => {
  it('runs every action at once, as before', async () => {
    const plain = await createTestApp({}, { clock: new ManualClock(NOW) });
    try {
      const token = await plain.tokenFor(['bulk-operator']);
      const put = await plain.call(token, {
        method: 'PUT',
        url: '/api/v1/configuration/bulk',
        payload: realisticConfiguration(),
      });
      expect(put.statusCode).toBe(200);
      const wipe = await plain.call(token, { method: 'DELETE', url: '/api/v1/configuration/bulk' });
      expect(wipe.statusCode).toBe(204);
    } finally {
      await plain.close();
    }
  });
});

describe.runIf(TEST_DIALECT === 'postgres')('two instances on one PostgreSQL', () => {
  let second: Store;
  let services: Services;
  let app: FastifyInstance;

  beforeEach(async () => {
    second = openStore(t.url);
    services = createServices(second, t.clock, {
      accessTokenTtlSeconds: 300,
      refreshTokenTtlSeconds: 1800,
      businessDate: undefined,
      approvalRequired: [...ALL_KINDS],
    });
    app = await buildApp({ store: second, services, logger: false });
    await app.ready();
  });
  afterEach(async () => {
    await app.close();
    await second.close();
  });

  it('approving one request through both at once runs it once', async () => {
    await ingest([businessEvent({ effectiveDate: '2026-11-18' })]);
    const made = await t.call(maker.token, {
      method: 'POST',
      url: '/api/v1/reversals',
      payload: {
        selection: { accountingConfig: 'IFRS', from: '2026-11-01', to: '2026-11-30' },
        reason: 'both at once',
      },
    });
    const requestId = made.json().requestId as string;
    const other = (await userToken(['admin'])).token;
    const answers = await Promise.all([
      act(approver, requestId, 'approve'),
      app.inject({
        method: 'POST',
        url: `/api/v1/approval-requests/${requestId}/approve`,
        headers: { authorization: `Bearer ${other}` },
      }),
    ]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409]);
    const reversals = await t.call(maker.token, { method: 'GET', url: '/api/v1/reversals' });
    expect(reversals.json().totalSize).toBe(1);
  });
});
