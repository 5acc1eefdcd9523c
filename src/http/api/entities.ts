import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { EntityCatalog } from '../../modules/entities/catalog.js';
import { EntityDetail } from './answer-schemas.js';
import type { ApiApp } from './route-app.js';
import { PathParam, Problem } from './schemas.js';

const EntitySummary = Type.Object({
  name: Type.String(),
  temporalityType: Type.String(),
  description: Type.String(),
});

const NsParams = Type.Object({ ns: PathParam });
const EntityParams = Type.Object({ ns: PathParam, entity: PathParam });

/** Who may read the namespaces and entities: every route of this plugin. */
const CONFIGURATION_READ = { permission: 'configuration:read' as const };

/** Namespaces, entities and example chunks. */
export const entityRoutes: FastifyPluginAsyncTypebox<{ catalog: EntityCatalog }> = async (
  app,
  { catalog },
) => {
  registerNamespaceRoutes(app, catalog);
  registerEntityRoutes(app, catalog);
};

/** `GET /api/v1/namespaces` and `…/:ns/entities`: the namespaces, and the entities of one. */
function registerNamespaceRoutes(app: ApiApp, catalog: EntityCatalog): void {
  app.get(
    '/api/v1/namespaces',
    {
      config: CONFIGURATION_READ,
      schema: {
        operationId: 'listNamespaces',
        tags: ['entities'],
        summary: 'List namespaces',
        response: {
          200: Type.Object({ data: Type.Array(Type.Object({ name: Type.String() })) }),
        },
      },
    },
    async () => ({ data: (await catalog.namespaces()).map((name) => ({ name })) }),
  );

  app.get(
    '/api/v1/namespaces/:ns/entities',
    {
      config: CONFIGURATION_READ,
      schema: {
        operationId: 'listEntities',
        tags: ['entities'],
        summary: 'List the entities of a namespace',
        params: NsParams,
        response: { 200: Type.Object({ data: Type.Array(EntitySummary) }), 404: Problem },
      },
    },
    async (request) => ({
      data: (await catalog.entities(request.params.ns)).map((entity) => ({
        name: entity.name,
        temporalityType: entity.temporalityType,
        description: entity.description,
      })),
    }),
  );
}

/** `GET /api/v1/namespaces/:ns/entities/:entity` and `…/example`: one entity, and a chunk of it. */
function registerEntityRoutes(app: ApiApp, catalog: EntityCatalog): void {
  app.get(
    '/api/v1/namespaces/:ns/entities/:entity',
    {
      config: CONFIGURATION_READ,
      schema: {
        operationId: 'getEntity',
        tags: ['entities'],
        summary: 'One entity with its ordered attributes',
        params: EntityParams,
        response: { 200: EntityDetail, 404: Problem },
      },
    },
    async (request) => {
      const { definition } = await catalog.entity(request.params.ns, request.params.entity);
      return {
        name: definition.name,
        namespace: definition.namespace,
        description: definition.description,
        temporalityType: definition.temporalityType,
        type: definition.type,
        attributes: definition.attributes.map((attribute) => ({
          name: attribute.name,
          label: attribute.label,
          mandatory: attribute.mandatory,
          type: attribute.type,
          ...(attribute.elementType === undefined ? {} : { elementType: attribute.elementType }),
        })),
      };
    },
  );

  app.get(
    '/api/v1/namespaces/:ns/entities/:entity/example',
    {
      config: CONFIGURATION_READ,
      schema: {
        operationId: 'getEntityExample',
        tags: ['entities'],
        summary: 'An example chunk body that the chunk endpoint accepts as it is',
        description:
          'Every attribute set to a valid value of its type. For `ledger/businessEvent`, `ledger/businessEventRollback` and `ledger/journal` the values come from the configuration so that processing turns the example into journals: an event type with posting components and a node they post on (a business event, or the event a rollback names), or a balanced pair of lines of one origin journal (a journal), dated at the business date of the node. Unknown names answer 404 with the closest configured names in `suggestions`.',
        params: EntityParams,
        response: {
          200: Type.Object({
            chunkName: Type.String(),
            data: Type.Array(Type.Record(Type.String(), Type.Unknown())),
          }),
          404: Problem,
        },
      },
    },
    async (request) => catalog.example(request.params.ns, request.params.entity),
  );
}
