import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { abs, add, type Decimal, parseDecimal, sign, toDecimalString, ZERO } from '../../../lib/decimal.js';
import { keepsRule } from '../../../lib/input-rule.js';
import {
  JOURNAL_STATUSES,
  JournalStatusFilter,
  ProcessingErrorStateFilter,
} from '../../../modules/accounting/inputs.js';
import type { JournalLineView, JournalView } from '../../../modules/accounting/journal-queries.js';
import type { JournalFieldRole } from '../../../modules/configuration/journal-roles.js';
import { dateField, isCalendarDay } from '../form-fields.js';
import { type Html, type HtmlValue, html } from '../html.js';
import { currentJournalFields, type JournalFields, nodeHtml } from '../journal-fields.js';
import { type Column, emptyState, notice, page, pagination, table, when } from '../layout.js';
import { amountHtml, currencySumsHtml, formatCount, magnitudeOf, sumsByCurrency } from '../money.js';
import { contextOf, pagingOf, queryText, sendPage } from '../request.js';
import { journalLink, journalShortLink } from '../words.js';

/**
 * Roles whose value is the journal's, the same on every line: the journal page shows them once,
 * above the lines, and the lines table leaves them out.
 */
const JOURNAL_LEVEL_ROLES: ReadonlySet<JournalFieldRole> = new Set([
  'coreDate',
  'journalType',
  'accountingConfig',
  'journalId',
  'reverses',
  'reversedBy',
  'ingestionId',
  'originJournalId',
  'node',
]);

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** A line's amount and currency, read from the fields of those roles; none without an amount field. */
interface LineAmount {
  amount: string;
  currency: string;
  drCr: 'DR' | 'CR';
}

function lineAmount(line: JournalLineView, fields: JournalFields): LineAmount | undefined {
  const amountField = fields.fieldOf('transactionAmount');
  if (amountField === undefined) return undefined;
  const currencyField = fields.fieldOf('transactionCurrency');
  return {
    amount: cellText(line[amountField]),
    currency: currencyField === undefined ? '' : cellText(line[currencyField]),
    drCr: line.drCr,
  };
}

/**
 * What a journal moves, per currency: the sum of its debit lines, which equals the sum of its
 * credit lines because every journal balances per currency.
 */
function journalTotal(journal: JournalView, fields: JournalFields): Html {
  const debits = journal.lines
    .map((line) => lineAmount(line, fields))
    .filter((line): line is LineAmount => line !== undefined && line.drCr === 'DR');
  return currencySumsHtml(sumsByCurrency(debits));
}

/** Whether a balance is a credit balance: credits are negative (a zero balance is neither). */
function isCreditBalance(balance: string): boolean {
  const value = parseDecimal(balance);
  return value !== undefined && sign(value) < 0;
}

/** The totals of the debit and of the credit balances of one accounting configuration and currency. */
interface BalanceTotals {
  accountingConfig: string;
  currency: string;
  /** `undefined` when a balance is not a decimal, so that no wrong total is shown. */
  debit: Decimal | undefined;
  credit: Decimal | undefined;
}

function addTo(total: Decimal | undefined, value: Decimal | undefined): Decimal | undefined {
  return total === undefined || value === undefined ? undefined : add(total, value);
}

/**
 * Totals of the debit and of the credit balances per accounting configuration and currency,
 * never across accounting configurations, which account for the same business each in its own
 * way.
 */
function balanceTotals(
  rows: readonly { accountingConfig: string; currency: string; balance: string }[],
): BalanceTotals[] {
  const totals = new Map<string, BalanceTotals>();
  for (const { accountingConfig, currency, balance } of rows) {
    const key = JSON.stringify([accountingConfig, currency]);
    const entry = totals.get(key) ?? { accountingConfig, currency, debit: ZERO, credit: ZERO };
    const value = parseDecimal(balance);
    if (value === undefined) {
      entry.debit = undefined;
      entry.credit = undefined;
    } else if (sign(value) < 0) {
      entry.credit = addTo(entry.credit, abs(value));
    } else {
      entry.debit = addTo(entry.debit, value);
    }
    totals.set(key, entry);
  }
  return [...totals.values()];
}

function totalHtml(total: Decimal | undefined, currency: string): Html {
  return total === undefined
    ? html`<span title="A balance of this currency is not a decimal">—</span>`
    : amountHtml(toDecimalString(total), currency);
}

/** The journal's origin id (of a journal sent directly), which only its line records carry. */
function originHtml(journal: JournalView, fields: JournalFields): Html | string {
  const name = fields.fieldOf('originJournalId');
  const value = name === undefined ? undefined : journal.lines[0]?.[name];
  if (name === undefined || value === null || value === undefined) return '';
  return html`<dt>${fields.label(name)}</dt><dd>${cellText(value)}</dd>`;
}

