import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { keepsRule } from '../../../lib/input-rule.js';
import { SESSION_STATES, SessionStateFilter } from '../../../modules/ingestion/inputs.js';
import type { SessionState } from '../../../modules/ingestion/session.js';
import type { ChunkSummary, SessionErrorRow } from '../../../modules/ingestion/store.js';
import { type Html, html } from '../html.js';
import {
  csrfField,
  DEFAULT_PAGING_KEYS,
  emptyState,
  notice,
  type PagingKeys,
  page,
  pagination,
  table,
  when,
} from '../layout.js';
import { formatCount } from '../money.js';
import { actorOf, contextOf, pagingOf, queryText, sendPage } from '../request.js';

/** How often the browser refreshes a list or session while something is open. */
const OPEN_SESSION_REFRESH_SECONDS = 5;
/** The session page lists failed records (`page`, `limit`) and, paged apart, its chunks. */
const CHUNK_PAGING_KEYS: PagingKeys = { page: 'chunksPage', limit: 'chunksLimit' };

/** The state filter of the list; any other text is no filter. */
function stateOf(text: string | undefined): SessionState | undefined {
  return keepsRule(SessionStateFilter, text) ? text : undefined;
}

/** Ingestion sessions with their counters, refreshed while open; one session's failed records; close. */
export function ingestionPages(app: FastifyInstance, services: Pick<Services, 'ingestion'>): void {
  registerSessionListPage(app, services);
  registerSessionPage(app, services);
  registerCloseSessionAction(app, services);
}

/** `/admin/ingestions`: the sessions by state, namespace and entity, refreshed while any is open. */
function registerSessionListPage(app: FastifyInstance, services: Pick<Services, 'ingestion'>): void {
  app.get('/admin/ingestions', { config: { adminPermission: 'ingestion:read' } }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const state = stateOf(queryText(request, 'state'));
    const namespace = queryText(request, 'namespace');
    const entity = queryText(request, 'entity');
    const filter = {
      ...(state === undefined ? {} : { state }),
      ...(namespace === undefined ? {} : { namespace }),
      ...(entity === undefined ? {} : { entity }),
    };
    const { rows, total } = await services.ingestion.listSessions(filter, pageNo, limit);
    const anyOpen = rows.some((s) => s.state === 'pending' || s.processingStatus === 'processing');
    const refresh = anyOpen
      ? html` hx-get="${request.url}" hx-trigger="every ${OPEN_SESSION_REFRESH_SECONDS}s" hx-select="#sessions-region" hx-swap="outerHTML"`
      : '';
    const body = html`<form method="get" class="filters" action="/admin/ingestions">
  <label>State <select name="state"><option value="">any</option>${SESSION_STATES.map((s) => html`<option${s === state ? html` selected` : ''}>${s}</option>`)}</select></label>
  <label>Namespace <input name="namespace" value="${namespace ?? ''}"></label>
  <label>Entity <input name="entity" value="${entity ?? ''}"></label>
  <button type="submit">Filter</button>
</form>
<div id="sessions-region"${refresh}>
${
  rows.length === 0
    ? emptyState(
        Object.keys(filter).length > 0
          ? 'No session matches these filters. Clear them to see every session.'
          : html`No ingestion session yet. Programs open one with <code>POST /api/v1/ingestions</code> (or <code>ledgerflow ingest</code>) using an API credential.`,
      )
    : html`${table(
        'sessions',
        [
          'Session',
          'Entity',
          'State',
          'Processing',
          'Opened',
          { label: 'Chunks', kind: 'num' },
          { label: 'Rows', kind: 'num' },
          { label: 'Accepted', kind: 'num' },
          { label: 'Failed', kind: 'num' },
        ],
        rows.map((s) => [
          html`<a href="/admin/ingestions/${encodeURIComponent(s.ingestionId)}">${s.ingestionName ?? s.ingestionId}</a>`,
          html`<span class="id">${s.namespace}/${s.entity}</span>`,
          html`<span class="badge ${s.state}">${s.state}</span>`,
          html`<span class="badge ${s.processingStatus}">${s.processingStatus}</span>`,
          when(s.openedOn),
          formatCount(s.chunks),
          formatCount(s.totalRows),
          formatCount(s.successRows),
          formatCount(s.failedRows),
        ]),
      )}${pagination('/admin/ingestions', { state, namespace, entity }, pageNo, limit, total)}`
}
</div>`;
    return sendPage(reply, page(context, 'Ingestion sessions', body));
  });
}

