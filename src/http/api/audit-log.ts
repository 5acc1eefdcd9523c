import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { auditExportLine } from '../../modules/audit/export-lines.js';
import type { AuditTrail } from '../../modules/audit/trail.js';
import { AuditEntry, AuditVerification } from './answer-schemas.js';
import { keyOfCursor, nextCursor } from './cursor.js';
import {
  AfterQuery,
  CURSOR_PAGING_DESCRIPTION,
  CursorPage,
  cursorPageOf,
  PageQuery,
  Problem,
} from './schemas.js';

/** Who may read the audit trail: the administrators and the configuration readers, as before. */
const AUDIT_READ = ['users:manage', 'configuration:read'] as const;

/** The `next` cursor of an audit page: the row id of its last entry. */
function auditCursor(id: number | undefined): string | null {
  return nextCursor('audit-log', id, (k) => [k]);
}

/**
 * The audit trail: its pages, its export as JSON Lines, and the verification of its chain. Kept
 * in one piece: a Fastify plugin is the unit of encapsulation, and each of its three routes is short.
 */
export const auditLogRoutes: FastifyPluginAsyncTypebox<{ audit: AuditTrail }> = async (app, { audit }) => {
  app.get(
    '/api/v1/audit-log',
    {
      config: { permission: AUDIT_READ },
      schema: {
        operationId: 'listAuditEntries',
        tags: ['audit'],
        summary: 'The audit trail, newest first',
        description: `One entry per change (configuration uploads and deletions, reprocessing runs and schedule changes, reversals, sessions closed by hand, users created, changed and given a password, credentials created and revoked, sign-ins and the hourly count of failed ones), newest first in the order they were written: who, when, what, the changed thing before and after, and the entry's place in the hash chain. Dry runs and reads leave no entry. ${CURSOR_PAGING_DESCRIPTION}`,
        querystring: Type.Object({ ...PageQuery, ...AfterQuery }),
        response: { 200: CursorPage(AuditEntry), 400: Problem },
      },
    },
    async (request) => {
      const { page, limit, after } = request.query;
      if (after !== undefined) {
        const [id] = keyOfCursor('audit-log', after, ['integer']);
        const found = await audit.list({ after: id }, limit);
        return cursorPageOf(found.rows, limit, auditCursor(found.next));
      }
      const found = await audit.list({ page }, limit);
      return cursorPageOf(found.rows, limit, auditCursor(found.next), { page, total: found.total ?? 0 });
    },
  );

  app.get(
    '/api/v1/audit-log/export',
    {
      config: { permission: AUDIT_READ },
      schema: {
        operationId: 'exportAuditEntries',
        tags: ['audit'],
        summary: 'The audit trail as JSON Lines, oldest first, streamed',
        description:
          'Every entry (or those past `afterSeq`) in the order written, one JSON object per line exactly as the list answers it, read page by page so memory stays flat at any length. Keep the file elsewhere: `ledgerflow audit verify --file` checks its chain, and an export that starts past position 1 verifies from its first entry.',
        querystring: Type.Object(
          {
            afterSeq: Type.Integer({
              minimum: 0,
              maximum: Number.MAX_SAFE_INTEGER,
              default: 0,
              description: 'Only entries at positions past this one (0: all).',
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.String({ description: 'JSON Lines (`application/jsonl`), one entry per line.' }),
        },
      },
    },
    async (request, reply) => {
      const entries = audit.entries(request.query.afterSeq);
      async function* lines(): AsyncGenerator<string> {
        for await (const entry of entries) yield auditExportLine(entry);
      }
      const untyped: FastifyReply = reply;
      return untyped
        .type('application/jsonl; charset=utf-8')
        .header('content-disposition', 'attachment; filename="audit-log.jsonl"')
        .send(Readable.from(lines()));
    },
  );

  app.get(
    '/api/v1/audit-log/verification',
    {
      config: { permission: AUDIT_READ },
      schema: {
        operationId: 'verifyAuditChain',
        tags: ['audit'],
        summary: 'Verify the stored audit chain from its first entry to its head',
        description:
          'Reads every entry once in the order written, recomputes each hash and checks each link, position and the chain head, and names the first bad entry: `changed` (its content or hash no longer matches), `deleted` (a position is missing), `reordered` (an entry is out of its place) or `inserted` (an entry that the writer did not append). Its cost grows with the trail; `ledgerflow audit verify` does the same on the store.',
        response: { 200: AuditVerification },
      },
    },
    async () => audit.verify(),
  );
};