/**
 * Where a line field's column goes: the line number, the account and the amount first, as a
 * journal is read; the line id, which people rarely read, last; the other fields between them,
 * in the journal definition's order (the sort is stable).
 */
const LINE_COLUMN_RANKS: Partial<Record<JournalFieldRole, number>> = {
  journalLineNo: 0,
  account: 1,
  transactionAmount: 2,
  lineId: 4,
};
const OTHER_LINE_COLUMN_RANK = 3;

function columnRank(role: JournalFieldRole | undefined): number {
  return (role === undefined ? undefined : LINE_COLUMN_RANKS[role]) ?? OTHER_LINE_COLUMN_RANK;
}

/**
 * The lines of a journal, each field labelled as the journal definition labels it: the
 * journal's own values are shown once above, the amount is split into Debit and Credit with its
 * currency, and the last row totals both sides per currency.
 */
function linesTable(journal: JournalView, fields: JournalFields): Html {
  const amountField = fields.fieldOf('transactionAmount');
  const currencyField = fields.fieldOf('transactionCurrency');
  const shown = fields.names
    .filter((name) => {
      const role = fields.roleOf(name);
      return name !== currencyField && (role === undefined || !JOURNAL_LEVEL_ROLES.has(role));
    })
    .sort((a, b) => columnRank(fields.roleOf(a)) - columnRank(fields.roleOf(b)));
  const headers: Column[] = shown.flatMap((name): Column[] => {
    if (name === amountField) {
      return [
        { label: 'Debit', kind: 'num' },
        { label: 'Credit', kind: 'num' },
      ];
    }
    return [
      fields.roleOf(name) === 'journalLineNo'
        ? { label: fields.label(name), kind: 'num' }
        : { label: fields.label(name) },
    ];
  });
  // Without an amount field the side is all a line says of its amount.
  if (amountField === undefined) headers.push({ label: 'Debit/credit' });
  const rows = journal.lines.map((line) => {
    const cells = shown.flatMap((name): HtmlValue[] => {
      if (name !== amountField) return [cellText(line[name])];
      const value = lineAmount(line, fields);
      if (value === undefined) return ['', ''];
      const amount = amountHtml(magnitudeOf(value.amount), value.currency);
      return value.drCr === 'DR' ? [amount, ''] : ['', amount];
    });
    return amountField === undefined ? [...cells, line.drCr] : cells;
  });
  const amounts = journal.lines
    .map((line) => lineAmount(line, fields))
    .filter((line): line is LineAmount => line !== undefined);
  const side = (drCr: 'DR' | 'CR') =>
    currencySumsHtml(
      sumsByCurrency(
        amounts
          .filter((line) => line.drCr === drCr)
          .map((line) => ({ amount: magnitudeOf(line.amount), currency: line.currency })),
      ),
    );
  const totalAt = shown.findIndex((name) => name !== amountField);
  const footer =
    amountField === undefined
      ? []
      : [
          shown.flatMap((name, i): HtmlValue[] =>
            name === amountField
              ? [side('DR'), side('CR')]
              : [i === totalAt ? html`<strong>Total</strong>` : ''],
          ),
        ];
  return table('journal-lines', headers, rows, footer);
}

/**
 * What a journal is to a reversal, as a list shows it beside the journal's status: a reversal
 * journal (automatic, or a correction made by a reversal request) names the journal it reverses;
 * a journal reversed names its reversal journal. `withdrawnBy` is the correction that withdrew
 * it; `reversedBy` its reversal, which is its automatic reversal when its type has one.
 */
function reversalMarkHtml(journal: JournalView): Html | string {
  if (journal.reverses !== null)
    return html`<span class="badge reversal">Reversal</span> <span class="relation">of journal ${journalShortLink(journal.reverses)}</span>`;
  const reversal = journal.withdrawnBy ?? journal.reversedBy;
  if (reversal === null) return '';
  return html`<span class="badge reversed">Reversed</span> <span class="relation">by journal ${journalShortLink(reversal)}</span>`;
}

/**
 * The journal's place in a reversal, on its own page: a notice at the top that says what it
 * reverses, or what reversed it, with the links both ways and to the reversal request.
 */
