import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { CONFIGURATION_SECTIONS } from '../../modules/configuration/document.js';
import { ConfigurationDocumentSchema, ConfigurationUploadSchema } from '../../modules/configuration/model.js';
import type { ConfigurationService } from '../../modules/configuration/service.js';
import { principalOf } from '../authenticate.js';
import { AUTH_ERRORS, Page, PageQuery, Problem, pageOf } from '../schemas.js';

/**
 * Largest configuration document accepted (issue 3: "at least 10 MB accepted"). The document
 * is validated whole in memory, so the limit also bounds the memory one upload can take.
 */
export const CONFIGURATION_BODY_BYTES_MAX = 32 * 1024 * 1024;

const ProcessingDataCounts = Type.Object(
  {
    ingestions: Type.Integer({
      description: 'Ingestion sessions; their chunks and rejected records go with them.',
    }),
    records: Type.Integer({ description: 'Accepted records.' }),
    journals: Type.Integer({ description: 'Journals made from the records.' }),
    journalLines: Type.Integer({ description: 'Lines of those journals.' }),
    processingErrors: Type.Integer({ description: 'Processing errors of the records.' }),
  },
  { description: 'Counts of processing data. Users, credentials, tokens and the audit log are never wiped.' },
);

const Sections = Type.Object(
  Object.fromEntries(CONFIGURATION_SECTIONS.map((name) => [name, Type.Integer()])),
  {
    description:
      'Items per section: array sections count their elements, featureFlags its flags, and the settings and definition objects 1 when not empty.',
  },
);

const UploadResult = Type.Object({
  version: Type.String({ description: 'Configuration format label of the document.' }),
  sections: Sections,
  deleted: Type.Optional({
    ...ProcessingDataCounts,
    description: 'What the upload wiped, counted in the transaction that deleted it. Absent on a dry run.',
  }),
  wouldDelete: Type.Optional({
    ...ProcessingDataCounts,
    description: 'What the upload would wipe if it were made now. Only on a dry run.',
  }),
});

const WipeDryRunResult = Type.Object({
  wouldDelete: {
    ...ProcessingDataCounts,
    description: 'What the deletion would wipe if it were made now.',
  },
});

const DryRunQuery = Type.Object(
  {
    dryRun: Type.Boolean({
      default: false,
      description:
        'When true, nothing changes: the answer says what would be deleted. Any other query parameter is refused, so a misspelt one cannot turn a dry run into a real change.',
    }),
  },
  { additionalProperties: false },
);

const AuditEntry = Type.Object({
  id: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
  actor: Type.String({ description: 'E-mail of the owner of the credential that made the change.' }),
  action: Type.Union([Type.Literal('configuration.upload'), Type.Literal('configuration.delete')]),
  version: Type.Union([Type.String(), Type.Null()]),
  revision: Type.Integer({ description: 'Configuration revision the change made.' }),
  sections: Type.Record(Type.String(), Type.Integer(), {
    description: 'Items per section of the configuration the change stored.',
  }),
  deleted: Type.Union([{ ...ProcessingDataCounts, description: 'What the change wiped.' }, Type.Null()], {
    description: 'What the change wiped; null on entries written before these counts were recorded.',
  }),
});

/** Configuration Data bulk download, upload and delete, and the audit log. */
export const configurationRoutes: FastifyPluginAsyncTypebox<{
  configuration: ConfigurationService<unknown>;
}> = async (app, { configuration }) => {
  const compileValidator = app.validatorCompiler;
  if (compileValidator === undefined) {
    // Without it the dryRun flag would go unparsed, and a dry run could become a real upload.
    throw new Error('configuration routes need the application validator compiler');
  }

  app.get(
    '/api/v1/configuration/bulk',
    {
      config: { permission: 'configuration:read' },
      // The document is already in canonical order; a schema-driven serialiser would only
      // slow a large document down.
      serializerCompiler: () => (data) => JSON.stringify(data),
      schema: {
        tags: ['configuration'],
        summary: 'Download the whole configuration',
        description:
          '`downloadedBy` is the e-mail of the owner of the calling credential; every section is present. Each entity attribute type is returned in the form it was uploaded in.',
        response: { 200: ConfigurationDocumentSchema, ...AUTH_ERRORS },
      },
    },
    async (request) => configuration.download(principalOf(request).ownerEmail),
  );

  app.put(
    '/api/v1/configuration/bulk',
    {
      config: { permission: 'configuration:write' },
      bodyLimit: CONFIGURATION_BODY_BYTES_MAX,
      // The schema documents the body; the configuration module validates it, structure and
      // cross-references together, so that every problem is reported in one answer. The query
      // string is validated as everywhere else.
      validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : compileValidator(route)),
      schema: {
        tags: ['configuration'],
        summary: 'Upload a whole configuration (all or nothing; wipes the processing data)',
        description: `At most ${CONFIGURATION_BODY_BYTES_MAX} bytes. The new configuration replaces the old one, and every ingestion session with its records, journals, journal lines and processing errors is deleted; users, credentials and the audit log stay. The answer's \`deleted\` counts what was wiped. With \`dryRun=true\` the document is checked exactly as for an upload and nothing changes: the answer's \`wouldDelete\` counts what an upload would wipe now. A 400 lists every problem as { path (JSON Pointer), message }; nothing changes on a 400.`,
        querystring: DryRunQuery,
        body: ConfigurationUploadSchema,
        response: { 200: UploadResult, 400: Problem, 413: Problem, ...AUTH_ERRORS },
      },
    },
    async (request) =>
      configuration.upload(request.body, principalOf(request).ownerEmail, { dryRun: request.query.dryRun }),
  );

  app.delete(
    '/api/v1/configuration/bulk',
    {
      config: { permission: 'configuration:delete' },
      schema: {
        tags: ['configuration'],
        summary: 'Delete the configuration and wipe the processing data (users and credentials stay)',
        description:
          'Empties every section and deletes every ingestion session with its records, journals, journal lines and processing errors; users, credentials and the audit log stay, and the audit entry records what was wiped. With `dryRun=true` nothing changes and the answer (200) counts what a deletion would wipe now.',
        querystring: DryRunQuery,
        response: { 200: WipeDryRunResult, 204: Type.Null(), 400: Problem, ...AUTH_ERRORS },
      },
    },
    async (request, reply) => {
      const actor = principalOf(request).ownerEmail;
      if (request.query.dryRun) return configuration.wipeDryRun();
      await configuration.wipe(actor);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/v1/audit-log',
    {
      config: { permission: ['users:manage', 'configuration:read'] },
      schema: {
        tags: ['configuration'],
        summary: 'Configuration uploads and deletions, newest first',
        description:
          'One entry per upload or deletion, newest first (in the order the changes were made): who, when, the version, the revision it made, the section counts and what it wiped. Dry runs leave no entry.',
        querystring: Type.Object(PageQuery),
        response: { 200: Page(AuditEntry), ...AUTH_ERRORS },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const { rows, total } = await configuration.audit(page, limit);
      return pageOf(rows, page, limit, total);
    },
  );
};
