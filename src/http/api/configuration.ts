import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ConfigurationUploadPayload } from '../../composition/approval-kinds.js';
import { AppError } from '../../lib/errors.js';
import { JSON_MEDIA_TYPES } from '../../lib/json-body.js';
import type { ApprovalService } from '../../modules/approvals/service.js';
import {
  CONFIGURATION_BODY_BYTES_MAX,
  IfMatch,
  KEEP_PROCESSING_DATA,
  KeepQuery,
  REVISION_DIGITS_MAX,
} from '../../modules/configuration/inputs.js';
import { ConfigurationDocumentSchema, ConfigurationUploadSchema } from '../../modules/configuration/model.js';
import type { ConfigurationService } from '../../modules/configuration/service.js';
import { actorOf, principalOf } from '../authenticate.js';
import { ajvErrorsToPaths } from '../problem.js';
import { UploadResult, WipeDryRunResult } from './answer-schemas.js';
import { approvalCallerOf, PendingApprovalAnswer, sendPendingApproval } from './approval-requests.js';
import { ChangeHeaders } from './changes.js';
import type { ApiApp } from './route-app.js';
import { Problem } from './schemas.js';

const dryRun = Type.Boolean({
  default: false,
  description:
    'When true, nothing changes: the answer says what would be deleted. Any other query parameter is refused, so a misspelt one cannot turn a dry run into a real change.',
});

const DryRunQuery = Type.Object({ dryRun }, { additionalProperties: false });

const UploadQuery = Type.Object({ dryRun, keep: Type.Optional(KeepQuery) }, { additionalProperties: false });

/**
 * The entity tag of a configuration revision: strong, quoted, and changed by every upload and
 * deletion. It names the stored configuration, not the download's `downloadTime` and
 * `downloadedBy` (docs/decisions.md).
 */
export function etagOf(revision: number): string {
  return `"revision-${revision}"`;
}

/** A strong entity tag of this service in an `If-Match` list; the revision is its second group. */
const STRONG_REVISION_TAG = new RegExp(`(^|,)\\s*"revision-(\\d{1,${REVISION_DIGITS_MAX}})"\\s*(?=,|$)`, 'g');

/**
 * The revisions an `If-Match` header allows (RFC 9110, 13.1.1): undefined for none sent or `*`
 * (the configuration always exists), else those its strong entity tags name. A weak tag never
 * matches (strong comparison), nor does a tag this service did not make, so a list of only
 * such tags allows no revision.
 */
function revisionsOf(ifMatch: string | undefined): readonly number[] | undefined {
  if (ifMatch === undefined || ifMatch.trim() === '*') return undefined;
  return [...ifMatch.matchAll(STRONG_REVISION_TAG)].map((match) => Number(match[2]));
}

/** The body of an upload as text; an upload is JSON, which is UTF-8 (RFC 8259 8.1). */
function utf8Of(body: unknown): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body as Uint8Array);
  } catch {
    throw new AppError('malformed-json', 'the body is not UTF-8 text, so it is not JSON');
  }
}

const IfMatchHeaders = Type.Object({ 'if-match': Type.Optional(IfMatch) });

/** The headers of an upload and a deletion: `If-Match`, and an `Idempotency-Key` as every change's. */
const ChangeOfConfigurationHeaders = Type.Composite([IfMatchHeaders, ChangeHeaders]);

/**
 * What a deletion may carry: no body, or an empty object. Some clients send `{}` on every DELETE;
 * any member is refused, as in every other body, so a misspelt option never goes unnoticed.
 */
const DeleteBody = Type.Object({}, { additionalProperties: false });

/**
 * Characters of a download written between two turns of the event loop: the document is ordered
 * and printed a section element at a time, and the loop serves what waits after each batch.
 */
const DOWNLOAD_CHARS_PER_TURN = 64 * 1024;

/** The pieces of a document's text in batches of about {@link DOWNLOAD_CHARS_PER_TURN}, a turn of the event loop after each. */
export async function* inTurns(pieces: Iterable<string>): AsyncGenerator<string> {
  let batch = '';
  for (const piece of pieces) {
    batch += piece;
    if (batch.length < DOWNLOAD_CHARS_PER_TURN) continue;
    yield batch;
    batch = '';
    await nextTurn();
  }
  if (batch.length > 0) yield batch;
}

/** What the configuration routes call. */
interface ConfigurationRouteServices {
  configuration: ConfigurationService<unknown>;
  approvals: ApprovalService;
}

/** The application's validator compiler, which the upload and the deletion use for parts of their own. */
type ValidatorCompiler = NonNullable<ApiApp['validatorCompiler']>;