/** `/admin/ingestions/:id`: one session with its counters, refreshed while it is open or processing. */
function registerSessionPage(app: FastifyInstance, services: Pick<Services, 'ingestion'>): void {
  app.get<{ Params: { id: string } }>(
    '/admin/ingestions/:id',
    { config: { adminPermission: 'ingestion:read' } },
    async (request, reply) => {
      const context = contextOf(request);
      const { page: pageNo, limit } = pagingOf(request);
      const chunkPaging = pagingOf(request, CHUNK_PAGING_KEYS);
      const session = await services.ingestion.getSession(request.params.id);
      const [{ rows, total }, chunks] = await Promise.all([
        services.ingestion.listErrors(session.ingestionId, pageNo, limit),
        services.ingestion.listChunks(session.ingestionId, chunkPaging.page, chunkPaging.limit),
      ]);
      const sessionPath = `/admin/ingestions/${encodeURIComponent(session.ingestionId)}`;
      const canClose = session.state === 'pending' && context.principal.permissions.has('ingestion:write');
      const live = session.state === 'pending' || session.processingStatus === 'processing';
      const body = html`<div id="session-region"${live ? html` hx-get="${request.url}" hx-trigger="every ${OPEN_SESSION_REFRESH_SECONDS}s" hx-select="#session-region" hx-swap="outerHTML"` : ''}>
${queryText(request, 'closed') === undefined ? '' : notice('info', 'The session is closed.')}
<dl class="facts">
  <dt>Id</dt><dd><code>${session.ingestionId}</code></dd>
  <dt>Name</dt><dd>${session.ingestionName ?? '—'}</dd>
  <dt>Entity</dt><dd>${session.namespace}/${session.entity}</dd>
  <dt>State</dt><dd><span class="badge ${session.state}">${session.state}</span>${session.closeReason === null ? '' : ` (${session.closeReason})`}</dd>
  <dt>Processing</dt><dd><span class="badge ${session.processingStatus}">${session.processingStatus}</span></dd>
  <dt>Opened</dt><dd>${when(session.openedOn)} by ${session.openedBy}</dd>
  <dt>Closed</dt><dd>${when(session.closedOn)}${session.closedBy === null ? '' : ` by ${session.closedBy}`}</dd>
  <dt>Last activity</dt><dd>${when(session.lastActivityOn)} (timeout ${session.timeout})</dd>
  <dt>Counters</dt><dd>${formatCount(session.chunks)} chunks · ${formatCount(session.totalRows)} rows · ${formatCount(session.successRows)} accepted · ${formatCount(session.failedRows)} failed</dd>
</dl>
${
  canClose
    ? html`<form method="post" action="/admin/ingestions/${encodeURIComponent(session.ingestionId)}/close">${csrfField(context)}<button type="submit">Close the session</button></form>`
    : ''
}
<p><a href="/admin/journals?ingestionId=${encodeURIComponent(session.ingestionId)}">Its journals</a>${
        context.principal.permissions.has('journals:reverse')
          ? html` · <a class="button" id="reverse" href="${sessionPath}/reverse">Reverse its journals…</a> <span class="muted">shows what the reversal would do, then asks for the reason</span>`
          : ''
      }</p>
${sessionListsHtml(sessionPath, chunks, chunkPaging, { rows, total }, { page: pageNo, limit })}
</div>`;
      return sendPage(reply, page(context, `Session ${session.ingestionName ?? session.ingestionId}`, body));
    },
  );
}

/** A session's chunks and its failed records, each list paged apart. */
function sessionListsHtml(
  sessionPath: string,
  chunks: { rows: readonly ChunkSummary[]; total: number },
  chunkPaging: { page: number; limit: number },
  { rows, total }: { rows: readonly SessionErrorRow[]; total: number },
  { page: pageNo, limit }: { page: number; limit: number },
): Html {
  // Each list's pager keeps where the other list is.
  const errorsAt = { page: String(pageNo), limit: String(limit) };
  const chunksAt = {
    [CHUNK_PAGING_KEYS.page]: String(chunkPaging.page),
    [CHUNK_PAGING_KEYS.limit]: String(chunkPaging.limit),
  };
  return html`<h2>Chunks</h2>
${
  chunks.rows.length === 0
    ? emptyState('No chunk received yet.')
    : html`${table(
        'chunks',
        [
          { label: 'Chunk', kind: 'num' },
          { label: 'Name', kind: 'long' },
          'Outcome',
          { label: 'Accepted', kind: 'num' },
          { label: 'Failed', kind: 'num' },
          { label: 'Idempotency key', kind: 'long' },
          'Answered',
        ],
        chunks.rows.map((c) => [
          c.chunkSeq,
          c.chunkName ?? '—',
          html`<span class="badge ${c.kind}">${c.kind}</span>`,
          formatCount(c.acceptedRows),
          formatCount(c.failedRows),
          c.idempotencyKey === null ? '—' : html`<code>${c.idempotencyKey}</code>`,
          when(c.answeredAt),
        ]),
      )}${pagination(sessionPath, errorsAt, chunkPaging.page, chunkPaging.limit, chunks.total, CHUNK_PAGING_KEYS, 'Pages of chunks')}`
}
<h2>Failed records</h2>
${
  rows.length === 0
    ? emptyState('No record of this session failed.')
    : html`${table(
        'failed-records',
        [
          { label: 'Chunk', kind: 'num' },
          { label: 'Index', kind: 'num' },
          'Kind',
          { label: 'Errors', kind: 'long' },
          { label: 'Record', kind: 'long' },
        ],
        rows.map((r) => [
          r.chunkSeq,
          r.index,
          html`<span class="id">${r.kind}</span>`,
          html`<ul class="errors">${r.errors.map((e) => html`<li><code>${e.field || '(record)'}</code> ${e.message}</li>`)}</ul>`,
          html`<code>${r.record.length > 300 ? `${r.record.slice(0, 300)}…` : r.record}</code>`,
        ]),
      )}${pagination(sessionPath, chunksAt, pageNo, limit, total, DEFAULT_PAGING_KEYS, 'Pages of failed records')}`
}`;
}

/** `POST /admin/ingestions/:id/close`: closes a session by hand. */
function registerCloseSessionAction(app: FastifyInstance, services: Pick<Services, 'ingestion'>): void {
  app.post<{ Params: { id: string } }>(
    '/admin/ingestions/:id/close',
    { config: { adminPermission: 'ingestion:write' } },
    async (request, reply) => {
      const session = await services.ingestion.closeSession(request.params.id, actorOf(request));
      return reply.redirect(`/admin/ingestions/${encodeURIComponent(session.ingestionId)}?closed=1`, 303);
    },
  );
}
