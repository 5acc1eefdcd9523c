import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { keepsRule } from '../../../lib/input-rule.js';
import { RevisionText } from '../../../modules/configuration/inputs.js';
import type { RevisionDiff } from '../../../modules/configuration/revisions.js';
import { type Html, html } from '../html.js';
import { emptyState, notice, page, pagination, table, when } from '../layout.js';
import { AdminPageError, contextOf, pagingOf, queryText, sendPage } from '../request.js';

/** Characters of a value shown in a change's row; the whole value is in the revision's download. */
const VALUE_SHOWN_CHARS_MAX = 300;

function valueText(value: unknown): Html {
  if (value === undefined) return html`<span class="muted">—</span>`;
  const text = JSON.stringify(value) ?? String(value);
  return html`<code>${text.length > VALUE_SHOWN_CHARS_MAX ? `${text.slice(0, VALUE_SHOWN_CHARS_MAX)}…` : text}</code>`;
}

/** A revision number from a path or query parameter; a page error for anything else. */
function revisionOf(text: string | undefined, what: string): number | undefined {
  if (text === undefined) return undefined;
  if (!keepsRule(RevisionText, text) || Number(text) < 1) {
    throw new AdminPageError(
      400,
      'No such revision',
      `${what} must be a revision number, such as 3.`,
      'Pick a revision from the list.',
    );
  }
  return Number(text);
}

function changesOf(diff: RevisionDiff): Html {
  if (diff.changes.length === 0) return emptyState('The two revisions hold the same configuration.');
  return html`${table(
    'revision-changes',
    ['Path', 'Change', 'Before', 'After'],
    diff.changes.map((c) => [html`<code>${c.path}</code>`, c.kind, valueText(c.old), valueText(c.new)]),
  )}${diff.truncated ? notice('warning', `Only the first ${diff.changes.length} changes are listed.`) : ''}`;
}

/**
 * Configuration revisions: the list (newest first), and one revision's changes against the
 * revision before it or another one chosen, with its download.
 */
export function revisionPages(app: FastifyInstance, services: Pick<Services, 'revisions'>): void {
  app.get(
    '/admin/configuration/revisions',
    { config: { adminPermission: 'configuration:read' } },
    async (request, reply) => {
      const context = contextOf(request);
      const { page: pageNo, limit } = pagingOf(request);
      const { rows, total } = await services.revisions.list(pageNo, limit);
      const body =
        rows.length === 0
          ? emptyState('No configuration revision yet. Every upload and wipe makes one.')
          : html`${table(
              'revisions',
              [{ label: 'Revision', kind: 'num' }, 'When', 'Who', 'Action', 'SHA-256', 'Changes'],
              rows.map((r) => [
                r.revision,
                when(r.at),
                r.actor ?? '—',
                r.action,
                html`<code title="${r.sha256}">${r.sha256.slice(0, 12)}</code>`,
                html`<a href="/admin/configuration/revisions/${r.revision}">Changes of revision ${r.revision}</a>`,
              ]),
            )}${pagination('/admin/configuration/revisions', {}, pageNo, limit, total)}`;
      return sendPage(reply, page(context, 'Configuration revisions', body));
    },
  );

  app.get(
    '/admin/configuration/revisions/:revision',
    { config: { adminPermission: 'configuration:read' } },
    async (request, reply) => {
      const context = contextOf(request);
      const revision = revisionOf((request.params as { revision: string }).revision, 'The revision') ?? 0;
      const from = revisionOf(queryText(request, 'from'), 'The revision to compare from');
      const diff = await services.revisions.diff(revision, from);
      const against =
        diff.from === null
          ? 'the empty configuration (no revision is kept before it)'
          : html`revision ${diff.from.revision} (${diff.from.action}, ${when(diff.from.at)})`;
      const body = html`<section class="card">
<p>Revision ${diff.to.revision}: ${diff.to.action} by ${diff.to.actor ?? 'an unrecorded author'}, ${when(diff.to.at)}. Compared with ${against}.</p>
<form method="get" action="/admin/configuration/revisions/${diff.to.revision}">
  <label>Compare with revision <input name="from" inputmode="numeric" pattern="\\d+" size="8" value="${diff.from?.revision ?? ''}"></label>
  <button type="submit">Compare</button>
</form>
<p><a href="/admin/configuration/revisions/${diff.to.revision}/download" download>Download revision ${diff.to.revision} (JSON)</a> · <a href="/admin/configuration/revisions">All revisions</a></p>
</section>
${changesOf(diff)}`;
      return sendPage(reply, page(context, `Changes of revision ${diff.to.revision}`, body));
    },
  );

  app.get(
    '/admin/configuration/revisions/:revision/download',
    { config: { adminPermission: 'configuration:read' } },
    async (request, reply) => {
      const revision = revisionOf((request.params as { revision: string }).revision, 'The revision') ?? 0;
      const { text } = await services.revisions.download(revision, contextOf(request).principal.user.email);
      return reply
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="configuration-revision-${revision}.json"`)
        .type('application/json')
        .send([...text].join(''));
    },
  );
}
