import type { AddressInfo } from 'node:net';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVERSAL_REASON_LENGTH_MAX } from '../../src/modules/accounting/reversals.js';
import type { TestApp } from '../helpers/app.js';
import { type AccountantData, accountantApp } from './accountant-data.js';
import { CHROMIUM_AVAILABLE, launchChromium, screenshot } from './browser.js';
import { PASSWORD } from './helpers.js';

/** The narrowest window the interface is made for, and a wide one, in CSS pixels. */
const NARROW_PX = 1024;
const WIDE_PX = 1600;

/** A text of `n` characters outside the Basic Multilingual Plane: each is two UTF-16 units. */
const astral = (n: number) => '\u{1F4B6}'.repeat(n);

/** What a field's value and validity are in the browser, counted as the API counts (characters). */
interface FieldState {
  characters: number;
  valid: boolean;
  message: string;
}

/** What these checks read of a form field in the page (the project's types have no DOM). */
interface FormField {
  value: string;
  checkValidity(): boolean;
  validationMessage: string;
}

function fieldState(field: Locator): Promise<FieldState> {
  return field.evaluate((element) => {
    const input = element as unknown as FormField;
    return {
      characters: [...input.value].length,
      valid: input.checkValidity(),
      message: input.validationMessage,
    };
  });
}

/** The page's width as laid out: wider than the window means a sideways scroll. */
function pageWidth(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth') as Promise<number>;
}

/**
 * The words of the audit table's cells of words that are broken across two lines: each run of
 * letters or digits of a text outside an identifier (which may break) is measured with a Range,
 * and a word whose boxes sit on more than one line is broken.
 */
const BROKEN_WORDS = `(() => {
  const broken = [];
  let checked = 0;
  for (const cell of document.querySelectorAll('#audit td.words')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      if (node.parentElement.closest('.breakable, code, .id, time') !== null) continue;
      for (const match of node.textContent.matchAll(/[\\p{L}\\p{N}]{2,}/gu)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
        checked += 1;
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return { checked, broken };
})()`;

/** What {@link BROKEN_WORDS} finds. */
interface WordCheck {
  checked: number;
  broken: string[];
}

/**
 * The administration interface in a browser set to German, as an accountant uses it: ISO dates
 * whatever the language, reasons counted as the API counts them, the decision's buttons on one
 * line, an audit log whose words are never cut, at a narrow and a wide window.
 */
