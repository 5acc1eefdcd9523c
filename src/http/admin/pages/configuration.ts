import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { AppError } from '../../../lib/errors.js';
import { keepsRule } from '../../../lib/input-rule.js';
import { CONFIGURATION_BODY_BYTES_MAX, RevisionText } from '../../../modules/configuration/inputs.js';
import type { ProcessingDataCounts } from '../../../modules/configuration/store.js';
import { type Html, html } from '../html.js';
import { csrfField, emptyState, notice, type PageContext, page, pagination, table, when } from '../layout.js';
import { AdminPageError, contextOf, formOf, pagingOf, sendPage } from '../request.js';

/**
 * Largest form that carries a configuration document: the API's document limit, with room for
 * the form encoding (which can triple the size of JSON punctuation).
 */
const CONFIGURATION_FORM_BYTES_MAX = 3 * CONFIGURATION_BODY_BYTES_MAX;

function counts(c: ProcessingDataCounts): Html {
  return html`<ul class="counts"><li>${c.ingestions} ingestion sessions</li><li>${c.records} records</li><li>${c.journals} journals with ${c.journalLines} journal lines</li><li>${c.processingErrors} processing errors</li></ul>`;
}

function isNothing(c: ProcessingDataCounts): boolean {
  return c.ingestions + c.records + c.journals + c.journalLines + c.processingErrors === 0;
}

function uploadForm(context: PageContext, documentText: string): Html {
  return html`<form method="post" action="/admin/configuration/check" class="card">
  ${csrfField(context)}
  <h2>Upload a configuration</h2>
  <p>Choose a file or paste the document. It is checked first; nothing changes until you confirm.</p>
  <label>File <input type="file" accept="application/json,.json" data-into="configuration-document"></label>
  <label for="configuration-document">Document (JSON)</label>
  <textarea id="configuration-document" name="document" required spellcheck="false">${documentText}</textarea>
  <button type="submit">Check</button>
</form>`;
}

/** The document of a form, parsed; a page error names the JSON fault. */
function documentOf(form: URLSearchParams): { text: string; body: unknown } {
  const text = form.get('document') ?? '';
  if (Buffer.byteLength(text) > CONFIGURATION_BODY_BYTES_MAX) {
    throw new AdminPageError(
      413,
      'The document is too large',
      `A configuration has at most ${CONFIGURATION_BODY_BYTES_MAX} bytes.`,
      'Upload a smaller document.',
    );
  }
  try {
    return { text, body: JSON.parse(text) };
  } catch (error) {
    throw new AppError('validation-failed', `the document is not valid JSON: ${(error as Error).message}`, {
      errors: [{ path: '', message: 'must be a JSON document' }],
    });
  }
}

/**
 * The configuration revision a confirmation form was made for: the upload or wipe it confirms
 * is made only while that revision is stored, so that what was checked is what is replaced.
 */
function checkedRevisionOf(form: URLSearchParams): number {
  const text = form.get('revision') ?? '';
  if (!keepsRule(RevisionText, text)) {
    throw new AdminPageError(
      400,
      'The form is incomplete',
      'The confirmation did not say which configuration it was checked against, so nothing changed.',
      'Go back to the configuration page and start again.',
    );
  }
  return Number(text);
}

/** Runs a confirmed change; when the configuration changed since the check, a page says so. */
async function unlessChanged<T>(change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (error) {
    if (!(error instanceof AppError && error.code === 'configuration-changed')) throw error;
    throw new AdminPageError(
      409,
      'The configuration changed since you checked',
      'Someone uploaded or wiped the configuration after your check, so nothing was changed: what you confirmed was counted against a configuration that is no longer stored.',
      'Look at the audit log to see what changed, then check again and confirm what the new check shows.',
    );
  }
}

/**
 * Configuration: download; upload with every validation error listed by its path, after a dry
 * run naming what would be deleted and an explicit confirmation; the wipe with its dry run and
 * confirmation; the audit log.
 */
