import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../services.js';
import { html } from '../html.js';
import { emptyState, page, pagination, table, when } from '../layout.js';
import { contextOf, pagingOf, queryText, sendPage } from '../plugin.js';

function nodeText(node: Record<string, string>): string {
  return Object.entries(node)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** Journals (filtered as the API filters them), one journal with its lines, balances, processing errors. */
export function journalPages(app: FastifyInstance, services: Services): void {
  const permission = { adminPermission: 'journals:read' as const };

  app.get('/admin/journals', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const status = queryText(request, 'status');
    const query = {
      status: status === 'posted' || status === 'unposted' ? status : undefined,
      ingestionId: queryText(request, 'ingestionId'),
      accountingConfig: queryText(request, 'accountingConfig'),
      from: queryText(request, 'from'),
      to: queryText(request, 'to'),
    };
    const filter = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
    const { rows, total } = await services.journals.list(filter, pageNo, limit);
    const body = html`<form method="get" class="filters" action="/admin/journals">
  <label>Status <select name="status"><option value="">any</option>${['posted', 'unposted'].map((s) => html`<option${s === query.status ? html` selected` : ''}>${s}</option>`)}</select></label>
  <label>Accounting configuration <input name="accountingConfig" value="${query.accountingConfig ?? ''}"></label>
  <label>Ingestion <input name="ingestionId" value="${query.ingestionId ?? ''}"></label>
  <label>From <input type="date" name="from" value="${query.from ?? ''}"></label>
  <label>To (exclusive) <input type="date" name="to" value="${query.to ?? ''}"></label>
  <button type="submit">Filter</button>
</form>
${
  rows.length === 0
    ? emptyState(
        Object.keys(filter).length > 0
          ? 'No journal matches these filters. Widen the dates or clear the filters.'
          : 'No journal yet. Journals are made when ledger records are ingested and processed.',
      )
    : html`${table(
        'journals',
        ['Journal', 'Core date', 'Status', 'Type', 'Accounting configuration', 'Node', 'Lines'],
        rows.map((j) => [
          html`<a href="/admin/journals/${encodeURIComponent(j.journalId)}">${j.journalId}</a>`,
          j.coreDate,
          html`<span class="badge ${j.status}">${j.status}</span>`,
          j.journalType,
          j.accountingConfig,
          nodeText(j.node),
          j.lines.length,
        ]),
      )}${pagination('/admin/journals', query, pageNo, limit, total)}`
}`;
    return sendPage(reply, page(context, 'Journals', body));
  });

  app.get<{ Params: { id: string } }>(
    '/admin/journals/:id',
    { config: permission },
    async (request, reply) => {
      const context = contextOf(request);
      const journal = await services.journals.get(request.params.id);
      const columns = [...new Set(journal.lines.flatMap((line) => Object.keys(line)))];
      const body = html`<dl class="facts">
  <dt>Status</dt><dd><span class="badge ${journal.status}">${journal.status}</span></dd>
  <dt>Core date</dt><dd>${journal.coreDate}${journal.originalCoreDate === null ? '' : ` (originally ${journal.originalCoreDate})`}</dd>
  <dt>Type</dt><dd>${journal.journalType}</dd>
  <dt>Accounting configuration</dt><dd>${journal.accountingConfig}</dd>
  <dt>Node</dt><dd>${nodeText(journal.node)}</dd>
  <dt>Ingestion</dt><dd><a href="/admin/ingestions/${encodeURIComponent(journal.ingestionId)}">${journal.ingestionId}</a></dd>
  ${journal.reverses === null ? '' : html`<dt>Reverses</dt><dd><a href="/admin/journals/${encodeURIComponent(journal.reverses)}">${journal.reverses}</a></dd>`}
  ${journal.reversedBy === null ? '' : html`<dt>Reversed by</dt><dd><a href="/admin/journals/${encodeURIComponent(journal.reversedBy)}">${journal.reversedBy}</a></dd>`}
</dl>
<h2>Lines</h2>
${table(
  'journal-lines',
  columns,
  journal.lines.map((line) => columns.map((c) => cellText(line[c]))),
)}`;
      return sendPage(reply, page(context, `Journal ${journal.journalId}`, body));
    },
  );

  app.get('/admin/balances', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const query = {
      asOf: queryText(request, 'asOf'),
      accountingConfig: queryText(request, 'accountingConfig'),
      account: queryText(request, 'account'),
      currency: queryText(request, 'currency'),
    };
    const filter = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
    const rows = await services.journals.balances(filter);
    const body = html`<form method="get" class="filters" action="/admin/balances">
  <label>As of <input type="date" name="asOf" value="${query.asOf ?? ''}"></label>
  <label>Accounting configuration <input name="accountingConfig" value="${query.accountingConfig ?? ''}"></label>
  <label>Account <input name="account" value="${query.account ?? ''}"></label>
  <label>Currency <input name="currency" value="${query.currency ?? ''}"></label>
  <button type="submit">Show</button>
</form>
<p class="muted">Sums of posted journals${query.asOf === undefined ? '' : ` with core date on or before ${query.asOf}`}.</p>
${
  rows.length === 0
    ? emptyState('No balance: no posted journal matches. Pick a later date or clear the filters.')
    : table(
        'balances',
        ['Accounting configuration', 'Node', 'Account', 'Currency', 'Balance'],
        rows.map((b) => [
          b.accountingConfig,
          nodeText(b.node),
          b.account,
          b.currency,
          html`<span class="num">${b.balance}</span>`,
        ]),
      )
}`;
    return sendPage(reply, page(context, 'Balances', body));
  });

  app.get('/admin/processing-errors', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const query = { ingestionId: queryText(request, 'ingestionId'), code: queryText(request, 'code') };
    const filter = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
    const { rows, total } = await services.journals.processingErrors(filter, pageNo, limit);
    const body = html`<form method="get" class="filters" action="/admin/processing-errors">
  <label>Ingestion <input name="ingestionId" value="${query.ingestionId ?? ''}"></label>
  <label>Code <input name="code" value="${query.code ?? ''}"></label>
  <button type="submit">Filter</button>
</form>
${
  rows.length === 0
    ? emptyState('No processing error. Records that cannot be turned into journals are listed here.')
    : html`${table(
        'processing-errors',
        ['When', 'Ingestion', 'Entity', 'Code', 'Message', 'Record'],
        rows.map((e) => [
          when(e.at),
          html`<a href="/admin/ingestions/${encodeURIComponent(e.ingestionId)}">${e.ingestionId}</a>`,
          `${e.namespace}/${e.entity}`,
          e.code,
          e.message,
          html`<code>${JSON.stringify(e.record).slice(0, 300)}</code>`,
        ]),
      )}${pagination('/admin/processing-errors', query, pageNo, limit, total)}`
}`;
    return sendPage(reply, page(context, 'Processing errors', body));
  });
}
