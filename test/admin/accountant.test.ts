import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVERSAL_REASON_LENGTH_MAX } from '../../src/modules/accounting/reversals.js';
import { APPROVAL_REASON_LENGTH_MAX } from '../../src/modules/approvals/inputs.js';
import { signedInClientIdOf } from '../../src/modules/audit/entry.js';
import { PERIOD_REASON_LENGTH_MAX } from '../../src/modules/periods/service.js';
import type { TestApp } from '../helpers/app.js';
import { type AccountantData, AMSTERDAM, accountantApp } from './accountant-data.js';
import { type Signed, signIn } from './helpers.js';

/** A text of `n` characters outside the Basic Multilingual Plane: each is two UTF-16 units. */
const astral = (n: number) => '\u{1F4B6}'.repeat(n);

/** The cells of the table row that holds `needle`, as markup, or [] when no row does. */
function rowCells(body: string, needle: string): string[] {
  const row = body.split('<tr>').find((part) => part.includes(needle));
  if (row === undefined) return [];
  return (
    row
      .split('</tr>')[0]
      ?.split(/<td[^>]*>/)
      .slice(1)
      .map((cell) => cell.replace(/<\/td>\s*$/, '')) ?? []
  );
}

const ENTITIES: Record<string, string> = {
  '&lt;': '<',
  '&gt;': '>',
  '&amp;': '&',
  '&quot;': '"',
  '&#39;': "'",
};

/**
 * Markup as a reader sees it: its text, as a browser's `textContent` joins it, with a space
 * after each cell, term, definition and paragraph, white space collapsed.
 */
