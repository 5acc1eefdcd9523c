import type { FastifyInstance } from 'fastify';
import type { ConfigurationUploadPayload } from '../../../composition/approval-kinds.js';
import type { Services } from '../../../composition/services.js';
import { AppError } from '../../../lib/errors.js';
import { keepsRule } from '../../../lib/input-rule.js';
import { CONFIGURATION_BODY_BYTES_MAX, RevisionText } from '../../../modules/configuration/inputs.js';
import type { BlockingChange, WhatIfAnswer } from '../../../modules/configuration/keep-data.js';
import type { UploadResult } from '../../../modules/configuration/service.js';
import type { ProcessingDataCounts } from '../../../modules/configuration/store.js';
import { type Html, html } from '../html.js';
import { csrfField, notice, type PageContext, page } from '../layout.js';
import { AdminPageError, actorOf, contextOf, formOf, sendPage } from '../request.js';
import { adminCallerOf, approvalPagePath } from './approvals.js';

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

function uploadForm(context: PageContext, documentText: string, keep = false): Html {
  return html`<form method="post" action="/admin/configuration/check" class="card">
  ${csrfField(context)}
  <h2>Upload a configuration</h2>
  <p>Choose a file or paste the document. It is checked first; nothing changes until you confirm.</p>
  <label>File <input type="file" accept="application/json,.json" data-into="configuration-document"></label>
  <label for="configuration-document">Document (JSON)</label>
  <textarea id="configuration-document" name="document" required spellcheck="false">${documentText}</textarea>
  <fieldset>
    <legend>Processing data (sessions, records, journals, errors)</legend>
    <label><input type="radio" name="keep" value="no"${keep ? '' : html` checked`}> Delete it: the new configuration starts from nothing</label>
    <label><input type="radio" name="keep" value="yes"${keep ? html` checked` : ''}> Keep it: only when every stored record and journal still fits the new configuration</label>
  </fieldset>
  <button type="submit">Check</button>
</form>`;
}

/** Whether a form asks to keep the processing data. */
function keepOf(form: URLSearchParams): boolean {
  return form.get('keep') === 'yes';
}

/** The changes the stored data forbids, as a list of paths and reasons. */
function blockingList(blocking: readonly BlockingChange[]): Html {
  return html`<ul class="errors" id="blocking-changes">${blocking.map((b) => html`<li><code>${b.path}</code> ${b.reason}</li>`)}</ul>`;
}

/** What a keep-data dry run found: how many failed records would post, when the service can tell. */
function whatIfOf(whatIf: WhatIfAnswer | undefined): Html | string {
  if (whatIf === undefined) return '';
  const still = Object.entries(whatIf.wouldStillFail);
  return html`<p id="what-if">Of the records that failed processing, ${whatIf.wouldPost} would post under this configuration${still.length === 0 ? '.' : html`; still failing: ${still.map(([code, n]) => `${code} ${n}`).join(' · ')}.`}</p>`;
}

/** The confirmation of a keep-data upload, after its dry run. */
function keepConfirmation(context: PageContext, text: string, result: UploadResult): Html {
  return html`${notice('info', html`The document is valid (format ${result.version}) and keeps the processing data: nothing is deleted.`)}
<section class="card">
<h2>What the upload changes</h2>
<p>Sections: ${Object.entries(result.sections)
    .map(([name, n]) => `${name} ${n}`)
    .join(' · ')}</p>
${'whatIf' in result ? whatIfOf(result.whatIf) : ''}
<form method="post" action="/admin/configuration/upload">
  ${csrfField(context)}
  <textarea name="document" hidden>${text}</textarea>
  <input type="hidden" name="revision" value="${result.revision}">
  <input type="hidden" name="keep" value="yes">
  <label><input type="checkbox" name="confirm" value="yes" required> I understand that the current configuration is replaced; posted journals stay as they are and records processed from now on use the new one.</label>
  <button type="submit">Upload and keep the data</button>
  <a href="/admin/configuration">Cancel</a>
</form>
</section>`;
}

