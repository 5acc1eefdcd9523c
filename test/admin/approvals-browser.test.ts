import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { CHROMIUM_AVAILABLE, launchChromium, screenshot } from './browser.js';
import { PASSWORD, userWith } from './helpers.js';

/** The approval queue in Chromium: a maker's actions wait, another user approves or rejects them. */
describe.skipIf(!CHROMIUM_AVAILABLE)('approval queue in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let makerEmail: string;
  let approverEmail: string;
  let journalId: string;

  beforeAll(async () => {
    t = await createTestApp(
      { authFailureWait: async () => {}, approvalRequired: ['configuration.delete', 'reversal'] },
      { clock: testClock() },
    );
    await t.services.configuration.upload(realisticConfiguration(), { user: 'setup@example.test' });
    const token = await t.tokenFor(['bulk-operator']);
    const ingestionId = await ingestClosedSession(t, token, 'businessEvent', [
      businessEvent({ effectiveDate: '2026-11-18' }),
    ]);
    await t.services.processor.drain();
    const journals = await t.services.journals.list({ ingestionId }, 0, 1);
    journalId = journals.rows[0]?.journalId ?? '';
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    makerEmail = await userWith(t, ['bulk-operator']);
    approverEmail = await userWith(t, ['admin']);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function signedIn(email: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && message.text().includes('Content Security Policy'))
        throw new Error(`browser console error: ${message.text()}`);
    });
    await page.goto(`${base}/`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/admin/login'));
    return page;
  }

  it('a wipe waits, is never offered to its maker to approve, and is rejected with a reason', async () => {
    const maker = await signedIn(makerEmail);
    await maker.goto(`${base}/admin/configuration/wipe`);
    await maker.getByLabel(/I understand/).check();
    await maker.getByRole('button', { name: 'Wipe' }).click();
    await maker.waitForURL(/\/admin\/approvals\/[0-9a-f-]{36}$/);
    expect(await maker.locator('#approval-status').textContent()).toBe('Pending approval');
    expect(await maker.locator('#approval-dry-run').textContent()).toContain('wipes 1 ingestion session');
    expect(await maker.getByRole('button', { name: 'Approve and run' }).count()).toBe(0);
    expect(await maker.getByRole('button', { name: 'Cancel my request' }).count()).toBe(1);
    expect((await t.services.configuration.wipeDryRun()).wouldDelete.ingestions).toBe(1);

    const approver = await signedIn(approverEmail);
    await approver.goto(`${base}/admin/approvals`);
    const row = approver.locator('#approvals tbody tr', { hasText: 'Configuration wipe' });
    await expect(row.count()).resolves.toBe(1);
    expect(await row.textContent()).toContain('wipes 1 ingestion session');
    await screenshot(approver, 'approvals-queue');
    await row.getByRole('link').click();
    await approver.waitForURL(/\/admin\/approvals\/[0-9a-f-]{36}$/);
    await approver.getByLabel('Reason').fill('not announced to accounting');
    await approver.getByRole('button', { name: 'Reject' }).click();
    await approver.waitForLoadState();
    expect(await approver.locator('#approval-status').textContent()).toBe('Rejected');
    expect(await approver.locator('#approval-request').textContent()).toContain(
      'not announced to accounting',
    );
    expect((await t.services.configuration.wipeDryRun()).wouldDelete.ingestions).toBe(1);
  });

  it('a reversal waits, and another user approves it: it runs', async () => {
    const maker = await signedIn(makerEmail);
    await maker.goto(`${base}/admin/journals/${journalId}/reverse`);
    await maker.getByLabel(/Reason/).fill('booked twice');
    await maker.getByRole('button', { name: /Reverse 1 journal/ }).click();
    await maker.waitForURL(/\/admin\/approvals\/[0-9a-f-]{36}$/);
    const path = new URL(maker.url()).pathname;
    expect((await t.services.journals.get(journalId)).withdrawnBy).toBeNull();

    const approver = await signedIn(approverEmail);
    await approver.goto(`${base}${path}`);
    await screenshot(approver, 'approval-request');
    await approver.getByRole('button', { name: 'Approve and run' }).click();
    await approver.waitForLoadState();
    expect(await approver.locator('#approval-status').textContent()).toBe('Approved');
    expect((await t.services.journals.get(journalId)).withdrawnBy).not.toBeNull();
  });
});