export function configurationPages(app: FastifyInstance, services: Pick<Services, 'configuration'>): void {
  app.get(
    '/admin/configuration',
    { config: { adminPermission: 'configuration:read' } },
    async (request, reply) => {
      const context = contextOf(request);
      const { permissions } = context.principal;
      const body = html`<section class="card">
<h2>Download</h2>
<p><a class="button" href="/admin/configuration/download" download>Download the configuration (JSON)</a></p>
</section>
${permissions.has('configuration:write') ? uploadForm(context, '') : ''}
${
  permissions.has('configuration:delete')
    ? html`<section class="card"><h2>Wipe</h2><p>Empties the configuration and deletes every ingestion session with its records, journals and errors. You will see what would be deleted first.</p><p><a class="danger-link" href="/admin/configuration/wipe">Wipe the configuration…</a></p></section>`
    : ''
}`;
      return sendPage(reply, page(context, 'Configuration', body));
    },
  );

  app.get(
    '/admin/configuration/download',
    { config: { adminPermission: 'configuration:read' } },
    async (request, reply) => {
      const { document } = await services.configuration.download(contextOf(request).principal.user.email);
      return reply
        .header('cache-control', 'no-store')
        .header('content-disposition', 'attachment; filename="configuration.json"')
        .type('application/json')
        .send(JSON.stringify(document, null, 2));
    },
  );

  app.post(
    '/admin/configuration/check',
    { config: { adminPermission: 'configuration:write' }, bodyLimit: CONFIGURATION_FORM_BYTES_MAX },
    async (request, reply) => {
      const context = contextOf(request);
      const { text, body } = documentOf(formOf(request));
      try {
        const result = await services.configuration.upload(body, context.principal.user.email, {
          dryRun: true,
        });
        const wouldDelete = 'wouldDelete' in result ? result.wouldDelete : result.deleted;
        const page_ = html`${notice('info', html`The document is valid (format ${result.version}).`)}
<section class="card">
<h2>What the upload changes</h2>
<p>Sections: ${Object.entries(result.sections)
          .map(([name, n]) => `${name} ${n}`)
          .join(' · ')}</p>
${isNothing(wouldDelete) ? html`<p>No processing data exists, so nothing is deleted.</p>` : html`${notice('warning', html`<strong>The upload deletes:</strong>${counts(wouldDelete)}`)}`}
<form method="post" action="/admin/configuration/upload">
  ${csrfField(context)}
  <textarea name="document" hidden>${text}</textarea>
  <input type="hidden" name="revision" value="${result.revision}">
  <label><input type="checkbox" name="confirm" value="yes" required> I understand that the current configuration is replaced and the data above is deleted.</label>
  <button type="submit" class="danger">Upload and replace</button>
  <a href="/admin/configuration">Cancel</a>
</form>
</section>`;
        return sendPage(reply, page(context, 'Confirm the upload', page_));
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'configuration-invalid')) throw error;
        const errors = (error.extensions.errors ?? []) as { path: string; message: string }[];
        const content = html`${notice(
          'error',
          html`<p><strong>The configuration has ${errors.length} problem(s); nothing was changed.</strong> Correct them and check again.</p>
<ul class="errors" id="configuration-errors">${errors.map((e) => html`<li><code>${e.path || '/'}</code> ${e.message}</li>`)}</ul>`,
        )}${uploadForm(context, text)}`;
        return sendPage(reply, page(context, 'The configuration is not valid', content), 400);
      }
    },
  );

  app.post(
    '/admin/configuration/upload',
    { config: { adminPermission: 'configuration:write' }, bodyLimit: CONFIGURATION_FORM_BYTES_MAX },
    async (request, reply) => {
      const context = contextOf(request);
      const form = formOf(request);
      if (form.get('confirm') !== 'yes') {
        throw new AdminPageError(
          400,
          'Not confirmed',
          'The upload was not confirmed, so nothing changed.',
          'Tick the confirmation box, then upload.',
        );
      }
      const { body } = documentOf(form);
      const result = await unlessChanged(() =>
        services.configuration.upload(body, context.principal.user.email, {
          ifRevisionIn: [checkedRevisionOf(form)],
        }),
      );
      const deleted = 'deleted' in result ? result.deleted : result.wouldDelete;
      return sendPage(
        reply,
        page(
          context,
          'Configuration uploaded',
          html`${notice('info', html`The configuration is replaced. Deleted:${counts(deleted)}`)}<p><a href="/admin/audit">See the audit log</a></p>`,
        ),
      );
    },
  );

  app.get(
    '/admin/configuration/wipe',
    { config: { adminPermission: 'configuration:delete' } },
    async (request, reply) => {
      const context = contextOf(request);
      const { wouldDelete, revision } = await services.configuration.wipeDryRun();
      const body = html`<section class="card">
${notice('warning', html`<strong>Wiping empties the configuration and deletes:</strong>${counts(wouldDelete)}Users, credentials and the audit log stay.`)}
<form method="post" action="/admin/configuration/wipe">
  ${csrfField(context)}
  <input type="hidden" name="revision" value="${revision}">
  <label><input type="checkbox" name="confirm" value="yes" required> I understand that this deletes the data above and cannot be undone.</label>
  <button type="submit" class="danger">Wipe</button>
  <a href="/admin/configuration">Cancel</a>
</form>
</section>`;
      return sendPage(reply, page(context, 'Wipe the configuration', body));
    },
  );

  app.post(
    '/admin/configuration/wipe',
    { config: { adminPermission: 'configuration:delete' } },
    async (request, reply) => {
      const context = contextOf(request);
      const form = formOf(request);
      if (form.get('confirm') !== 'yes') {
        throw new AdminPageError(
          400,
          'Not confirmed',
          'The wipe was not confirmed, so nothing was deleted.',
          'Tick the confirmation box, then wipe.',
        );
      }
      const { deleted } = await unlessChanged(() =>
        services.configuration.wipe(context.principal.user.email, [checkedRevisionOf(form)]),
      );
      return sendPage(
        reply,
        page(
          context,
          'Configuration wiped',
          html`${notice('info', html`The configuration is empty. Deleted:${counts(deleted)}`)}<p><a href="/admin/audit">See the audit log</a></p>`,
        ),
      );
    },
  );

  app.get(
    '/admin/audit',
    { config: { adminPermission: ['users:manage', 'configuration:read'] } },
    async (request, reply) => {
      const context = contextOf(request);
      const { page: pageNo, limit } = pagingOf(request);
      const { rows, total } = await services.configuration.audit(pageNo, limit);
      const body =
        rows.length === 0
          ? emptyState('No configuration change yet. Uploads and wipes are recorded here.')
          : html`${table(
              'audit',
              ['When', 'Who', 'Action', 'Revision', 'Version', 'Sections', 'Deleted'],
              rows.map((e) => [
                when(e.at),
                e.actor,
                e.action,
                e.revision,
                e.version ?? '—',
                Object.entries(e.sections)
                  .map(([n, c]) => `${n} ${c}`)
                  .join(', '),
                e.deleted === null
                  ? '—'
                  : `${e.deleted.ingestions} sessions, ${e.deleted.records} records, ${e.deleted.journals} journals, ${e.deleted.processingErrors} errors`,
              ]),
            )}${pagination('/admin/audit', {}, pageNo, limit, total)}`;
      return sendPage(reply, page(context, 'Audit log', body));
    },
  );
}