/** The page of a keep-data upload that the stored data forbids; nothing changed. */
function unsafeChange(error: AppError): AdminPageError {
  const blocking = (error.extensions.blocking ?? []) as BlockingChange[];
  return new AdminPageError(
    409,
    'The change cannot keep the processing data',
    `Data stored since your check does not fit ${blocking.length} change(s), so nothing changed: ${blocking.map((b) => `${b.path} (${b.reason})`).join('; ')}.`,
    'Change the configuration so that stored records and journals still fit it, or upload it deleting the processing data.',
  );
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
 * confirmation.
 */
export function configurationPages(
  app: FastifyInstance,
  services: Pick<Services, 'configuration' | 'approvals'>,
): void {
  registerConfigurationPage(app);
  registerDownload(app, services);
  registerUploadCheck(app, services);
  registerUpload(app, services);
  registerWipePages(app, services);
}

/** `/admin/configuration`: the download link, and the upload and wipe the user may make. */
function registerConfigurationPage(app: FastifyInstance): void {
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
}

/** `/admin/configuration/download`: the stored configuration as a JSON file. */
function registerDownload(app: FastifyInstance, services: Pick<Services, 'configuration'>): void {
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
}

/**
 * `POST /admin/configuration/check`: the dry run of an upload, and the confirmation of what it
 * would change; or the form again with what the document or the stored data refuses.
 */
function registerUploadCheck(app: FastifyInstance, services: Pick<Services, 'configuration'>): void {
  app.post(
    '/admin/configuration/check',
    { config: { adminPermission: 'configuration:write' }, bodyLimit: CONFIGURATION_FORM_BYTES_MAX },
    async (request, reply) => {
      const context = contextOf(request);
      const form = formOf(request);
      const { text, body } = documentOf(form);
      const keep = keepOf(form);
      try {
        const result = await services.configuration.upload(body, actorOf(request), {
          dryRun: true,
          keepProcessingData: keep,
        });
        if (keep)
          return sendPage(
            reply,
            page(context, 'Confirm the upload', keepConfirmation(context, text, result)),
          );
        const wouldDelete = 'wouldDelete' in result ? result.wouldDelete : result.deleted;
        const keepPossible = 'keepProcessingData' in result && result.keepProcessingData.possible;
        const page_ = html`${notice('info', html`The document is valid (format ${result.version}).`)}
<section class="card">
<h2>What the upload changes</h2>
<p>Sections: ${Object.entries(result.sections)
          .map(([name, n]) => `${name} ${n}`)
          .join(' · ')}</p>
${isNothing(wouldDelete) ? html`<p>No processing data exists, so nothing is deleted.</p>` : html`${notice('warning', html`<strong>The upload deletes:</strong>${counts(wouldDelete)}`)}${keepPossible ? html`<p id="keep-possible">This change could keep the processing data: go back and check it again with “Keep it” chosen to delete nothing.</p>` : ''}`}
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
        if (error instanceof AppError && error.code === 'configuration-change-unsafe') {
          const blocking = (error.extensions.blocking ?? []) as BlockingChange[];
          const content = html`${notice(
            'error',
            html`<p><strong>Stored data does not fit ${blocking.length} change(s), so the upload cannot keep it; nothing was changed.</strong></p>${blockingList(blocking)}`,
          )}${uploadForm(context, text, true)}`;
          return sendPage(reply, page(context, 'The change cannot keep the processing data', content), 409);
        }
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
}

/**
 * `POST /admin/configuration/upload`: the confirmed upload, made only while the checked revision
 * is stored; or its approval request when uploads wait for one.
 */
function registerUpload(app: FastifyInstance, services: Pick<Services, 'configuration' | 'approvals'>): void {
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
      const { text, body } = documentOf(form);
      const keep = keepOf(form);
      if (services.approvals.isRequired('configuration.upload')) {
        // Four eyes: the upload waits for another user (docs/domain/approvals.md).
        await unlessChanged(() => services.configuration.checkedRevision([checkedRevisionOf(form)]));
        const payload: ConfigurationUploadPayload = { document: text, keepProcessingData: keep };
        const { request: made } = await services.approvals.request(
          'configuration.upload',
          payload,
          adminCallerOf(context),
          undefined,
        );
        return reply.redirect(approvalPagePath(made.requestId), 303);
      }
      const result = await unlessChanged(async () => {
        try {
          return await services.configuration.upload(body, actorOf(request), {
            ifRevisionIn: [checkedRevisionOf(form)],
            keepProcessingData: keep,
          });
        } catch (error) {
          if (error instanceof AppError && error.code === 'configuration-change-unsafe')
            throw unsafeChange(error);
          throw error;
        }
      });
      const deleted = 'deleted' in result ? result.deleted : result.wouldDelete;
      const outcome = keep
        ? html`The configuration is replaced; the processing data was kept.`
        : html`The configuration is replaced. Deleted:${counts(deleted)}`;
      return sendPage(
        reply,
        page(
          context,
          'Configuration uploaded',
          html`${notice('info', outcome)}<p><a href="/admin/audit">See the audit log</a> · <a href="/admin/configuration/revisions">See the revisions</a></p>`,
        ),
      );
    },
  );
}

/**
 * `/admin/configuration/wipe`: what a wipe would delete with its confirmation, and the confirmed
 * wipe (or its approval request when wipes wait for one).
 */
function registerWipePages(
  app: FastifyInstance,
  services: Pick<Services, 'configuration' | 'approvals'>,
): void {
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
      if (services.approvals.isRequired('configuration.delete')) {
        await unlessChanged(() => services.configuration.checkedRevision([checkedRevisionOf(form)]));
        const { request: made } = await services.approvals.request(
          'configuration.delete',
          {},
          adminCallerOf(context),
          undefined,
        );
        return reply.redirect(approvalPagePath(made.requestId), 303);
      }
      const { deleted } = await unlessChanged(() =>
        services.configuration.wipe(actorOf(request), [checkedRevisionOf(form)]),
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
}
