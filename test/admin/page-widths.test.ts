import type { AddressInfo } from 'node:net';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent, loanRecord } from '../helpers/records.js';
import { CHROMIUM_AVAILABLE, launchChromium, screenshot } from './browser.js';
import { PASSWORD, userWith } from './helpers.js';

/** The narrowest window the interface is made for, in CSS pixels. */
const WINDOW_WIDTH_PX = 1024;

/** Node fields added to the realistic configuration, with long labels and long values. */
const EXTRA_NODE_FIELDS = {
  reportingRegion: ['Reporting region of the group consolidation', 'EUROPE_MIDDLE_EAST_AND_AFRICA_WHOLESALE'],
  costCentre: ['Cost centre', 'CC-000000004711-AMSTERDAM-ZUIDAS-TREASURY-OPERATIONS-AND-FUNDING'],
  tradingDesk: ['Trading desk', 'STRUCTURED_MORTGAGE_FINANCE_AND_SECURITISATION_DESK'],
  portfolio: ['Portfolio', 'RESIDENTIAL_MORTGAGES_NETHERLANDS_ORIGINATED_2019_TO_2026'],
} as const;

const LONG_NODE = Object.fromEntries(
  Object.entries(EXTRA_NODE_FIELDS).map(([name, [, value]]) => [name, value]),
);

/**
 * The realistic configuration with four more node fields (long labels, long values) on every
 * node, on business events and on journal lines.
 */
function wideConfiguration(): unknown {
  const document = realisticConfiguration();
  const configuration = document.configuration as unknown as {
    businessEventDefinition: { attributes: unknown[] };
    journalDefinition: { fields: unknown[] };
    nodes: { fields: Record<string, string> }[];
    nodeValues: { fieldName: string; values: string[] }[];
  };
  for (const [name, [label, value]] of Object.entries(EXTRA_NODE_FIELDS)) {
    const field = { name, label, role: 'node', source: 'input', type: 'text' };
    configuration.businessEventDefinition.attributes.push(field);
    configuration.journalDefinition.fields.push(field);
    configuration.nodeValues.push({ fieldName: name, values: [value] });
  }
  for (const node of configuration.nodes) Object.assign(node.fields, LONG_NODE);
  return document;
}

/** A direct journal line on the long node. */
function journalLine(account: string, amount: string, currency: string): Record<string, unknown> {
  return {
    coreDate: '2026-11-20',
    journalType: 'PERM',
    accountingConfig: 'IFRS',
    account,
    transactionAmount: amount,
    transactionCurrency: currency,
    originJournalId: 'TREASURY-SWEEP-2026-11-20-000000000000000000000000000000000001',
    legalEntity: 'LF_NL',
    branch: 'AMS',
    productCode: 'MORTGAGE',
    ...LONG_NODE,
  };
}

/** The browser's globals these checks read (the project's types have no DOM). */
interface BrowserGlobals {
  document: { documentElement: { scrollWidth: number } };
  getComputedStyle(element: unknown): { textAlign: string };
}

/** The computed `text-align` of an element. */
function textAlignOf(locator: Locator): Promise<string> {
  return locator.evaluate(
    (element) => (globalThis as unknown as BrowserGlobals).getComputedStyle(element).textAlign,
  );
}

