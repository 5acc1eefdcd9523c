import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { CONFIGURATION_DIFF_CHANGES_MAX } from '../../modules/configuration/diff.js';
import { RevisionNumber } from '../../modules/configuration/inputs.js';
import { ConfigurationDocumentSchema } from '../../modules/configuration/model.js';
import type { ConfigurationRevisions } from '../../modules/configuration/revisions.js';
import { principalOf } from '../authenticate.js';
import { ConfigurationRevision, RevisionDiff } from './answer-schemas.js';
import { etagOf, inTurns } from './configuration.js';
import { keyOfCursor, nextCursor } from './cursor.js';
import {
  AfterQuery,
  CURSOR_PAGING_DESCRIPTION,
  CursorPage,
  cursorPageOf,
  PageQuery,
  Problem,
} from './schemas.js';

/** The `next` cursor of a revisions page. */
function revisionCursor(revision: number | undefined): string | null {
  return nextCursor('configuration-revisions', revision, (k) => [k]);
}

const RevisionParams = Type.Object({ revision: RevisionNumber });

/**
 * The configuration revisions: the list, one revision's document, and the changes between two.
 * Kept in one piece: a Fastify plugin is the unit of encapsulation, and each of its three routes
 * is short.
 */
export const configurationRevisionRoutes: FastifyPluginAsyncTypebox<{
  revisions: ConfigurationRevisions;
}> = async (app, { revisions }) => {
  const config = { permission: 'configuration:read' as const };

  app.get(
    '/api/v1/configuration/revisions',
    {
      config,
      schema: {
        operationId: 'listConfigurationRevisions',
        tags: ['configuration'],
        summary: 'Configuration revisions, newest first',
        description: `One revision per upload or deletion (dry runs make none): its number, when, who, upload or delete, the format version, the SHA-256 of its configuration and its section counts, without the document. Revisions made before revisions were kept are not listed, except the one stored when they began to be. ${CURSOR_PAGING_DESCRIPTION}`,
        querystring: Type.Object({ ...PageQuery, ...AfterQuery }),
        response: { 200: CursorPage(ConfigurationRevision), 400: Problem },
      },
    },
    async (request) => {
      const { page, limit, after } = request.query;
      if (after !== undefined) {
        const [revision] = keyOfCursor('configuration-revisions', after, ['integer']);
        const found = await revisions.listAfter(revision, limit);
        return cursorPageOf(found.rows, limit, revisionCursor(found.next));
      }
      const found = await revisions.list(page, limit);
      return cursorPageOf(found.rows, limit, revisionCursor(found.next), { page, total: found.total });
    },
  );

  app.get(
    '/api/v1/configuration/revisions/:revision',
    {
      config,
      schema: {
        operationId: 'getConfigurationRevision',
        tags: ['configuration'],
        summary: 'One configuration revision, as a download gives a document',
        description:
          'The configuration of the revision in the download form (`downloadTime` and `downloadedBy` are of this request), which an upload takes back as it is to return to it. The `ETag` names the revision: sent as `If-Match` with an upload, it makes the upload only while this revision is still the stored one. Its metadata is in the list of revisions. 404 for a revision not kept.',
        params: RevisionParams,
        response: { 200: ConfigurationDocumentSchema, 400: Problem, 404: Problem },
      },
    },
    async (request, reply) => {
      const { summary, text } = await revisions.download(
        request.params.revision,
        principalOf(request).ownerEmail,
      );
      // As the download: the text is the documented document, written as a stream.
      const untyped: FastifyReply = reply;
      return untyped
        .header('etag', etagOf(summary.revision))
        .type('application/json; charset=utf-8')
        .send(Readable.from(inTurns(text)));
    },
  );

  app.get(
    '/api/v1/configuration/revisions/:revision/diff',
    {
      config,
      schema: {
        operationId: 'diffConfigurationRevisions',
        tags: ['configuration'],
        summary: 'The changes that lead to a revision',
        description: `Every change from revision \`from\` (by default the revision kept before this one; the empty configuration for the first kept) to this revision, as { path, kind (added, removed, changed), old, new }. \`path\` is a JSON Pointer (RFC 6901: \`~0\` for \`~\`, \`~1\` for \`/\`) into this revision's configuration for an added or changed value, into \`from\`'s for a removed one. Elements that have a name (entities and their attributes, flows, account lookups, journal types, posting components, calendars, the business event attributes and journal fields, ...) are matched by name, so a renamed element is one removed and one added, an element whose members change is changed member by member, and a change of their order alone is no change; other lists are compared position by position. At most ${CONFIGURATION_DIFF_CHANGES_MAX} changes; \`truncated\` says when there were more. 404 for a revision not kept.`,
        params: RevisionParams,
        querystring: Type.Object(
          {
            from: Type.Optional({
              ...RevisionNumber,
              description: 'The revision to compare from (older or newer); by default the one kept before.',
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: RevisionDiff, 400: Problem, 404: Problem },
      },
    },
    async (request) => revisions.diff(request.params.revision, request.query.from),
  );
};
