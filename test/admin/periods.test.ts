import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { CHROMIUM_AVAILABLE, launchChromium, screenshot } from './browser.js';
import { PASSWORD, type Signed, signIn, userWith } from './helpers.js';

/** Friday 2026-11-20: November is the current period of the Amsterdam node, October is closed. */
const NOW = '2026-11-20T10:00:00Z';
const NODE = JSON.stringify({ legalEntity: 'LF_NL', branch: 'AMS' });

async function appWithData(): Promise<TestApp> {
  const t = await createTestApp({ authFailureWait: async () => {} }, { clock: new ManualClock(NOW) });
  const token = await t.tokenFor(['bulk-operator']);
  const put = await t.call(token, {
    method: 'PUT',
    url: '/api/v1/configuration/bulk',
    payload: realisticConfiguration(),
  });
  expect(put.statusCode, put.body).toBe(200);
  await ingestClosedSession(t, token, 'businessEvent', [
    businessEvent({ effectiveDate: '2026-11-10', amount: '42.50' }),
  ]);
  await t.services.processor.drain();
  return t;
}

/** The Periods page (issue 27): the list, the confirmations, the refusals, the snapshots. */
describe('periods in the administration interface', () => {
  let t: TestApp;
  let admin: Signed;
  let viewer: Signed;
  beforeEach(async () => {
    t = await appWithData();
    admin = await signIn(t, await userWith(t, ['admin']));
    viewer = await signIn(t, await userWith(t, ['viewer']));
  });
  afterEach(async () => {
    await t.close();
  });

  const query = (firstDay: string) =>
    new URLSearchParams({ accountingConfig: 'LOCAL_GAAP', node: NODE, firstDay }).toString();

  it('lists the periods with their state, and offers the changes only to who may make them', async () => {
    const listed = await admin.get('/admin/periods?accountingConfig=LOCAL_GAAP');
    expect(listed.statusCode).toBe(200);
    expect(listed.body).toContain('<span class="state state-closed">Closed by the calendar</span>');
    expect(listed.body).toContain(
      `href="/admin/periods/close?${query('2026-11-01').replace(/&/g, '&amp;')}"`,
    );
    expect(listed.body).toContain(
      `href="/admin/periods/reopen?${query('2026-10-01').replace(/&/g, '&amp;')}"`,
    );
    const seen = await viewer.get('/admin/periods?accountingConfig=LOCAL_GAAP');
    expect(seen.statusCode).toBe(200);
    expect(seen.body).not.toContain('Close…');
    expect((await viewer.get(`/admin/periods/close?${query('2026-11-01')}`)).statusCode).toBe(403);
  });

  it('closes after the confirmation, refuses a reopening without a reason, and shows the snapshot', async () => {
    const confirm = await admin.get(`/admin/periods/close?${query('2026-11-01')}`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Close the period</button>');
    const fields = { accountingConfig: 'LOCAL_GAAP', node: NODE, firstDay: '2026-11-01' };
    const done = await admin.post('/admin/periods/close', fields);
    expect(done.statusCode, done.body).toBe(303);
    const after = await admin.get(String(done.headers.location));
    expect(after.body).toContain('November 2026 of Legal entity LF_NL · Branch AMS is closed now; snapshot');
    expect(after.body).toContain('<span class="state state-closed">Closed</span> by');

    const noReason = await admin.post('/admin/periods/reopen', { ...fields, reason: ' ' });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.body).toContain('A reason is needed');
    // The form again, the refusal beside the reason.
    expect(noReason.body).toContain('aria-describedby="reason-refusal"');
    const again = await admin.post('/admin/periods/close', fields);
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('closed already');

    const snapshots = await admin.get(`/admin/periods/snapshots?${query('2026-11-01')}`);
    const id = /href="\/admin\/periods\/snapshots\/([0-9a-f-]{36})"/.exec(snapshots.body)?.[1] ?? '';
    expect(id).not.toBe('');
    const one = await viewer.get(`/admin/periods/snapshots/${id}`);
    expect(one.statusCode).toBe(200);
    expect(one.body).toMatch(/<dt>SHA-256<\/dt><dd class="id">[0-9a-f]{64}<\/dd>/);
  });

  it('shows why a close is refused while work is pending', async () => {
    const token = await t.tokenFor(['bulk-operator']);
    await ingestClosedSession(t, token, 'businessEvent', [businessEvent({ effectiveDate: '2026-11-25' })]);
    await t.services.processor.drain();
    const refused = await admin.post('/admin/periods/close', {
      accountingConfig: 'LOCAL_GAAP',
      node: NODE,
      firstDay: '2026-11-01',
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('0 records wait for processing and 1 journals dated in it are unposted');
  });
});

describe('a reopening from the Periods page when reopenings wait for approval', () => {
  it('makes a request instead, which another administrator approves from the queue', async () => {
    const t = await createTestApp(
      { authFailureWait: async () => {}, approvalRequired: ['period.reopen'] },
      { clock: new ManualClock(NOW) },
    );
    try {
      await t.services.configuration.upload(realisticConfiguration(), { user: 'setup@example.test' });
      const maker = await signIn(t, await userWith(t, ['admin']));
      const approver = await signIn(t, await userWith(t, ['admin']));
      const october = { accountingConfig: 'LOCAL_GAAP', node: NODE, firstDay: '2026-10-01' };
      const confirm = await maker.get(`/admin/periods/reopen?${new URLSearchParams(october).toString()}`);
      expect(confirm.body).toContain('Ask for approval</button>');
      const made = await maker.post('/admin/periods/reopen', { ...october, reason: 'late invoice' });
      expect(made.statusCode, made.body).toBe(303);
      const requestPage = String(made.headers.location);
      expect(requestPage).toMatch(/^\/admin\/approvals\//);
      const shown = await approver.get(requestPage);
      expect(shown.body).toContain('Period reopening');
      expect(shown.body).toContain('<dt>Reason</dt><dd>late invoice</dd>');
      expect(shown.body).toContain('Reopens October 2026 (now closed by the calendar).');
      const listed = await maker.get('/admin/periods?accountingConfig=LOCAL_GAAP');
      // November is open by the calendar; October stays closed until the approval.
      expect(listed.body.match(/state-open/g)).toHaveLength(1);

      const approved = await approver.post(`${requestPage}/approve`, {});
      expect(approved.statusCode, approved.body).toBe(303);
      const after = await maker.get('/admin/periods?accountingConfig=LOCAL_GAAP');
      expect(after.body.match(/state-open/g)).toHaveLength(2);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!CHROMIUM_AVAILABLE)('the Periods page in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let adminEmail: string;

  beforeAll(async () => {
    t = await appWithData();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    adminEmail = await userWith(t, ['admin']);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('closes a period, reopens it with a reason, and shows its snapshot', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && message.text().includes('Content Security Policy'))
        throw new Error(`browser console error: ${message.text()}`);
    });
    await page.goto(`${base}/`);
    await page.getByLabel('E-mail').fill(adminEmail);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/admin/login'));

    await page.getByRole('link', { name: 'Periods' }).click();
    await page.getByLabel('Accounting configuration').selectOption('LOCAL_GAAP');
    await page.getByRole('button', { name: 'Show' }).click();
    const november = page.locator('#periods tbody tr', { hasText: 'November 2026' });
    await expect(november.locator('.state').textContent()).resolves.toBe('Open');
    await screenshot(page, 'periods');

    await november.getByRole('link', { name: 'Close…' }).click();
    await page.getByRole('button', { name: 'Close the period' }).click();
    await page.getByText('is closed now; snapshot').waitFor();
    await expect(november.locator('td').nth(3).textContent()).resolves.toContain(`Closed by ${adminEmail}`);

    await november.getByRole('link', { name: 'Reopen…' }).click();
    await page.getByLabel('Reason (kept with the period and in the audit log)').fill('late invoice');
    await page.getByRole('button', { name: 'Reopen the period' }).click();
    await page.getByText('is open now').waitFor();
    await expect(november.locator('td').nth(3).textContent()).resolves.toContain('because late invoice');

    await november.getByRole('link', { name: '1' }).click();
    await page.locator('#period-snapshots a').first().click();
    await page.getByText('SHA-256').waitFor();
    await expect(page.locator('#snapshot-balances tbody tr').count()).resolves.toBeGreaterThan(0);
    await context.close();
  });
});