describe.skipIf(!CHROMIUM_AVAILABLE)('the administration interface in a German Chromium', () => {
  let data: AccountantData;
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    data = await accountantApp();
    t = data.t;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium(['--lang=de-DE']);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A new German browser context of this width, signed in as `email`; a CSP violation fails. */
  async function signedIn(email: string, width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, locale: 'de-DE' });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && message.text().includes('Content Security Policy'))
        throw new Error(`browser console error: ${message.text()}`);
    });
    await page.goto(`${base}/admin/login`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/admin/login'));
    return page;
  }

  it('takes and shows dates as YYYY-MM-DD though the browser speaks German', async () => {
    const page = await signedIn(data.approverEmail, NARROW_PX);
    await expect(page.evaluate('navigator.language')).resolves.toBe('de-DE');
    await page.goto(`${base}/admin/journals`);
    const from = page.getByLabel('From');
    await expect(from.getAttribute('type')).resolves.toBe('text');
    await expect(from.getAttribute('placeholder')).resolves.toBe('YYYY-MM-DD');
    // A German date is refused by the field itself: the form is not sent.
    await from.fill('19.11.2026');
    await expect(fieldState(from)).resolves.toMatchObject({ valid: false });
    await page.getByRole('button', { name: 'Filter' }).click();
    expect(new URL(page.url()).search).toBe('');

    await from.fill('2026-11-19');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('from') === '2026-11-19');
    await expect(page.getByLabel('From').inputValue()).resolves.toBe('2026-11-19');
    const coreDates = await page.locator('#journals tbody tr td:nth-child(2)').allTextContents();
    expect(coreDates.length).toBeGreaterThan(0);
    for (const day of coreDates) expect(day).toBe('2026-11-19');
    await screenshot(page, 'accountant-journals-de-narrow');

    // The posting date of a reversal alike.
    await page.goto(`${base}/admin/journals/${data.journalIds[3] ?? ''}/reverse`);
    const postingDate = page.getByLabel(/^Posting date/);
    await expect(postingDate.getAttribute('type')).resolves.toBe('text');
    await postingDate.fill('20.11.2026');
    await expect(fieldState(postingDate)).resolves.toMatchObject({ valid: false });
    await page.context().close();
  });

  it("counts a reason's characters as the API does: 500 emoji are taken, a 501st character is not", async () => {
    const page = await signedIn(data.approverEmail, NARROW_PX);
    const journalId = data.journalIds[3] ?? '';
    await page.goto(`${base}/admin/journals/${journalId}/reverse`);
    const reason = page.getByLabel(/^Reason/);
    const limit = REVERSAL_REASON_LENGTH_MAX;

    await reason.fill(astral(limit));
    await expect(fieldState(reason)).resolves.toEqual({ characters: limit, valid: true, message: '' });
    await expect(page.locator('.char-count').textContent()).resolves.toBe(`${limit} of ${limit} characters`);

    // One emoji more: the browser keeps no more than the API takes (maxlength cuts at 1,000 units).
    await reason.fill(astral(limit + 1));
    await expect(fieldState(reason)).resolves.toMatchObject({ characters: limit, valid: true });

    // 499 emoji and two letters: 1,000 units, which maxlength lets through, but 501 characters,
    // which the API refuses: the browser refuses them too, saying so, and sends nothing.
    await reason.fill(`${astral(limit - 1)}xx`);
    await expect(fieldState(reason)).resolves.toEqual({
      characters: limit + 1,
      valid: false,
      message: `At most ${limit} characters: this has ${limit + 1}.`,
    });
    await page.getByRole('button', { name: /^Reverse 1 journal$/ }).click();
    expect(new URL(page.url()).pathname).toBe(`/admin/journals/${journalId}/reverse`);
    await screenshot(page, 'accountant-reason-over-the-limit');

    await reason.fill(astral(limit));
    await page.getByRole('button', { name: /^Reverse 1 journal$/ }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/admin/approvals/'));
    const requestId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() ?? '');
    expect((await t.services.approvals.get(requestId)).kind).toBe('reversal');
    await page.context().close();
  });

  it('puts Approve, Reject and Back to the queue on one line, at a narrow and a wide window', async () => {
    for (const width of [NARROW_PX, WIDE_PX]) {
      const page = await signedIn(data.approverEmail, width);
      await page.goto(`${base}/admin/approvals/${data.reopenRequestId}`);
      await expect(page.locator('#approval-change').textContent()).resolves.toContain('October 2026');
      const boxes = await Promise.all(
        [
          page.getByRole('button', { name: 'Approve and run' }),
          page.getByRole('button', { name: 'Reject' }),
          page.getByRole('link', { name: 'Back to the queue' }),
        ].map((control) => control.boundingBox()),
      );
      const middles = boxes.map((box) => (box === null ? Number.NaN : box.y + box.height / 2));
      for (const middle of middles) expect(Math.abs(middle - (middles[0] ?? 0))).toBeLessThan(2);
      expect(await pageWidth(page)).toBeLessThanOrEqual(width);
      await screenshot(page, `accountant-approval-${width}`);
      await page.context().close();
    }
  });

  it('never cuts a word of the audit log in two, at a narrow and a wide window', async () => {
    for (const width of [NARROW_PX, WIDE_PX]) {
      const page = await signedIn(data.approverEmail, width);
      await page.goto(`${base}/admin/audit`);
      await expect(page.locator('#audit tbody tr').count()).resolves.toBeGreaterThan(10);
      const words = (await page.evaluate(BROKEN_WORDS)) as WordCheck;
      expect(words.checked).toBeGreaterThan(200);
      expect(words.broken).toEqual([]);
      const text = (await page.locator('#audit').textContent()) ?? '';
      expect(text).not.toMatch(/[{}]|":/);
      expect(await pageWidth(page)).toBeLessThanOrEqual(width);
      await screenshot(page, `accountant-audit-${width}`);
      if (width === NARROW_PX) {
        // The check sees a word cut in two: under `overflow-wrap: anywhere` (the rule these cells
        // had), Who cells squeezed to a few letters cut the service's words.
        await page.evaluate(
          `for (const cell of document.querySelectorAll('#audit td.words')) { cell.style.overflowWrap = 'anywhere'; cell.style.minWidth = '0'; cell.style.width = '3em'; }`,
        );
        expect(((await page.evaluate(BROKEN_WORDS)) as WordCheck).broken).toContain('service');
      }
      await page.context().close();
    }
  });

  it('keeps the periods, journals, credentials and requests within the window, narrow and wide', async () => {
    const pages: [string, string][] = [
      ['periods', '/admin/periods?accountingConfig=LOCAL_GAAP'],
      ['journals', '/admin/journals'],
      ['reversal-journal', `/admin/journals/${data.reversalJournalId}`],
      ['credentials', '/admin/credentials'],
      ['approvals', '/admin/approvals'],
      ['upload-request', `/admin/approvals/${data.uploadRequestId}`],
    ];
    for (const width of [NARROW_PX, WIDE_PX]) {
      const page = await signedIn(data.approverEmail, width);
      for (const [name, path] of pages) {
        const answer = await page.goto(`${base}${path}`);
        expect(answer?.status(), path).toBe(200);
        expect(await pageWidth(page), `${path} at ${width} px`).toBeLessThanOrEqual(width);
        await screenshot(page, `accountant-${name}-${width}`);
      }
      await page.context().close();
    }
  });
});
