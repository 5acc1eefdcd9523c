import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/modules/audit/entry.js';
import { SIGN_IN_FAILURE_WINDOW_MS, SIGN_IN_UNKNOWN_SUBJECT } from '../../src/modules/auth/sign-ins.js';
import { PASSWORD, signIn, userWith } from '../admin/helpers.js';
import { createTestApp, form, type TestApp } from '../helpers/app.js';
import { insertOpenSession } from '../helpers/store.js';

/** Every audit entry, oldest first, as the export streams them. */
async function exported(t: TestApp, token: string): Promise<AuditEntry[]> {
  const response = await t.call(token, { method: 'GET', url: '/api/v1/audit-log/export' });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toContain('application/jsonl');
  return response.body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditEntry);
}

/** The entries written after position `after`, read from the store (the clock may have moved past a token). */
async function since(t: TestApp, after: number): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  for await (const entry of t.services.audit.entries(after)) entries.push(entry);
  return entries;
}

/**
 * Every audited change writes its entry, naming who (user and credential), what, before and
 * after, in the transaction of the change; the token endpoint writes none; no entry ever holds a
 * secret. Runs on the dialect of TEST_DATABASE_URL.
 */
describe('the audit trail of every change', () => {
  let t: TestApp;
  let admin: { clientId: string; clientSecret: string; ownerEmail: string };
  let token: string;
  /** Every secret the tests handle: none may appear in any audit entry. */
  const secrets: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.credentialFor(['admin']);
    secrets.push(admin.clientSecret);
    const answer = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      ...form({
        grant_type: 'client_credentials',
        client_id: admin.clientId,
        client_secret: admin.clientSecret,
      }),
    });
    token = (answer.json() as { access_token: string }).access_token;
    secrets.push(token);
  });
  afterAll(async () => {
    await t.close();
  });

  const head = async () => (await t.services.audit.head()).seq;

  it('audits users created and changed through the API, naming the owner and the credential', async () => {
    const start = await head();
    const created = await t.call(token, {
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'audited@example.test', roles: ['viewer'], password: 'a long enough password 1' },
    });
    expect(created.statusCode).toBe(201);
    secrets.push('a long enough password 1');
    const changed = await t.call(token, {
      method: 'PATCH',
      url: '/api/v1/users/audited@example.test',
      payload: { roles: ['api-client'], disabled: true },
    });
    expect(changed.statusCode).toBe(200);
    const entries = await since(t, start);
    expect(entries.map((e) => e.action)).toEqual(['users.create', 'users.update']);
    for (const entry of entries) {
      expect(entry).toMatchObject({ actor: admin.ownerEmail, clientId: admin.clientId });
    }
    expect(entries[0]).toMatchObject({
      before: null,
      after: { email: 'audited@example.test', roles: ['viewer'], disabled: false },
    });
    expect(entries[1]).toMatchObject({
      before: { roles: ['viewer'], disabled: false },
      after: { roles: ['api-client'], disabled: true },
    });
  });

  it('audits credentials created and revoked, never their secret', async () => {
    const start = await head();
    const created = await t.call(token, {
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { ownerEmail: admin.ownerEmail, name: 'audited' },
    });
    expect(created.statusCode).toBe(201);
    const credential = created.json() as { clientId: string; clientSecret: string };
    secrets.push(credential.clientSecret);
    const revoked = await t.call(token, {
      method: 'DELETE',
      url: `/api/v1/credentials/${credential.clientId}`,
    });
    expect(revoked.statusCode).toBe(204);
    // Revoking again changes nothing, so it writes nothing.
    await t.call(token, { method: 'DELETE', url: `/api/v1/credentials/${credential.clientId}` });
    const entries = await since(t, start);
    expect(entries.map((e) => e.action)).toEqual(['credentials.create', 'credentials.revoke']);
    expect(entries[0]).toMatchObject({
      actor: admin.ownerEmail,
      clientId: admin.clientId,
      before: null,
      after: {
        clientId: credential.clientId,
        ownerEmail: admin.ownerEmail,
        name: 'audited',
        revokedAt: null,
      },
    });
    expect(entries[1]?.before).toMatchObject({ revokedAt: null });
    expect(entries[1]?.after?.revokedAt).toEqual(expect.any(String));
  });

  it('writes no entry for token requests', async () => {
    const start = await head();
    for (let i = 0; i < 3; i += 1) {
      const answer = await t.app.inject({
        method: 'POST',
        url: '/auth/token',
        ...form({
          grant_type: 'client_credentials',
          client_id: admin.clientId,
          client_secret: admin.clientSecret,
        }),
      });
      expect(answer.statusCode).toBe(200);
      const body = answer.json() as { access_token: string; refresh_token?: string };
      secrets.push(body.access_token, ...(body.refresh_token === undefined ? [] : [body.refresh_token]));
    }
    expect(await head()).toBe(start);
  });

  it('audits passwords set and generated from the administration interface, never the password', async () => {
    const adminEmail = await userWith(t, ['admin']);
    const target = await userWith(t, ['viewer']);
    const page = await signIn(t, adminEmail);
    const start = await head();
    const typed = await page.post(`/admin/users/${encodeURIComponent(target)}/password`, {
      password: 'a typed new password 42',
    });
    expect(typed.statusCode).toBe(303);
    secrets.push('a typed new password 42');
    const generated = await t.services.access.resetPassword(target, { user: adminEmail });
    secrets.push(generated);
    const entries = await since(t, start);
    expect(entries.map((e) => [e.action, e.actor, e.details?.generated])).toEqual([
      ['users.set-password', adminEmail, false],
      ['users.set-password', adminEmail, true],
    ]);
    expect(entries[0]?.details).toMatchObject({ email: target });
  });

  it('audits an ingestion session closed by hand', async () => {
    await insertOpenSession(t.store, 'in_0123456789abcdef0123456789abcdef', 'ledger', 'businessEvent');
    const start = await head();
    const closed = await t.call(token, {
      method: 'PATCH',
      url: '/api/v1/ingestions/in_0123456789abcdef0123456789abcdef',
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: { state: 'closed' },
    });
    expect(closed.statusCode).toBe(200);
    const entries = await since(t, start);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'ingestions.close',
      actor: admin.ownerEmail,
      clientId: admin.clientId,
      before: { state: 'pending' },
      after: { state: 'closed' },
      details: { ingestionId: 'in_0123456789abcdef0123456789abcdef' },
    });
  });

  it('audits configuration uploads and wipes with the revision before and after', async () => {
    const start = await head();
    const wiped = await t.call(token, { method: 'DELETE', url: '/api/v1/configuration/bulk' });
    expect(wiped.statusCode).toBe(204);
    const [entry] = await since(t, start);
    expect(entry).toMatchObject({
      action: 'configuration.delete',
      actor: admin.ownerEmail,
      clientId: admin.clientId,
      after: { revision: entry?.revision },
      deleted: { ingestions: expect.any(Number) },
    });
    expect(entry?.before).toEqual({ revision: (entry?.revision ?? 0) - 1 });
  });

  it('pages the list by cursor, exports every entry and verifies the chain', async () => {
    const total = await head();
    const first = await t.call(token, { method: 'GET', url: '/api/v1/audit-log?limit=2' });
    expect(first.statusCode).toBe(200);
    const page1 = first.json() as { data: AuditEntry[]; next: string | null; totalSize: number };
    expect(page1.totalSize).toBe(total);
    expect(page1.data.map((e) => e.seq)).toEqual([total, total - 1]);
    const second = await t.call(token, {
      method: 'GET',
      url: `/api/v1/audit-log?limit=2&after=${page1.next}`,
    });
    expect((second.json() as { data: AuditEntry[] }).data.map((e) => e.seq)).toEqual([total - 2, total - 3]);
    const bad = await t.call(token, { method: 'GET', url: '/api/v1/audit-log?after=bm90LWEtY3Vyc29y' });
    expect(bad.statusCode).toBe(400);
    expect((await exported(t, token)).map((e) => e.seq)).toEqual(
      Array.from({ length: total }, (_, i) => i + 1),
    );
    const partial = await t.call(token, {
      method: 'GET',
      url: `/api/v1/audit-log/export?afterSeq=${total - 1}`,
    });
    expect(partial.body.trim().split('\n')).toHaveLength(1);
    const verification = await t.call(token, { method: 'GET', url: '/api/v1/audit-log/verification' });
    expect(verification.json()).toMatchObject({ ok: true, entries: total, lastSeq: total });
  });

  it('shows who did what, before and after, and the chain status on the administration page', async () => {
    const page = await signIn(t, await userWith(t, ['admin']));
    const list = await page.get('/admin/audit');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('users.update');
    expect(list.body).toContain(`with the credential <code>${admin.clientId}</code>`);
    expect(list.body).toContain('Verify the chain');
    const verified = await page.get('/admin/audit?verify=1');
    expect(verified.body).toContain('The chain verifies');
  });

  it('audits sign-ins one by one, and failed ones as one count per user and hour', async () => {
    const email = await userWith(t, ['admin']);
    const start = await head();
    await signIn(t, email);
    const failed = async (address: string, password: string) =>
      t.app.inject({
        method: 'POST',
        url: '/admin/login',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ email: address, password }).toString(),
      });
    for (let i = 0; i < 3; i += 1) await failed(email, `wrong password ${i}`);
    // A password typed into the e-mail field must never reach the trail.
    await failed('my secret password', 'x');
    secrets.push('wrong password 0', 'my secret password', PASSWORD);
    const signedIn = await since(t, start);
    expect(signedIn.map((e) => e.action)).toEqual(['auth.sign-in']);
    expect(signedIn[0]).toMatchObject({ actor: email, clientId: null });
    // The hour's counts are written once it has ended, by the purge every instance runs.
    await t.services.signIns.purgeExpired();
    expect(await head()).toBe(start + 1);
    t.clock.advance(SIGN_IN_FAILURE_WINDOW_MS);
    await t.services.signIns.purgeExpired();
    const counted = (await since(t, start + 1)).filter((e) => e.action === 'auth.sign-in-failures');
    expect(counted.map((e) => e.details)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ email, failures: 3 }),
        expect.objectContaining({ email: SIGN_IN_UNKNOWN_SUBJECT, failures: 1 }),
      ]),
    );
    expect(counted).toHaveLength(2);
    await t.services.signIns.purgeExpired();
    expect((await since(t, start + 1)).filter((e) => e.action === 'auth.sign-in-failures')).toHaveLength(2);
  });

  it('holds no secret, password or token in any entry', async () => {
    const rows = await t.store.db.selectFrom('audit_log').selectAll().execute();
    const text = JSON.stringify(rows);
    expect(secrets.length).toBeGreaterThan(8);
    for (const secret of secrets) expect(text).not.toContain(secret);
    const hashes = await t.store.db.selectFrom('users').select('password_hash').execute();
    for (const { password_hash } of hashes)
      if (password_hash !== null) expect(text).not.toContain(password_hash);
    const secretHashes = await t.store.db.selectFrom('credentials').select('secret_hash').execute();
    for (const { secret_hash } of secretHashes) expect(text).not.toContain(secret_hash);
  });
});