/** Configuration Data bulk download, upload and delete. */
export const configurationRoutes: FastifyPluginAsyncTypebox<ConfigurationRouteServices> = async (
  app,
  services,
) => {
  const compileValidator = app.validatorCompiler;
  if (compileValidator === undefined) {
    // Without it the dryRun flag would go unparsed, and a dry run could become a real upload.
    throw new Error('configuration routes need the application validator compiler');
  }
  registerDownloadRoute(app, services.configuration);
  await registerUploadRoute(app, services, compileValidator);
  registerDeleteRoute(app, services, compileValidator);
};

/** `GET /api/v1/configuration/bulk`: the stored configuration, streamed, with its revision's tag. */
function registerDownloadRoute(app: ApiApp, configuration: ConfigurationService<unknown>): void {
  app.get(
    '/api/v1/configuration/bulk',
    {
      config: { permission: 'configuration:read' },
      schema: {
        operationId: 'downloadConfiguration',
        tags: ['configuration'],
        summary: 'Download the whole configuration',
        description:
          '`downloadedBy` is the e-mail of the owner of the calling credential; every section is present. Each entity attribute type is returned in the form it was uploaded in. The `ETag` header names the stored revision: send it as `If-Match` with an upload or a deletion to make it only if nothing changed in between.',
        response: { 200: ConfigurationDocumentSchema },
      },
    },
    async (request, reply) => {
      const { text, revision } = await configuration.downloadText(principalOf(request).ownerEmail);
      // The text is the documented document, written as a stream: the response schema documents
      // it, and the typed reply, which expects the object, is widened to send the stream.
      const untyped: FastifyReply = reply;
      return untyped
        .header('etag', etagOf(revision))
        .type('application/json; charset=utf-8')
        .send(Readable.from(inTurns(text)));
    },
  );
}

/**
 * `PUT /api/v1/configuration/bulk`: an upload, its dry run, or its approval request. The upload
 * reads its body as raw bytes, which the configuration service's validator parses and checks on
 * a worker thread when the document is large (docs/adr/0017): parsing it here would hold the
 * event loop for the whole document. The same media types as every JSON route, and the same
 * answers to a body that cannot be read. The parser lives in this encapsulated context only.
 */
async function registerUploadRoute(
  app: ApiApp,
  { configuration, approvals }: ConfigurationRouteServices,
  compileValidator: ValidatorCompiler,
): Promise<void> {
  await app.register(async (plugin) => {
    const uploads = plugin.withTypeProvider<TypeBoxTypeProvider>();
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser(
      JSON_MEDIA_TYPES,
      { parseAs: 'buffer', bodyLimit: CONFIGURATION_BODY_BYTES_MAX },
      (_request, body, done) => done(null, body),
    );
    uploads.put(
      '/api/v1/configuration/bulk',
      {
        config: { permission: 'configuration:write' },
        bodyLimit: CONFIGURATION_BODY_BYTES_MAX,
        // The schema documents the body; the configuration module validates it, structure and
        // cross-references together, so that every problem is reported in one answer. The query
        // string is validated as everywhere else.
        validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : compileValidator(route)),
        schema: {
          operationId: 'uploadConfiguration',
          tags: ['configuration'],
          summary:
            'Upload a whole configuration (all or nothing; wipes the processing data unless keep=processing-data)',
          description: `At most ${CONFIGURATION_BODY_BYTES_MAX} bytes. The new configuration replaces the old one as a new revision, and every ingestion session with its records, journals, journal lines and processing errors is deleted; users, credentials, the audit log and the revisions stay. The answer's \`deleted\` counts what was wiped. With \`dryRun=true\` the document is checked exactly as for an upload and nothing changes: the answer's \`wouldDelete\` counts what an upload would wipe now, and \`keepProcessingData\` says whether the same upload with \`keep=processing-data\` would be accepted (with every blocking change when not). With \`keep=${KEEP_PROCESSING_DATA}\` nothing is deleted: the change is made only when every stored record still conforms to its entity and the journal definition keeps the fields stored journals use (an entity may gain optional attributes, loosen a mandatory flag, gain entities, flows and rules; it may not remove, retype or make mandatory an attribute that stored records use, nor remove an entity with stored records); otherwise 409 \`configuration-change-unsafe\` with \`blocking\`, each change as { path (JSON Pointer), reason }, and nothing changes. Posted journals stay as they are; records processed afterwards are processed under the new revision. Its dry run answers 409 alike, or \`keepProcessingData.possible\` true and, where the service can tell, \`whatIf\`: how many records that failed processing would post under the new configuration. A 400 lists every problem as { path (JSON Pointer), message }; nothing changes on a 400. With \`If-Match\`, the upload (or its dry run) is made only while the stored configuration is the one that \`ETag\` names, else 412 \`configuration-changed\` and nothing changes. The answer's \`ETag\` names the revision stored after it (unchanged by a dry run).`,
          querystring: UploadQuery,
          headers: ChangeOfConfigurationHeaders,
          body: ConfigurationUploadSchema,
          response: {
            200: UploadResult,
            202: PendingApprovalAnswer,
            400: Problem,
            409: Problem,
            412: Problem,
            413: Problem,
          },
        },
      },
      async (request, reply) => {
        const keepProcessingData = request.query.keep === KEEP_PROCESSING_DATA;
        if (!request.query.dryRun && approvals.isRequired('configuration.upload')) {
          await configuration.checkedRevision(revisionsOf(request.headers['if-match']));
          const payload: ConfigurationUploadPayload = {
            document: utf8Of(request.body),
            keepProcessingData,
          };
          const pending = await approvals.request(
            'configuration.upload',
            payload,
            approvalCallerOf(request),
            request.headers['idempotency-key'],
          );
          return sendPendingApproval(reply, pending);
        }
        const uploaded = await configuration.upload(request.body, actorOf(request), {
          dryRun: request.query.dryRun,
          ifRevisionIn: revisionsOf(request.headers['if-match']),
          keepProcessingData,
          idempotencyKey: request.headers['idempotency-key'],
        });
        return sendUploaded(reply, uploaded);
      },
    );
  });
}