function textOf(markup: string): string {
  return markup
    .replace(/<\/(td|th|dt|dd|p|li|div)>|<br>/g, ' ')
    .replace(/<[^>]+>/g, '')
    .replace(/&(lt|gt|amp|quot|#39);/g, (entity) => ENTITIES[entity] ?? entity)
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The administration interface as an accountant uses it: reversal journals marked and linked,
 * the audit log and the periods in words, what an approver decides on, credentials by their
 * owner, ISO dates, and forms that hold a value to the API's own rule.
 */
describe('the administration interface, as an accountant reads it', () => {
  let data: AccountantData;
  let t: TestApp;
  let approver: Signed;
  let maker: Signed;
  beforeAll(async () => {
    data = await accountantApp();
    t = data.t;
    approver = await signIn(t, data.approverEmail);
    maker = await signIn(t, data.makerEmail);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('marks reversal journals in the journal list and links each to what it reverses, and back', async () => {
    const list = await approver.get('/admin/journals');
    expect(list.statusCode).toBe(200);
    const reversalRow = rowCells(list.body, `href="/admin/journals/${data.reversalJournalId}">`);
    expect(textOf(reversalRow[2] ?? '')).toMatch(/^posted Reversal of journal …[0-9a-f]{12}$/);
    expect(reversalRow[2]).toContain(`href="/admin/journals/${data.reversedId}"`);
    const originalRow = rowCells(list.body, `href="/admin/journals/${data.reversedId}">`);
    expect(textOf(originalRow[2] ?? '')).toMatch(/^posted Reversed by journal …[0-9a-f]{12}$/);
    expect(originalRow[2]).toContain(`href="/admin/journals/${data.reversalJournalId}"`);
    // Journals no reversal touches carry no mark.
    const untouched = data.journalIds.find((id) => id !== data.reversedId) ?? '';
    expect(textOf(rowCells(list.body, `href="/admin/journals/${untouched}">`)[2] ?? '')).toBe('posted');
  });

  it("says on a journal's page what it reverses, or what reversed it, with the links both ways", async () => {
    const reversal = await approver.get(`/admin/journals/${data.reversalJournalId}`);
    const note =
      /<div class="notice info reversal-note" id="reversal-note">(.*?)<\/div>/s.exec(reversal.body)?.[1] ??
      '';
    expect(textOf(note)).toContain(`Reversal Reverses journal ${data.reversedId}`);
    expect(note).toContain(`href="/admin/journals/${data.reversedId}"`);
    expect(note).toContain(`href="/admin/reversals/${data.reversalId}"`);

    const original = await approver.get(`/admin/journals/${data.reversedId}`);
    const back = /id="reversal-note">(.*?)<\/div>/s.exec(original.body)?.[1] ?? '';
    expect(textOf(back)).toContain(`Reversed Reversed by journal ${data.reversalJournalId}, a correction`);
    expect(back).toContain(`href="/admin/journals/${data.reversalJournalId}"`);
    // A journal already reversed is not offered for reversal again.
    expect(original.body).not.toContain('id="reverse"');
  });

  it('writes each audit entry in words, its details as labelled fields, and says who acted', async () => {
    const audit = await approver.get('/admin/audit');
    expect(audit.statusCode).toBe(200);
    // No raw JSON: no object or quoted member anywhere in the table.
    const table = /<table id="audit".*?<\/table>/s.exec(audit.body)?.[0] ?? '';
    expect(table).not.toMatch(/\{&quot;|&quot;:|\{"|":/);

    const reversal = rowCells(audit.body, 'journals.reverse');
    expect(textOf(reversal[3] ?? '')).toContain('Reversed 1 journal');
    expect(reversal[3]).toContain(`href="/admin/reversals/${data.reversalId}"`);
    expect(reversal[3]).toContain('<dt>Reason</dt><dd>booked twice upstream</dd>');
    expect(reversal[3]).toMatch(
      /<dt>Selection<\/dt><dd>journal <a class="id" href="\/admin\/journals\/[^"]+">/,
    );
    expect(reversal[3]).toContain('<dt>Posting date</dt><dd>by the dating rule</dd>');
    // Approved from the pages: the approver, and no credential.
    expect(textOf(reversal[2] ?? '')).toBe(data.approverEmail);

    const lock = rowCells(audit.body, 'periods.lock');
    expect(textOf(lock[3] ?? '')).toContain('Locked October 2026');
    expect(lock[3]).toMatch(/<dt>Node<\/dt><dd><span class="node">.*Legal entity.*LF_NL/);
    expect(lock[3]).toContain('<dt>Accounting configuration</dt><dd>LOCAL_GAAP</dd>');

    // A change through the API names the credential that made it.
    const viaApi = rowCells(audit.body, `<code>${data.namedClientId}</code> <small`);
    expect(textOf(viaApi[2] ?? '')).toMatch(/through the API, with the credential lfc_\S+$/);
    expect(viaApi[3]).toContain('<dt>Description</dt><dd>Nightly loan import</dd>');
    // The service names its cause.
    const bySystem = rowCells(audit.body, '<code>ci-bootstrap</code>');
    expect(textOf(bySystem[2] ?? '')).toBe('The service because BOOTSTRAP_CLIENT_ID was set at start');
    // A credential made without a description is not given its client id as one.
    const unnamed = rowCells(audit.body, `<code>${data.unnamedClientId}</code> <small`);
    expect(unnamed[3]).not.toContain('<dt>Description</dt>');
  });

  it('lists the periods newest first, by month, with their state in words', async () => {
    const periods = await approver.get('/admin/periods?accountingConfig=LOCAL_GAAP');
    expect(periods.statusCode).toBe(200);
    const months = [...periods.body.matchAll(/<strong class="nowrap">([A-Z][a-z]+ \d{4})<\/strong>/g)].map(
      (m) => m[1],
    );
    expect(months.slice(0, 3)).toEqual(['November 2026', 'October 2026', 'September 2026']);
    expect(months).toHaveLength(12);
    const october = rowCells(periods.body, 'October 2026');
    expect(textOf(october[3] ?? '')).toBe(`Locked by ${data.makerEmail} on 2026-11-20 10:00:00 UTC`);
    expect(textOf(rowCells(periods.body, 'September 2026')[3] ?? '')).toBe('Closed by the calendar');
    expect(textOf(rowCells(periods.body, 'November 2026')[3] ?? '')).toBe('Open');
    expect(textOf(october[0] ?? '')).toBe('October 2026 2026-10-01 to 2026-10-31');
    // The node by its labels (the separator between its fields is the style's).
    expect(textOf(october[1] ?? '')).toBe('Legal entity LF_NLBranch AMS');
    // The service's field names are never shown.
    for (const name of ['firstDay', 'lastDay', 'basis', 'locked-by-hand', 'legalEntity']) {
      expect(textOf(periods.body)).not.toContain(name);
    }
  });

  it('shows the approver who asked and what changes: the paths of an upload, the period of a reopening', async () => {
    const makerName = (await t.services.access.findUser(data.makerEmail))?.displayName ?? '';
    const upload = await approver.get(`/admin/approvals/${data.uploadRequestId}`);
    const madeBy = /<dd id="approval-maker">(.*?)<\/dd>/s.exec(upload.body)?.[1] ?? '';
    expect(textOf(madeBy)).toBe(
      `${makerName} <${data.makerEmail}> in the administration interface on 2026-11-20 10:00:00 UTC`,
    );
    expect(rowCells(upload.body, '/entities/0/attributes/0/label').map(textOf)).toEqual([
      '/entities/0/attributes/0/label',
      'changed',
    ]);
    expect(textOf(/id="approval-dry-run">(.*?)<\/dd>/s.exec(upload.body)?.[1] ?? '')).toBe(
      'Keeps the processing data.',
    );

    const reopen = await approver.get(`/admin/approvals/${data.reopenRequestId}`);
    const change = /<dl class="facts" id="approval-change">(.*?)<\/dl>/s.exec(reopen.body)?.[1] ?? '';
    expect(textOf(change)).toBe(
      `Period October 2026 (2026-10-01 to 2026-10-31) Node Legal entity LF_NLBranch AMS Accounting configuration LOCAL_GAAP Now Locked by ${data.makerEmail} on 2026-11-20 10:00:00 UTC Reason late supplier invoice for October`,
    );
    // Approve, Reject and Back stand in one row, each button naming its form.
    expect(reopen.body).toMatch(
      /<p class="actions"><button type="submit" form="approve-form" class="danger">Approve and run<\/button><button type="submit" form="reject-form">Reject<\/button><a href="\/admin\/approvals">Back to the queue<\/a><\/p>/,
    );
    // The maker sees the cancel button in that row, and no approve or reject.
    const own = await maker.get(`/admin/approvals/${data.reopenRequestId}`);
    expect(own.body).toMatch(
      /<p class="actions"><button type="submit" form="cancel-form">Cancel my request<\/button><a href="\/admin\/approvals">Back to the queue<\/a><\/p>/,
    );
    expect(own.body).not.toContain('form="approve-form"');
  });

  it("shows a reversal request's selection, reason and posting date, and warns when an older request lacks them", async () => {
    const selected = data.journalIds[1] ?? '';
    const shown = await approver.get(`/admin/approvals/${data.reversalRequestId}`);
    const change = /<dl class="facts" id="approval-change">(.*?)<\/dl>/s.exec(shown.body)?.[1] ?? '';
    expect(textOf(change)).toBe(
      `Selection journal ${selected} Reason the customer cancelled the loan Posting date 2026-11-20`,
    );
    expect(change).toContain(`href="/admin/journals/${selected}"`);
    expect(shown.body).toMatch(/<dt>Reversal journals<\/dt><dd>1 \(2 lines\)<\/dd>/);

    // A request stored before reviews kept the selection (an empty summary) says so.
    await t.store.db
      .updateTable('approval_requests')
      .set({ summary: JSON.stringify({}) })
      .where('id', '=', data.reversalRequestId)
      .execute();
    const bare = await approver.get(`/admin/approvals/${data.reversalRequestId}`);
    expect(bare.body).toContain('This request does not carry its selection and reason');
    expect(bare.body).toMatch(/<dt>Reversal journals<\/dt><dd>1 \(2 lines\)<\/dd>/);
  });

  it('lists credentials by their owner and description, never a name that repeats the client id', async () => {
    const ownerName = (await t.services.access.findUser(data.ownerEmail))?.displayName ?? '';
    const list = await approver.get('/admin/credentials');
    expect(list.statusCode).toBe(200);
    const named = rowCells(list.body, `<code>${data.namedClientId}</code>`);
    expect(textOf(named[0] ?? '')).toBe(`${ownerName} <${data.ownerEmail}> Nightly loan import`);
    const unnamed = rowCells(list.body, `<code>${data.unnamedClientId}</code>`);
    expect(textOf(unnamed[0] ?? '')).toBe(`${ownerName} <${data.ownerEmail}> no description`);
    expect(list.body).toContain('<label>Description (optional) <input name="name"');
  });

  it('types and shows dates as YYYY-MM-DD: text fields with the ISO pattern, never a date picker', async () => {
    for (const path of [
      '/admin/journals',
      '/admin/balances',
      '/admin/dashboard',
      `/admin/journals/${data.journalIds[2] ?? ''}/reverse`,
    ]) {
      const shown = await approver.get(path);
      expect(shown.statusCode, path).toBe(200);
      expect(shown.body, path).not.toContain('type="date"');
      expect(shown.body, path).toMatch(
        /<input type="text" class="date" name="\w+" value="" inputmode="numeric" pattern="\\d\{4\}-\\d\{2\}-\\d\{2\}" placeholder="YYYY-MM-DD"/,
      );
    }
    const filtered = await approver.get('/admin/journals?from=2026-11-19');
    expect(filtered.body).toContain('value="2026-11-19"');
    expect(filtered.body).not.toContain('>2026-11-18<');
    // A day in another format is said to be no date and filters nothing, rather than nothing found.
    const german = await approver.get('/admin/journals?from=19.11.2026');
    expect(german.body).toContain(
      'From: 19.11.2026 is not a date YYYY-MM-DD; the list is not filtered by it.',
    );
    expect(german.body).toContain('value="19.11.2026"');
    expect(german.body).toContain('>2026-11-18<');
  });

  it('bounds a reason in characters as the API counts them, emoji and all, on every form that asks one', async () => {
    const [journalId = ''] = data.journalIds.filter((id) => id !== data.reversedId).slice(-1);
    const form = await approver.get(`/admin/journals/${journalId}/reverse`);
    // The browser's maxlength counts UTF-16 units: twice the characters, so it cuts nothing the API takes.
    expect(form.body).toContain(
      `maxlength="${REVERSAL_REASON_LENGTH_MAX * 2}" data-max-chars="${REVERSAL_REASON_LENGTH_MAX}"`,
    );
    const token = await t.tokenFor(['admin']);
    const api = (reason: string) =>
      t.call(token, {
        method: 'POST',
        url: '/api/v1/reversals?dryRun=true',
        payload: { selection: { journalIds: [journalId] }, reason },
      });
    const longest = astral(REVERSAL_REASON_LENGTH_MAX);
    expect((await api(longest)).statusCode).toBe(200);
    expect((await api(`${longest}x`)).statusCode).toBe(400);

    const refused = await approver.post(`/admin/journals/${journalId}/reverse`, { reason: `${longest}x` });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain(
      `The reason is too long: at most ${REVERSAL_REASON_LENGTH_MAX} characters, and it has ${REVERSAL_REASON_LENGTH_MAX + 1}.`,
    );
    expect(refused.body).toContain('aria-describedby="reason-refusal"');
    const pending = (await t.services.approvals.list('pending-approval', { page: 0 }, 100)).rows.length;
    const accepted = await approver.post(`/admin/journals/${journalId}/reverse`, { reason: longest });
    expect(accepted.statusCode, accepted.body).toBe(303);
    expect(String(accepted.headers.location)).toMatch(/^\/admin\/approvals\//);
    expect((await t.services.approvals.list('pending-approval', { page: 0 }, 100)).rows).toHaveLength(
      pending + 1,
    );

    // A reopening's reason (PeriodReason) and a rejection's (ApprovalReason) alike.
    const september = {
      accountingConfig: 'LOCAL_GAAP',
      node: JSON.stringify(AMSTERDAM),
      firstDay: '2026-09-01',
    };
    const reopenForm = await approver.get(
      `/admin/periods/reopen?${new URLSearchParams(september).toString()}`,
    );
    expect(reopenForm.body).toContain(
      `maxlength="${PERIOD_REASON_LENGTH_MAX * 2}" data-max-chars="${PERIOD_REASON_LENGTH_MAX}"`,
    );
    const tooLong = await approver.post('/admin/periods/reopen', {
      ...september,
      reason: astral(PERIOD_REASON_LENGTH_MAX + 1),
    });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.body).toContain(
      `at most ${PERIOD_REASON_LENGTH_MAX} characters, and it has ${PERIOD_REASON_LENGTH_MAX + 1}`,
    );
    const reopening = await approver.post('/admin/periods/reopen', {
      ...september,
      reason: astral(PERIOD_REASON_LENGTH_MAX),
    });
    expect(reopening.statusCode, reopening.body).toBe(303);

    const upload = `/admin/approvals/${data.uploadRequestId}`;
    const notRejected = await approver.post(`${upload}/reject`, {
      reason: astral(APPROVAL_REASON_LENGTH_MAX + 1),
    });
    expect(notRejected.statusCode).toBe(400);
    const rejected = await approver.post(`${upload}/reject`, { reason: astral(APPROVAL_REASON_LENGTH_MAX) });
    expect(rejected.statusCode).toBe(303);
    expect((await t.services.approvals.get(data.uploadRequestId)).reason).toBe(
      astral(APPROVAL_REASON_LENGTH_MAX),
    );
  });

  it('refuses a posting date in a locked period on the form, naming the period, before any approval is asked', async () => {
    const journals = (await t.services.journals.list({ accountingConfig: 'IFRS' }, 0, 100)).rows;
    const journal = journals.find(
      (j) => j.reverses === null && j.withdrawnBy === null && j.coreDate === '2026-11-19',
    );
    const journalId = journal?.journalId ?? '';
    expect(journalId).not.toBe('');
    await t.services.periods.act(
      'lock',
      { accountingConfig: 'IFRS', node: { ...AMSTERDAM }, firstDay: '2026-11-01' },
      undefined,
      { actor: { user: data.approverEmail, clientId: signedInClientIdOf(data.approverEmail) } },
    );
    const pending = (await t.services.approvals.list('pending-approval', { page: 0 }, 100)).rows.length;
    const refused = await approver.post(`/admin/journals/${journalId}/reverse`, {
      reason: 'the customer cancelled the loan',
      postingDate: '2026-11-20',
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('The posting date 2026-11-20 was refused; nothing was reversed.');
    expect(refused.body).toContain('is in period 2026-11 of node');
    expect(refused.body).toContain('which is locked');
    expect(refused.body).toContain('value="2026-11-20"');
    expect(refused.body).toContain('required>the customer cancelled the loan</textarea>');
    expect((await t.services.approvals.list('pending-approval', { page: 0 }, 100)).rows).toHaveLength(
      pending,
    );
  });
});
