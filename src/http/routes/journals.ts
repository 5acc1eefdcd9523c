import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { JournalQueries } from '../../modules/accounting/journal-queries.js';
import { AUTH_ERRORS, DateQuery, Page, PageQuery, Problem, pageOf } from '../schemas.js';

const Journal = Type.Object({
  journalId: Type.String({ format: 'uuid' }),
  status: Type.Union([Type.Literal('posted'), Type.Literal('unposted')]),
  coreDate: Type.String({ format: 'date' }),
  originalCoreDate: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
    description: 'The date the journal asked for, when a closed period moved it (posting-date override).',
  }),
  journalType: Type.String(),
  accountingConfig: Type.String(),
  ingestionId: Type.String(),
  reverses: Type.Union([Type.String(), Type.Null()]),
  reversedBy: Type.Union([Type.String(), Type.Null()]),
  node: Type.Record(Type.String(), Type.String()),
  lines: Type.Array(
    Type.Record(Type.String(), Type.Unknown(), {
      description:
        'A line keyed by the journalDefinition field names (amounts as decimal strings, debit positive), plus drCr.',
    }),
  ),
});

/** Journals, balances and processing errors (contract 6). */
export const journalRoutes: FastifyPluginAsyncTypebox<{ journals: JournalQueries }> = async (
  app,
  { journals },
) => {
  const config = { permission: 'journals:read' as const };

  app.get(
    '/api/v1/journals',
    {
      config,
      schema: {
        tags: ['journals'],
        summary: 'Journals by core date',
        querystring: Type.Object({
          ...PageQuery,
          status: Type.Optional(Type.Union([Type.Literal('posted'), Type.Literal('unposted')])),
          ingestionId: Type.Optional(Type.String()),
          accountingConfig: Type.Optional(Type.String()),
          from: Type.Optional(DateQuery('Core date from (inclusive), a date YYYY-MM-DD.')),
          to: Type.Optional(DateQuery('Core date to (exclusive), a date YYYY-MM-DD.')),
        }),
        response: { 200: Page(Journal), 400: Problem, ...AUTH_ERRORS },
      },
    },
    async (request) => {
      const { page, limit, ...filter } = request.query;
      const { rows, total } = await journals.list(filter, page, limit);
      return pageOf(rows, page, limit, total);
    },
  );

  app.get(
    '/api/v1/journals/:journalId',
    {
      config,
      schema: {
        tags: ['journals'],
        summary: 'One journal',
        params: Type.Object({ journalId: Type.String({ maxLength: 100 }) }),
        response: { 200: Journal, 404: Problem, ...AUTH_ERRORS },
      },
    },
    async (request) => journals.get(request.params.journalId),
  );

  app.get(
    '/api/v1/balances',
    {
      config,
      schema: {
        tags: ['journals'],
        summary: 'Balances of posted journals per accounting configuration, node, account and currency',
        querystring: Type.Object({
          accountingConfig: Type.Optional(Type.String()),
          asOf: Type.Optional(DateQuery('Count posted journals with a core date on or before this day.')),
          account: Type.Optional(Type.String()),
          currency: Type.Optional(Type.String()),
        }),
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                accountingConfig: Type.String(),
                node: Type.Record(Type.String(), Type.String()),
                account: Type.String(),
                currency: Type.String(),
                balance: Type.String({ description: 'Exact signed sum: debits positive, credits negative.' }),
              }),
            ),
          }),
          400: Problem,
          ...AUTH_ERRORS,
        },
      },
    },
    async (request) => ({ data: await journals.balances(request.query) }),
  );

  app.get(
    '/api/v1/processing-errors',
    {
      config,
      schema: {
        tags: ['journals'],
        summary: 'Records that produced no journal, with the rule they broke',
        querystring: Type.Object({
          ...PageQuery,
          ingestionId: Type.Optional(Type.String()),
          code: Type.Optional(Type.String()),
        }),
        response: {
          200: Page(
            Type.Object({
              ingestionId: Type.String(),
              namespace: Type.String(),
              entity: Type.String(),
              code: Type.String(),
              message: Type.String(),
              record: Type.Record(Type.String(), Type.Unknown()),
              at: Type.String({ format: 'date-time' }),
            }),
          ),
          ...AUTH_ERRORS,
        },
      },
    },
    async (request) => {
      const { page, limit, ...filter } = request.query;
      const { rows, total } = await journals.processingErrors(filter, page, limit);
      return pageOf(rows, page, limit, total);
    },
  );
};
