import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  JournalId,
  JournalStatusFilter,
  ProcessingErrorStateFilter,
} from '../../modules/accounting/inputs.js';
import type { JournalQueries } from '../../modules/accounting/journal-queries.js';
import type { JournalKey } from '../../modules/accounting/store.js';
import { Balances, Journal, ProcessingError } from './answer-schemas.js';
import { keyOfCursor, nextCursor } from './cursor.js';
import type { ApiApp } from './route-app.js';
import {
  AfterQuery,
  CURSOR_PAGING_DESCRIPTION,
  CursorPage,
  cursorPageOf,
  DateQuery,
  PageQuery,
  Problem,
  StoredNameFilter,
} from './schemas.js';

/** The `next` cursor of a journals page. */
function journalCursor(key: JournalKey | undefined): string | null {
  return nextCursor('journals', key, (k) => [k.coreDate, k.createdAt, k.journalId]);
}

/** The `next` cursor of a processing errors page. */
function processingErrorCursor(id: number | undefined): string | null {
  return nextCursor('processing-errors', id, (k) => [k]);
}

/** Who may read journals, balances and processing errors: every route of this plugin. */
const JOURNALS_READ = { permission: 'journals:read' as const };

/** Journals, balances and processing errors: the read side of the accounting engine. */
export const journalRoutes: FastifyPluginAsyncTypebox<{ journals: JournalQueries }> = async (
  app,
  { journals },
) => {
  registerJournalRoutes(app, journals);
  registerBalancesRoute(app, journals);
  registerProcessingErrorsRoute(app, journals);
};

/** `GET /api/v1/journals` and `/api/v1/journals/:journalId`: journals by core date, and one. */
function registerJournalRoutes(app: ApiApp, journals: JournalQueries): void {
  app.get(
    '/api/v1/journals',
    {
      config: JOURNALS_READ,
      schema: {
        operationId: 'listJournals',
        tags: ['journals'],
        summary: 'Journals by core date',
        description: CURSOR_PAGING_DESCRIPTION,
        querystring: Type.Object({
          ...PageQuery,
          status: Type.Optional(JournalStatusFilter),
          ingestionId: Type.Optional(StoredNameFilter),
          accountingConfig: Type.Optional(Type.String()),
          from: Type.Optional(DateQuery('Core date from (inclusive), a date YYYY-MM-DD.')),
          to: Type.Optional(DateQuery('Core date to (exclusive), a date YYYY-MM-DD.')),
          reversalId: Type.Optional({
            ...StoredNameFilter,
            description: 'The reversal journals of one reversal request (`POST /api/v1/reversals`).',
          }),
          ...AfterQuery,
        }),
        response: { 200: CursorPage(Journal), 400: Problem },
      },
    },
    async (request) => {
      const { page, limit, after, ...filter } = request.query;
      if (after !== undefined) {
        const [coreDate, createdAt, journalId] = keyOfCursor('journals', after, ['text', 'text', 'text']);
        const found = await journals.listAfter(filter, { coreDate, createdAt, journalId }, limit);
        return cursorPageOf(found.rows, limit, journalCursor(found.next));
      }
      const found = await journals.list(filter, page, limit);
      return cursorPageOf(found.rows, limit, journalCursor(found.next), { page, total: found.total });
    },
  );

  app.get(
    '/api/v1/journals/:journalId',
    {
      config: JOURNALS_READ,
      schema: {
        operationId: 'getJournal',
        tags: ['journals'],
        summary: 'One journal',
        params: Type.Object({ journalId: JournalId }),
        response: { 200: Journal, 404: Problem },
      },
    },
    async (request) => journals.get(request.params.journalId),
  );
}

/** `GET /api/v1/balances`: the balances of posted journals. */
function registerBalancesRoute(app: ApiApp, journals: JournalQueries): void {
  app.get(
    '/api/v1/balances',
    {
      config: JOURNALS_READ,
      schema: {
        operationId: 'getBalances',
        tags: ['journals'],
        summary: 'Balances of posted journals per accounting configuration, node, account and currency',
        querystring: Type.Object({
          accountingConfig: Type.Optional(Type.String()),
          asOf: Type.Optional(DateQuery('Count posted journals with a core date on or before this day.')),
          account: Type.Optional(Type.String()),
          currency: Type.Optional(Type.String()),
        }),
        response: {
          200: Balances,
          400: Problem,
        },
      },
    },
    async (request) => ({ data: await journals.balances(request.query) }),
  );
}

/** `GET /api/v1/processing-errors`: the records that produced no journal, by page or by cursor. */
function registerProcessingErrorsRoute(app: ApiApp, journals: JournalQueries): void {
  app.get(
    '/api/v1/processing-errors',
    {
      config: JOURNALS_READ,
      schema: {
        operationId: 'listProcessingErrors',
        tags: ['journals'],
        summary: 'Records that produced no journal, with the rule they broke',
        description: CURSOR_PAGING_DESCRIPTION,
        querystring: Type.Object({
          ...PageQuery,
          ingestionId: Type.Optional(StoredNameFilter),
          code: Type.Optional(StoredNameFilter),
          state: Type.Optional({
            ...ProcessingErrorStateFilter,
            description:
              '`open` (the default): errors still to fix; `queued`: waiting in a reprocessing run; `closed`: posted when reprocessed.',
          }),
          ...AfterQuery,
        }),
        response: {
          200: CursorPage(ProcessingError),
          400: Problem,
        },
      },
    },
    async (request) => {
      const { page, limit, after, ...filter } = request.query;
      if (after !== undefined) {
        const [id] = keyOfCursor('processing-errors', after, ['integer']);
        const found = await journals.processingErrorsAfter(filter, id, limit);
        return cursorPageOf(found.rows, limit, processingErrorCursor(found.next));
      }
      const found = await journals.processingErrors(filter, page, limit);
      return cursorPageOf(found.rows, limit, processingErrorCursor(found.next), { page, total: found.total });
    },
  );
}
