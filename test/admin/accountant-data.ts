import { expect } from 'vitest';
import { signedInClientIdOf } from '../../src/modules/audit/entry.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { userWith } from './helpers.js';

/** The Amsterdam node of the realistic configuration. */
export const AMSTERDAM = { legalEntity: 'LF_NL', branch: 'AMS' } as const;

/** What {@link accountantApp} made, by name, for the tests to look for. */
export interface AccountantData {
  t: TestApp;
  /** An administrator who made the requests that wait, and the reversal. */
  makerEmail: string;
  /** Another administrator, who approved the reversal and decides the requests that wait. */
  approverEmail: string;
  /** The journals of the ingested session, in the list's order. */
  journalIds: string[];
  /** The journal reversed (by an approved request) and its reversal journal. */
  reversedId: string;
  reversalJournalId: string;
  reversalId: string;
  /** Requests that wait: an upload that changes one label, a reversal, a reopening of October. */
  uploadRequestId: string;
  reversalRequestId: string;
  reopenRequestId: string;
  /** A credential with a description, and one without (its name is its client id). */
  namedClientId: string;
  unnamedClientId: string;
  /** The owner of both credentials. */
  ownerEmail: string;
}

const caller = (email: string) => ({ email, clientId: signedInClientIdOf(email) });

/**
 * An instance as an accountant meets it after a few days of work, with every kind of action
 * waiting for approval: journals, one of them reversed by an approved request, October locked
 * for the Amsterdam node in LOCAL_GAAP with a reopening waiting, an upload and a reversal
 * waiting, credentials with and without a description, and the audit entries of all of it
 * (changes made from pages, through the API with a credential, and by the service itself).
 */
export async function accountantApp(): Promise<AccountantData> {
  const t = await createTestApp(
    {
      authFailureWait: async () => {},
      approvalRequired: ['configuration.upload', 'reversal', 'period.reopen'],
    },
    { clock: testClock() },
  );
  await t.services.configuration.upload(realisticConfiguration(), { user: 'setup@example.test' });
  const token = await t.tokenFor(['bulk-operator']);
  const ingestionId = await ingestClosedSession(t, token, 'businessEvent', [
    businessEvent({ effectiveDate: '2026-11-18', amount: '1250.00' }),
    businessEvent({ effectiveDate: '2026-11-19', amount: '980.40' }),
  ]);
  await t.services.processor.drain();
  const journalIds = (await t.services.journals.list({ ingestionId }, 0, 100)).rows.map((j) => j.journalId);
  const [reversedId = '', waitingId = ''] = journalIds;

  const makerEmail = await userWith(t, ['admin']);
  const approverEmail = await userWith(t, ['admin']);
  const { approvals } = t.services;

  const reversal = await approvals.request(
    'reversal',
    { selection: { journalIds: [reversedId] }, reason: 'booked twice upstream' },
    caller(makerEmail),
    undefined,
  );
  const { answer: approved } = await approvals.approve(reversal.request.requestId, caller(approverEmail));
  const reversalId = String(approved.outcome?.reversalId ?? '');
  const reversalJournalId = (await t.services.journals.get(reversedId)).withdrawnBy ?? '';
  expect(reversalJournalId).not.toBe('');

  const waitingReversal = await approvals.request(
    'reversal',
    {
      selection: { journalIds: [waitingId] },
      reason: 'the customer cancelled the loan',
      postingDate: '2026-11-20',
    },
    caller(makerEmail),
    undefined,
  );

  const october = { accountingConfig: 'LOCAL_GAAP', node: { ...AMSTERDAM }, firstDay: '2026-10-01' };
  await t.services.periods.act('lock', october, undefined, {
    actor: { user: makerEmail, clientId: signedInClientIdOf(makerEmail) },
  });
  const reopen = await approvals.request(
    'period.reopen',
    { ...october, reason: 'late supplier invoice for October' },
    caller(makerEmail),
    undefined,
  );

  const changed = realisticConfiguration();
  const entity = changed.configuration.entities[0] as { attributes: { label?: string }[] };
  const attribute = entity.attributes[0];
  if (attribute !== undefined) attribute.label = 'Loan identifier';
  const upload = await approvals.request(
    'configuration.upload',
    { document: JSON.stringify(changed), keepProcessingData: true },
    caller(makerEmail),
    undefined,
  );

  // Credentials: one made through the API by a credential (its audit entry names the client
  // id), one without a description made from the pages, and the bootstrap one (the service).
  const ownerEmail = await userWith(t, ['api-client']);
  const adminToken = await t.tokenFor(['admin']);
  const named = await t.call(adminToken, {
    method: 'POST',
    url: '/api/v1/credentials',
    payload: { ownerEmail, name: 'Nightly loan import' },
  });
  expect(named.statusCode, named.body).toBe(201);
  const { answer: unnamed } = await t.services.access.createCredential(
    { ownerEmail },
    { actor: { user: makerEmail } },
  );
  await t.services.access.ensureCredential('ci-bootstrap', 'a-bootstrap-secret-of-32-characters', ownerEmail);

  return {
    t,
    makerEmail,
    approverEmail,
    journalIds,
    reversedId,
    reversalJournalId,
    reversalId,
    uploadRequestId: upload.request.requestId,
    reversalRequestId: waitingReversal.request.requestId,
    reopenRequestId: reopen.request.requestId,
    namedClientId: String(named.json().clientId),
    unnamedClientId: unnamed.clientId,
    ownerEmail,
  };
}
