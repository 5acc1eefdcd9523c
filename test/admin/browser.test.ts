import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AUTH_FAILURE_WINDOW_MS,
  AUTH_FAILURES_PER_ADDRESS_MAX,
} from '../../src/modules/auth/failure-limiter.js';
import { SIGN_IN_FIELD_LENGTH_MAX } from '../../src/modules/auth/sign-ins.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent, loanRecord } from '../helpers/records.js';
import { addLookupKeepingData, failForMissingLookup } from '../helpers/reprocessing.js';
import {
  CHROMIUM_AVAILABLE,
  CHROMIUM_PATH,
  CHROMIUM_REQUIRED,
  launchChromium,
  screenshot,
} from './browser.js';
import { PASSWORD, userWith } from './helpers.js';

describe('browser tests can run', () => {
  it.runIf(CHROMIUM_REQUIRED)('finds Chromium on CI', () => {
    expect(
      CHROMIUM_AVAILABLE,
      `no Chromium at ${CHROMIUM_PATH}; .ci/run installs the Debian package chromium`,
    ).toBe(true);
  });
});

/** A new browser context (own cookies) signed in as this user; fails the test on a CSP violation. */
async function signInAs(
  browser: Browser,
  base: string,
  email: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' && message.text().includes('Content Security Policy')) {
      throw new Error(`browser console error: ${message.text()}`);
    }
  });
  await page.goto(`${base}/`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/admin/login'));
  return { context, page };
}