function reversalNoticeHtml(journal: JournalView): Html | string {
  const request =
    journal.reversalId === null
      ? ''
      : html` It was made by the <a href="/admin/reversals/${encodeURIComponent(journal.reversalId)}">reversal request ${journal.reversalId}</a>.`;
  if (journal.reverses !== null)
    return html`<div class="notice info reversal-note" id="reversal-note"><span class="badge reversal">Reversal</span> <strong>Reverses journal ${journalLink(journal.reverses)}</strong>: the same lines on the other side.${request}${journal.reversalId === null ? ' It is the automatic reversal its journal type makes.' : ''}</div>`;
  const parts: Html[] = [];
  if (journal.withdrawnBy !== null)
    parts.push(
      html`<strong>Reversed by journal ${journalLink(journal.withdrawnBy)}</strong>, a correction: it no longer counts.`,
    );
  if (journal.reversedBy !== null && journal.reversedBy !== journal.withdrawnBy)
    parts.push(html`Its automatic reversal is journal ${journalLink(journal.reversedBy)}.`);
  if (parts.length === 0) return '';
  return html`<div class="notice info reversal-note" id="reversal-note"><span class="badge reversed">Reversed</span> ${parts.map((part, i) => html`${i === 0 ? '' : ' '}${part}`)}</div>`;
}

/** A date filter as the API takes it, or undefined (and shown back as typed) when it is none. */
function dayFilter(value: string | undefined): string | undefined {
  return value !== undefined && isCalendarDay(value) ? value : undefined;
}

/** Who may open the journal pages: every page of this group. */
const permission = { adminPermission: 'journals:read' as const };

/** Journals (filtered as the API filters them), one journal with its lines, balances, processing errors. */
export function journalPages(app: FastifyInstance, services: Pick<Services, 'journals' | 'snapshots'>): void {
  registerJournalListPage(app, services);
  registerJournalPage(app, services);
  registerBalancesPage(app, services);
  registerProcessingErrorsPage(app, services);
}

/** `/admin/journals`: the journals by status, accounting configuration, session and core dates. */
function registerJournalListPage(
  app: FastifyInstance,
  services: Pick<Services, 'journals' | 'snapshots'>,
): void {
  app.get('/admin/journals', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const status = queryText(request, 'status');
    const typed = { from: queryText(request, 'from'), to: queryText(request, 'to') };
    const query = {
      status: keepsRule(JournalStatusFilter, status) ? status : undefined,
      ingestionId: queryText(request, 'ingestionId'),
      accountingConfig: queryText(request, 'accountingConfig'),
      from: dayFilter(typed.from),
      to: dayFilter(typed.to),
    };
    const notDays = (['from', 'to'] as const).filter(
      (name) => typed[name] !== undefined && query[name] === undefined,
    );
    const filter = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
    const [{ rows, total }, fields] = await Promise.all([
      services.journals.list(filter, pageNo, limit),
      currentJournalFields(services),
    ]);
    const body = html`<form method="get" class="filters" action="/admin/journals">
  <label>Status <select name="status"><option value="">any</option>${JOURNAL_STATUSES.map((s) => html`<option${s === query.status ? html` selected` : ''}>${s}</option>`)}</select></label>
  <label>${fields.labelOf('accountingConfig', 'Accounting configuration')} <input name="accountingConfig" value="${query.accountingConfig ?? ''}"></label>
  <label>Ingestion <input name="ingestionId" value="${query.ingestionId ?? ''}"></label>
  ${dateField('From', 'from', typed.from, { invalid: notDays.includes('from') })}
  ${dateField('To (exclusive)', 'to', typed.to, { invalid: notDays.includes('to') })}
  <button type="submit">Filter</button>
</form>
${notDays.length === 0 ? '' : notice('error', html`${notDays.map((name) => html`<p>${name === 'from' ? 'From' : 'To'}: ${typed[name] ?? ''} is not a date YYYY-MM-DD; the list is not filtered by it.</p>`)}`)}
${
  rows.length === 0
    ? emptyState(
        Object.keys(filter).length > 0
          ? 'No journal matches these filters. Widen the dates or clear the filters.'
          : 'No journal yet. Journals are made when ledger records are ingested and processed.',
      )
    : html`${table(
        'journals',
        [
          'Journal',
          fields.labelOf('coreDate', 'Core date'),
          'Status',
          fields.labelOf('journalType', 'Journal type'),
          fields.labelOf('accountingConfig', 'Accounting configuration'),
          { label: 'Lines', kind: 'num' },
          { label: 'Total (debit = credit)', kind: 'num' },
          { label: 'Node', kind: 'long' },
        ],
        rows.map((j) => [
          html`<a class="id" href="/admin/journals/${encodeURIComponent(j.journalId)}">${j.journalId}</a>`,
          html`<span class="nowrap">${j.coreDate}</span>`,
          html`<span class="badge ${j.status}">${j.status}</span> ${reversalMarkHtml(j)}`,
          j.journalType,
          j.accountingConfig,
          formatCount(j.lines.length),
          journalTotal(j, fields),
          nodeHtml(j.node, fields),
        ]),
      )}${pagination('/admin/journals', query, pageNo, limit, total)}`
}`;
    return sendPage(reply, page(context, 'Journals', body));
  });
}