/**
 * Sends an upload's answer with the `ETag` of the revision it stored (or left, for a dry run);
 * the first answer of an `Idempotency-Key` given again says so.
 */
function sendUploaded(
  reply: FastifyReply,
  uploaded: Awaited<ReturnType<ConfigurationService<unknown>['upload']>>,
) {
  const { revision, ...answer } = uploaded;
  reply.header('etag', etagOf(revision));
  if (!('replayed' in answer)) return answer;
  const { replayed: _, ...first } = answer;
  return reply.header('idempotent-replayed', 'true').send(first);
}

/** Refuses the body of a deletion unless it is absent or `{}`: `validation-failed` naming the member. */
function refuseDeleteBody(valid: ReturnType<ValidatorCompiler>, body: unknown): void {
  if (body === undefined || valid(body) === true) return;
  const errors = ajvErrorsToPaths(valid.errors ?? []);
  const first = errors[0];
  throw new AppError(
    'validation-failed',
    first === undefined ? 'the body must be absent or {}' : `${first.path || 'the body'} ${first.message}`,
    { errors },
  );
}

/** `DELETE /api/v1/configuration/bulk`: the wipe, its dry run, or its approval request. */
function registerDeleteRoute(
  app: ApiApp,
  { configuration, approvals }: ConfigurationRouteServices,
  compileValidator: ValidatorCompiler,
): void {
  // Not the route's body schema: with one, an empty body would be refused as a missing
  // document, and a DELETE with `Content-Type: application/json` and no body is ordinary.
  const deleteBodyValid = compileValidator({
    schema: DeleteBody,
    method: 'DELETE',
    url: '/api/v1/configuration/bulk',
    httpPart: 'body',
  });
  app.delete(
    '/api/v1/configuration/bulk',
    {
      config: { permission: 'configuration:delete' },
      schema: {
        operationId: 'deleteConfiguration',
        tags: ['configuration'],
        summary: 'Delete the configuration and wipe the processing data (users and credentials stay)',
        description:
          'Empties every section and deletes every ingestion session with its records, journals, journal lines and processing errors; users, credentials and the audit log stay, and the audit entry records what was wiped. With `dryRun=true` nothing changes and the answer (200) counts what a deletion would wipe now. It takes no body; an empty object is accepted, and any member is refused (400 naming it). With `If-Match`, the deletion (or its dry run) is made only while the stored configuration is the one that `ETag` names, else 412 `configuration-changed` and nothing changes. The `ETag` of the answer names the revision stored after it.',
        querystring: DryRunQuery,
        headers: ChangeOfConfigurationHeaders,
        response: {
          200: WipeDryRunResult,
          202: PendingApprovalAnswer,
          204: Type.Null(),
          400: Problem,
          409: Problem,
          412: Problem,
        },
      },
      preValidation: async (request) => refuseDeleteBody(deleteBodyValid, request.body),
    },
    async (request, reply) => {
      const actor = actorOf(request);
      const ifRevisionIn = revisionsOf(request.headers['if-match']);
      if (request.query.dryRun) {
        const { wouldDelete, revision } = await configuration.wipeDryRun(ifRevisionIn);
        return reply.header('etag', etagOf(revision)).send({ wouldDelete });
      }
      if (approvals.isRequired('configuration.delete')) {
        await configuration.checkedRevision(ifRevisionIn);
        const pending = await approvals.request(
          'configuration.delete',
          {},
          approvalCallerOf(request),
          request.headers['idempotency-key'],
        );
        return sendPendingApproval(reply, pending);
      }
      const { revision, replayed } = await configuration.wipe(
        actor,
        ifRevisionIn,
        request.headers['idempotency-key'],
      );
      if (replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(204).header('etag', etagOf(revision)).send(null);
    },
  );
}