describe.skipIf(!CHROMIUM_AVAILABLE)('administration interface in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let adminEmail: string;

  beforeAll(async () => {
    t = await createTestApp({ authFailureWait: async () => {} });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    adminEmail = await userWith(t, ['admin']);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const signedIn = (email: string) => signInAs(browser, base, email);

  it('signs in with the right password only, and limits failures', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await screenshot(page, 'sign-in');
    await page.getByLabel('E-mail').fill(adminEmail);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('The e-mail or password is wrong');

    // Failed sign-ins slow the next ones down, but the right password still signs in.
    const limitedEmail = await userWith(t, ['viewer']);
    for (let i = 0; i < 11; i += 1) {
      await page.getByLabel('E-mail').fill(limitedEmail);
      await page.getByLabel('Password').fill(i < 10 ? `wrong ${i}` : PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      if (i < 10) await page.getByRole('alert').waitFor();
    }
    await page.waitForURL((url) => !url.pathname.startsWith('/admin/login'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();

    // A flood of failures from one address is refused with a message that says to wait.
    const tooLong = 'x'.repeat(SIGN_IN_FIELD_LENGTH_MAX + 1);
    for (let i = 0; i < AUTH_FAILURES_PER_ADDRESS_MAX; i += 1) {
      await t.services.signIns.signIn(`flood${i}@example.test`, tooLong, '127.0.0.1');
    }
    await page.goto(`${base}/admin/login`);
    await page.getByLabel('E-mail').fill(limitedEmail);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Too many failed sign-ins');
    t.clock.advance(AUTH_FAILURE_WINDOW_MS + 1);

    await page.getByLabel('E-mail').fill(adminEmail);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/admin/dashboard`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    await page.goto(`${base}/admin/users`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await context.close();
  });

  it('creates a credential (owner, name, lifetime, confirm), shows the secret once, and revokes it', async () => {
    const owner = await userWith(t, ['api-client']);
    const { context, page } = await signedIn(adminEmail);
    await page.goto(`${base}/admin/credentials`);
    await page.getByLabel('Owner').selectOption(owner);
    await page.getByLabel('Description').fill('nightly-import');
    await page.getByLabel('Lifetime (days)').fill('30');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Create this credential?').waitFor();
    await page.getByRole('button', { name: 'Confirm and create' }).click();
    const secret = (await page.locator('#client-secret').textContent())?.trim() ?? '';
    const clientId = (await page.locator('#client-id').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^lfs_/);
    await expect(page.getByText('cannot be shown again').count()).resolves.toBe(1);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('Copied.').waitFor();
    await screenshot(page, 'credential-created');

    const token = await fetch(`${base}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: secret,
      }),
    });
    expect(token.status).toBe(200);
    const accessToken = ((await token.json()) as { access_token: string }).access_token;
    const before = await fetch(`${base}/api/v1/ingestions`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(before.status).toBe(200);

    // A reload shows the secret no more and creates no second credential.
    expect(new URL(page.url()).pathname).toBe(`/admin/credentials/${clientId}/created`);
    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(410);
    await page.getByRole('heading', { name: 'The secret was shown once' }).waitFor();
    expect(await page.content()).not.toContain(secret);
    const ofOwner = (await t.services.access.listCredentials(0, 1000)).rows.filter(
      (c) => c.ownerEmail === owner,
    );
    expect(ofOwner).toHaveLength(1);

    await page.getByRole('link', { name: 'Back to the credentials' }).click();
    const row = page.locator('tr', { hasText: clientId });
    await expect(row.textContent()).resolves.toContain('nightly-import');
    expect(await page.content()).not.toContain(secret);
    await screenshot(page, 'credentials');
    await row.getByRole('link', { name: 'Revoke…' }).click();
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('is revoked').waitFor();
    const after = await fetch(`${base}/api/v1/ingestions`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(after.status).toBe(401);
    await context.close();
  });

  it('keeps a viewer out of the admin pages, even when they are typed in', async () => {
    const viewer = await userWith(t, ['viewer']);
    const { context, page } = await signedIn(viewer);
    await expect(page.getByRole('link', { name: 'API credentials' }).count()).resolves.toBe(0);
    await expect(page.getByRole('link', { name: 'Users' }).count()).resolves.toBe(0);
    for (const path of ['/admin/credentials', '/admin/users']) {
      const response = await page.goto(`${base}${path}`);
      expect(response?.status()).toBe(403);
      await page.getByText('This needs the permission').waitFor();
    }
    await context.close();
  });

  it('manages users and roles with the keyboard', async () => {
    const { context, page } = await signedIn(adminEmail);
    await page.goto(`${base}/admin/users`);
    await page.getByLabel('E-mail').focus();
    await page.keyboard.type('ops@example.test');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Operations');
    await page.getByRole('checkbox', { name: 'bulk-operator' }).check();
    await page.getByRole('button', { name: 'Create user' }).press('Enter');
    await page.getByText('Saved ops@example.test').waitFor();
    await screenshot(page, 'users');
    const user = await t.services.access.findUser('ops@example.test');
    expect(user?.roles).toEqual(['bulk-operator']);
    await context.close();
  });
});

describe.skipIf(!CHROMIUM_AVAILABLE)('administration interface in Chromium: data pages', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let adminEmail: string;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    adminEmail = await userWith(t, ['admin']);
    token = await t.tokenFor(['api-client']);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function ingest(namespace: string, entity: string, data: unknown[], query = ''): Promise<string> {
    const opened = await t.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace, entity, ingestionName: `${entity} upload` },
    });
    expect(opened.statusCode, opened.body).toBe(201);
    const id = opened.json().ingestionId as string;
    const chunk = await t.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${id}${query}`,
      payload: { data },
    });
    expect(chunk.statusCode, chunk.body).toBe(201);
    return id;
  }

  it('lists every validation error of an upload by path, then uploads after the dry run and a confirmation', async () => {
    const { context, page } = await signInAs(browser, base, adminEmail);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Configuration' }).click();
    const broken = realisticConfiguration() as { configuration: Record<string, unknown> };
    broken.configuration.bogusSection = [];
    await page.getByLabel('Document (JSON)').fill(JSON.stringify(broken));
    await page.getByRole('button', { name: 'Check' }).click();
    await expect(page.locator('#configuration-errors').textContent()).resolves.toContain(
      '/configuration/bogusSection',
    );
    await screenshot(page, 'configuration-errors');

    await page.getByLabel('Document (JSON)').fill(JSON.stringify(realisticConfiguration()));
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByText('The document is valid').waitFor();
    await page.getByText('No processing data exists, so nothing is deleted.').waitFor();
    await page.getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Upload and replace' }).click();
    await page.getByText('The configuration is replaced.').waitFor();
    await page.getByRole('link', { name: 'See the audit log' }).click();
    await expect(page.locator('#audit').textContent()).resolves.toContain('configuration.upload');
    await screenshot(page, 'audit-log');
    await context.close();
  });

  it("shows an ingestion's failed records, a journal's lines, balances and the dashboard's charts", async () => {
    const loans = await ingest(
      'loans',
      'loanTransaction',
      [loanRecord(1), loanRecord(2, { amount: '12,5' })],
      '?partial=true',
    );
    await ingest('ledger', 'businessEvent', [
      businessEvent({ amount: '100.00' }),
      businessEvent({ eventType: 'NOT_CONFIGURED' }),
    ]);
    await t.services.processor.drain();
    const { context, page } = await signInAs(browser, base, adminEmail);
    await screenshot(page, 'dashboard');
    for (const id of ['chart-rows', 'chart-journals', 'chart-posting', 'chart-errors', 'chart-processing']) {
      await page.locator(`#${id}[data-rendered="true"]`).waitFor();
    }

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Ingestions' }).click();
    await page.getByRole('link', { name: 'loanTransaction upload' }).click();
    expect(page.url()).toContain(loans);
    await expect(page.locator('#failed-records').textContent()).resolves.toContain('amount');
    await expect(page.locator('#chunks tbody tr').count()).resolves.toBe(1);
    await screenshot(page, 'ingestion');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Journals' }).click();
    await screenshot(page, 'journals');
    await page.locator('#journals tbody a').first().click();
    const lines = page.locator('#journal-lines tbody tr');
    expect(await lines.count()).toBeGreaterThanOrEqual(2);
    await screenshot(page, 'journal');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Balances' }).click();
    await page.getByLabel('As of').fill('2026-11-20');
    await page.getByRole('button', { name: 'Show' }).click();
    expect(await page.locator('#balances tbody tr').count()).toBeGreaterThan(0);

    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Processing errors' })
      .click();
    await expect(page.locator('#processing-errors').textContent()).resolves.toContain('NOT_CONFIGURED');
    await context.close();
  });

  it('uploads keeping the processing data after its dry run, then shows the revision and its changes', async () => {
    const { context, page } = await signInAs(browser, base, adminEmail);
    await page.goto(`${base}/admin/configuration`);
    const changed = realisticConfiguration();
    (changed.configuration.entities[0]?.attributes ?? []).push({ name: 'note', type: { typeName: 'TEXT' } });
    await page.getByLabel('Document (JSON)').fill(JSON.stringify(changed));
    await page.getByLabel(/Keep it/).check();
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByText('keeps the processing data: nothing is deleted').waitFor();
    await page.getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Upload and keep the data' }).click();
    await page.getByText('the processing data was kept').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Revisions' }).click();
    await page.locator('#revisions a').first().click();
    await expect(page.locator('#revision-changes').textContent()).resolves.toContain(
      '/entities/0/attributes/',
    );
    await screenshot(page, 'configuration-revision-changes');
    await context.close();
  });

  it('names what a wipe would delete and wipes only after an explicit confirmation', async () => {
    const { context, page } = await signInAs(browser, base, adminEmail);
    await page.goto(`${base}/admin/configuration`);
    await page.getByRole('link', { name: 'Wipe the configuration…' }).click();
    const warning = (await page.locator('.notice.warning').textContent()) ?? '';
    expect(warning).toMatch(/[1-9]\d* ingestion sessions/);
    await screenshot(page, 'configuration-wipe');
    await page.getByRole('button', { name: 'Wipe' }).click();
    expect(new URL(page.url()).pathname).toBe('/admin/configuration/wipe');
    expect((await t.services.configuration.wipeDryRun()).wouldDelete.ingestions).toBeGreaterThan(0);
    await page.getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Wipe' }).click();
    await page.getByText('The configuration is empty.').waitFor();
    expect((await t.services.configuration.wipeDryRun()).wouldDelete.ingestions).toBe(0);
    await context.close();
  });

  it('reprocesses failed records after showing the dry run, and shows the run', async () => {
    const token = await t.tokenFor(['bulk-operator']);
    const ingestionId = await failForMissingLookup(t, token, 3);
    await addLookupKeepingData(t, token);
    const { context, page } = await signInAs(browser, base, adminEmail);
    await page.goto(`${base}/admin/processing-errors?ingestionId=${ingestionId}`);
    await page.locator('#reprocess').click();
    await screenshot(page, 'reprocess-dry-run');
    await page.getByRole('button', { name: 'Reprocess 3 records' }).waitFor();
    await page.getByRole('button', { name: 'Reprocess 3 records' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/admin/reprocessing/'));
    await t.services.processor.drain();
    await page.reload();
    await expect(page.locator('main').textContent()).resolves.toContain('finished');
    await screenshot(page, 'reprocessing-run');
    expect((await t.services.journals.processingErrors({ ingestionId }, 0, 10)).total).toBe(0);
    await context.close();
  });

  it('reverses a journal after showing the dry run and asking for the reason, and links both ways', async () => {
    const token = await t.tokenFor(['bulk-operator']);
    await addLookupKeepingData(t, token);
    const ingestionId = await ingestClosedSession(t, token, 'businessEvent', [
      businessEvent({ amount: '77.70' }),
    ]);
    await t.services.processor.drain();
    const [journal] = (await t.services.journals.list({ ingestionId }, 0, 1)).rows;
    const journalId = journal?.journalId ?? '';
    const { context, page } = await signInAs(browser, base, adminEmail);
    await page.goto(`${base}/admin/journals/${journalId}`);
    await page.locator('#reverse').click();
    await page.getByRole('button', { name: /^Reverse \d+ journals?$/ }).waitFor();
    await screenshot(page, 'reverse-journal-dry-run');
    await page.getByLabel(/^Reason/).fill('amount keyed wrongly upstream');
    await page.getByRole('button', { name: /^Reverse \d+ journals?$/ }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/admin/reversals/'));
    await expect(page.locator('main').textContent()).resolves.toContain('amount keyed wrongly upstream');
    await screenshot(page, 'reversal');
    const withdrawnBy = (await t.services.journals.get(journalId)).withdrawnBy ?? '';
    await page.locator(`a[href="/admin/journals/${withdrawnBy}"]`).first().click();
    await expect(page.locator('main').textContent()).resolves.toContain(journalId);
    await context.close();
  });
});