/** `/admin/journals/:id`: one journal, its place in a reversal, and its lines. */
function registerJournalPage(app: FastifyInstance, services: Pick<Services, 'journals' | 'snapshots'>): void {
  app.get<{ Params: { id: string } }>(
    '/admin/journals/:id',
    { config: permission },
    async (request, reply) => {
      const context = contextOf(request);
      const [journal, fields] = await Promise.all([
        services.journals.get(request.params.id),
        currentJournalFields(services),
      ]);
      const body = html`${reversalNoticeHtml(journal)}<dl class="facts">
  <dt>Status</dt><dd><span class="badge ${journal.status}">${journal.status}</span>${journal.reverses === null ? '' : html` <span class="badge reversal">Reversal</span>`}${(journal.withdrawnBy ?? journal.reversedBy) === null ? '' : html` <span class="badge reversed">Reversed</span>`}</dd>
  <dt>${fields.labelOf('coreDate', 'Core date')}</dt><dd>${journal.coreDate}${journal.originalCoreDate === null || journal.originalCoreDate === journal.coreDate ? '' : ` (originally ${journal.originalCoreDate})`}</dd>
  <dt>${fields.labelOf('journalType', 'Journal type')}</dt><dd>${journal.journalType}</dd>
  <dt>${fields.labelOf('accountingConfig', 'Accounting configuration')}</dt><dd>${journal.accountingConfig}</dd>
  <dt>Node</dt><dd>${nodeHtml(journal.node, fields)}</dd>
  <dt>${fields.labelOf('ingestionId', 'Ingestion')}</dt><dd><a href="/admin/ingestions/${encodeURIComponent(journal.ingestionId)}">${journal.ingestionId}</a></dd>
  ${journal.reverses === null ? '' : html`<dt>${fields.labelOf('reverses', 'Reverses')}</dt><dd>journal ${journalLink(journal.reverses)}</dd>`}
  ${journal.reversedBy === null ? '' : html`<dt>${fields.labelOf('reversedBy', 'Reversed by')}</dt><dd>journal ${journalLink(journal.reversedBy)}</dd>`}
  ${journal.withdrawnBy === null ? '' : html`<dt>Withdrawn by</dt><dd>journal ${journalLink(journal.withdrawnBy)} (a correction)</dd>`}
  ${journal.reversalId === null ? '' : html`<dt>Made by reversal</dt><dd><a href="/admin/reversals/${encodeURIComponent(journal.reversalId)}">${journal.reversalId}</a></dd>`}
  ${originHtml(journal, fields)}
  <dt>Total (debit = credit)</dt><dd>${journalTotal(journal, fields)}</dd>
</dl>
${context.principal.permissions.has('journals:reverse') && journal.withdrawnBy === null && journal.reverses === null ? html`<p><a class="button" id="reverse" href="/admin/journals/${encodeURIComponent(journal.journalId)}/reverse">Reverse…</a> <span class="muted">shows what the reversal would do, then asks for the reason</span></p>` : ''}
<h2>Lines</h2>
${linesTable(journal, fields)}`;
      return sendPage(reply, page(context, `Journal ${journal.journalId}`, body));
    },
  );
}