describe.skipIf(!CHROMIUM_AVAILABLE)('administration interface at a 1,024 px window', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let ingestionId: string;
  let journalId: string;

  async function ingest(
    token: string,
    namespace: string,
    entity: string,
    data: unknown[],
    headers: Record<string, string> = {},
  ): Promise<string> {
    const opened = await t.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: {
        namespace,
        entity,
        ingestionName: `nightly ${entity} extract of the servicing platform, Netherlands and United States, rerun after the outage`,
      },
    });
    expect(opened.statusCode, opened.body).toBe(201);
    const id = opened.json().ingestionId as string;
    const chunk = await t.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${id}?partial=true`,
      headers,
      payload: { chunkName: `${entity}-${'0123456789'.repeat(12)}.ndjson`, data },
    });
    expect(chunk.statusCode, chunk.body).toBe(201);
    return id;
  }

  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    await t.services.configuration.upload(wideConfiguration(), { user: 'width-test@example.test' });
    const token = await t.tokenFor(['api-client']);
    ingestionId = await ingest(
      token,
      'loans',
      'loanTransaction',
      [
        loanRecord(1),
        loanRecord(2, { amount: '12,5', transactionType: 'X'.repeat(400), productCode: 'Y'.repeat(400) }),
      ],
      { 'idempotency-key': `nightly-${'k'.repeat(190)}` },
    );
    await ingest(token, 'ledger', 'businessEvent', [
      businessEvent({ amount: '1234567.89', ...LONG_NODE }),
      businessEvent({ eventType: 'NOT_CONFIGURED', productCode: 'Z'.repeat(400), ...LONG_NODE }),
    ]);
    // One journal in two currencies: each balances on its own.
    const direct = await ingest(token, 'ledger', 'journal', [
      journalLine('1300', '98765432.10', 'EUR'),
      journalLine('2100', '-98765432.10', 'EUR'),
      journalLine('1300', '1500.5', 'USD'),
      journalLine('2100', '-1500.5', 'USD'),
    ]);
    await t.services.processor.drain();
    const journals = await t.services.journals.list({ ingestionId: direct }, 0, 10);
    expect(journals.rows.map((j) => j.accountingConfig)).toEqual(['IFRS']);
    journalId = journals.rows[0]?.journalId ?? '';

    const owner = await userWith(t, ['api-client']);
    await t.services.access.createCredential(
      {
        ownerEmail: owner,
        name: `nightly-import-of-the-loan-servicing-platform-${'n'.repeat(120)}`,
      },
      { actor: { user: 'test-setup' } },
    );
    await t.services.access.createUser(
      {
        email: `a.very.long.mailbox.name.of.the.treasury.operations.team.${'m'.repeat(60)}@example.test`,
        displayName: `Treasury operations and funding, Amsterdam Zuidas ${'d'.repeat(80)}`,
        roles: ['viewer', 'bulk-operator', 'api-client'],
        password: PASSWORD,
      },
      { actor: { user: 'test-setup' } },
    );

    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: WINDOW_WIDTH_PX, height: 768 } });
    page = await context.newPage();
    await page.goto(`${base}/admin/login`);
    await page.getByLabel('E-mail').fill(await userWith(t, ['admin']));
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/admin/login'));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const pages = (): [string, string][] => [
    ['dashboard', '/admin/dashboard'],
    ['ingestions', '/admin/ingestions'],
    ['ingestion', `/admin/ingestions/${ingestionId}`],
    ['journals', '/admin/journals'],
    ['journal', `/admin/journals/${journalId}`],
    ['processing errors', '/admin/processing-errors'],
    ['balances', '/admin/balances?asOf=2026-11-20'],
    ['configuration', '/admin/configuration'],
    ['revisions', '/admin/configuration/revisions'],
    ['credentials', '/admin/credentials'],
    ['users', '/admin/users'],
    ['audit log', '/admin/audit'],
  ];

  it('keeps every page within the window, long values and all', async () => {
    const widths: Record<string, number> = {};
    for (const [name, path] of pages()) {
      const response = await page.goto(`${base}${path}`);
      expect(response?.status(), `${name} answers`).toBe(200);
      widths[name] = await page.evaluate(
        () => (globalThis as unknown as BrowserGlobals).document.documentElement.scrollWidth,
      );
      await screenshot(page, `width-${name.replace(' ', '-')}`);
    }
    const tooWide = Object.entries(widths).filter(([, width]) => width > WINDOW_WIDTH_PX);
    expect(tooWide, 'pages wider than the window, with their widths in px').toEqual([]);
    expect(Object.keys(widths)).toHaveLength(pages().length);
  });

  it('shows the long values it keeps within the window', async () => {
    await page.goto(`${base}/admin/journals/${journalId}`);
    const node = (await page.locator('dl.facts').textContent()) ?? '';
    expect(node).toContain('Reporting region of the group consolidation');
    expect(node).toContain(LONG_NODE.costCentre);
    await page.goto(`${base}/admin/ingestions/${ingestionId}`);
    await expect(page.locator('#chunks').textContent()).resolves.toContain(`nightly-${'k'.repeat(190)}`);
  });

  it('shows amounts right-aligned, grouped by thousands, with their currency', async () => {
    await page.goto(`${base}/admin/journals/${journalId}`);
    const debit = page.locator('#journal-lines tbody tr').first().locator('td.num').nth(1);
    await expect(debit.textContent()).resolves.toBe('98,765,432.10\u00a0EUR');
    await expect(textAlignOf(debit)).resolves.toBe('right');
    // The debit column's header is right-aligned over its figures.
    const header = page.locator('#journal-lines thead th', { hasText: 'Debit' });
    await expect(textAlignOf(header)).resolves.toBe('right');
    const totals = (await page.locator('#journal-lines tfoot').textContent()) ?? '';
    expect(totals).toContain('98,765,432.10\u00a0EUR');
    expect(totals).toContain('1,500.5\u00a0USD');
  });

  it('labels journal fields as the journal definition does, and totals each journal per currency', async () => {
    await page.goto(`${base}/admin/journals`);
    const headers = await page.locator('#journals thead th').allTextContents();
    expect(headers).toEqual([
      'Journal',
      'Core date',
      'Status',
      'Journal type',
      'Accounting configuration',
      'Lines',
      'Total (debit = credit)',
      'Node',
    ]);
    const row = page.locator('#journals tbody tr', { hasText: journalId });
    const total = row.locator('td.num').nth(1);
    await expect(total.locator('.amount-line').allTextContents()).resolves.toEqual([
      '98,765,432.10\u00a0EUR',
      '1,500.5\u00a0USD',
    ]);
    await expect(row.textContent()).resolves.toContain('Legal entity LF_NL');

    await page.goto(`${base}/admin/journals/${journalId}`);
    const lineHeaders = await page.locator('#journal-lines thead th').allTextContents();
    expect(lineHeaders).toEqual([
      'Line number',
      'Account',
      'Debit',
      'Credit',
      'Origin journal line id',
      'Product code',
      'Line id',
    ]);
  });

  it('totals the balances per accounting configuration and currency', async () => {
    await page.goto(`${base}/admin/balances?asOf=2026-11-20`);
    const totals = await page.locator('#balances tfoot tr').allTextContents();
    expect(totals.length).toBeGreaterThanOrEqual(2);
    const ifrsEur = totals.find((text) => text.startsWith('IFRS') && text.includes('Total EUR'));
    // 98,765,432.10 from the direct journal and 1,234,567.89 from the business event.
    expect(ifrsEur).toContain('99,999,999.99\u00a0EUR99,999,999.99\u00a0EUR');
  });
});
