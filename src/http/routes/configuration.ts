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

const UploadResult = Type.Object({
  version: Type.String(),
  sections: Type.Object(Object.fromEntries(CONFIGURATION_SECTIONS.map((name) => [name, Type.Integer()]))),
});

const AuditEntry = Type.Object({
  id: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
  actor: Type.String({ description: 'E-mail of the owner of the credential that made the change.' }),
  action: Type.Union([Type.Literal('configuration.upload'), Type.Literal('configuration.delete')]),
  version: Type.Union([Type.String(), Type.Null()]),
  revision: Type.Integer(),
  sections: Type.Record(Type.String(), Type.Integer()),
});

/** Configuration Data bulk download, upload and delete, and the audit log (contract 3). */
export const configurationRoutes: FastifyPluginAsyncTypebox<{
  configuration: ConfigurationService<unknown>;
}> = async (app, { configuration }) => {
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
          '`downloadedBy` is the e-mail of the owner of the calling credential; every section is present.',
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
      // cross-references together, so that every problem is reported in one answer.
      validatorCompiler: () => () => true,
      schema: {
        tags: ['configuration'],
        summary: 'Upload a whole configuration (all or nothing; wipes the processing data)',
        description: `At most ${CONFIGURATION_BODY_BYTES_MAX} bytes. A 400 lists every problem as { path (JSON Pointer), message }; nothing changes on a 400.`,
        body: ConfigurationUploadSchema,
        response: { 200: UploadResult, 400: Problem, 413: Problem, ...AUTH_ERRORS },
      },
    },
    async (request) => configuration.upload(request.body, principalOf(request).ownerEmail),
  );

  app.delete(
    '/api/v1/configuration/bulk',
    {
      config: { permission: 'configuration:delete' },
      schema: {
        tags: ['configuration'],
        summary: 'Delete the configuration and wipe the processing data (users and credentials stay)',
        response: { 204: Type.Null(), ...AUTH_ERRORS },
      },
    },
    async (request, reply) => {
      await configuration.wipe(principalOf(request).ownerEmail);
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