/** `/admin/balances`: the balances of posted journals as of a day, by side, with their totals. */
function registerBalancesPage(
  app: FastifyInstance,
  services: Pick<Services, 'journals' | 'snapshots'>,
): void {
  app.get('/admin/balances', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const typedAsOf = queryText(request, 'asOf');
    const query = {
      asOf: dayFilter(typedAsOf),
      accountingConfig: queryText(request, 'accountingConfig'),
      account: queryText(request, 'account'),
      currency: queryText(request, 'currency'),
    };
    const filter = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
    const [rows, fields] = await Promise.all([
      services.journals.balances(filter),
      currentJournalFields(services),
    ]);
    const body = html`<form method="get" class="filters" action="/admin/balances">
  ${dateField('As of', 'asOf', typedAsOf, { invalid: typedAsOf !== query.asOf })}
  <label>${fields.labelOf('accountingConfig', 'Accounting configuration')} <input name="accountingConfig" value="${query.accountingConfig ?? ''}"></label>
  <label>${fields.labelOf('account', 'Account')} <input name="account" value="${query.account ?? ''}"></label>
  <label>${fields.labelOf('transactionCurrency', 'Currency')} <input name="currency" value="${query.currency ?? ''}"></label>
  <button type="submit">Show</button>
</form>
${typedAsOf === query.asOf ? '' : notice('error', html`<p>As of: ${typedAsOf ?? ''} is not a date YYYY-MM-DD; the balances are as of today.</p>`)}
<p class="muted">Sums of posted journals${query.asOf === undefined ? '' : ` with core date on or before ${query.asOf}`}: a debit balance in the Debit column, a credit balance in the Credit column. The totals add up every balance listed, per ${fields.labelOf('accountingConfig', 'accounting configuration').toLowerCase()} and currency; over every account they are equal.</p>
${
  rows.length === 0
    ? emptyState('No balance: no posted journal matches. Pick a later date or clear the filters.')
    : table(
        'balances',
        [
          fields.labelOf('accountingConfig', 'Accounting configuration'),
          fields.labelOf('account', 'Account'),
          { label: 'Debit', kind: 'num' },
          { label: 'Credit', kind: 'num' },
          { label: 'Node', kind: 'long' },
        ],
        rows.map((b) => {
          const credit = isCreditBalance(b.balance);
          const amount = amountHtml(credit ? magnitudeOf(b.balance) : b.balance, b.currency);
          return [
            b.accountingConfig,
            b.account,
            credit ? '' : amount,
            credit ? amount : '',
            nodeHtml(b.node, fields),
          ];
        }),
        balanceTotals(rows).map((t) => [
          t.accountingConfig,
          html`<strong class="nowrap">Total ${t.currency}</strong>`,
          totalHtml(t.debit, t.currency),
          totalHtml(t.credit, t.currency),
          html`<span class="muted">every node listed</span>`,
        ]),
      )
}`;
    return sendPage(reply, page(context, 'Balances', body));
  });
}

/** `/admin/processing-errors`: the records that produced no journal, with the way to reprocess them. */
function registerProcessingErrorsPage(app: FastifyInstance, services: Pick<Services, 'journals'>): void {
  app.get('/admin/processing-errors', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const state = queryText(request, 'state');
    const query = {
      ingestionId: queryText(request, 'ingestionId'),
      code: queryText(request, 'code'),
      state: keepsRule(ProcessingErrorStateFilter, state) ? state : undefined,
    };
    const filter = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
    const { rows, total } = await services.journals.processingErrors(filter, pageNo, limit);
    // "Reprocess…" shows the dry run of the open errors of these filters before the run.
    const selection = new URLSearchParams(
      Object.entries({ ingestionId: query.ingestionId, code: query.code }).filter(
        (e): e is [string, string] => e[1] !== undefined,
      ),
    ).toString();
    const body = html`<form method="get" class="filters" action="/admin/processing-errors">
  <label>Ingestion <input name="ingestionId" value="${query.ingestionId ?? ''}"></label>
  <label>Code <input name="code" value="${query.code ?? ''}"></label>
  <label>State <select name="state">${(['open', 'queued', 'closed'] as const).map((s) => html`<option${s === (query.state ?? 'open') ? html` selected` : ''}>${s}</option>`)}</select></label>
  <button type="submit">Filter</button>
</form>
${context.principal.permissions.has('configuration:write') && (query.state ?? 'open') === 'open' ? html`<p><a class="button" id="reprocess" href="/admin/processing-errors/reprocess${selection === '' ? '' : `?${selection}`}">Reprocess…</a> <span class="muted">shows what a run would do before it starts</span></p>` : ''}
${
  rows.length === 0
    ? emptyState('No processing error. Records that cannot be turned into journals are listed here.')
    : html`${table(
        'processing-errors',
        [
          'When',
          'Ingestion',
          'Entity',
          'Code',
          { label: 'Attempts', kind: 'num' },
          { label: 'Message', kind: 'long' },
          { label: 'Record', kind: 'long' },
        ],
        rows.map((e) => [
          when(e.at),
          html`<a href="/admin/ingestions/${encodeURIComponent(e.ingestionId)}">${e.ingestionId}</a>`,
          html`<span class="id">${e.namespace}/${e.entity}</span>`,
          html`<span class="id">${e.code}</span>`,
          String(e.attempts),
          e.message,
          html`<code>${JSON.stringify(e.record).slice(0, 300)}</code>`,
        ]),
      )}${pagination('/admin/processing-errors', query, pageNo, limit, total)}`
}`;
    return sendPage(reply, page(context, 'Processing errors', body));
  });
}
