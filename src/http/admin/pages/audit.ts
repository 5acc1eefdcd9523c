import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import type { ChainReport } from '../../../modules/audit/verify.js';
import { type Html, html } from '../html.js';
import { currentJournalFields } from '../journal-fields.js';
import { emptyState, notice, page, pagination, table, when } from '../layout.js';
import { contextOf, pagingOf, queryText, sendPage } from '../request.js';
import { whatHtml, whoHtml } from './audit-words.js';

/** Whether the audit chain verifies, as the notice above the entries. */
function chainNotice(report: ChainReport): Html {
  if (report.fault === undefined) {
    return notice(
      'info',
      html`The chain verifies: ${report.entries} entries from the first to the head, last hash <code>${report.lastHash.slice(0, 16)}…</code>.`,
    );
  }
  return notice(
    'error',
    html`The chain does not verify: ${report.fault.message} (problem <code>${report.fault.problem}</code>, position ${report.fault.seq}).`,
  );
}

/**
 * The audit trail: who did what and when, each entry in words with its details as labelled
 * fields, newest first; the chain's verification on demand (it reads every entry, so it is not
 * run on every view).
 */
export function auditPages(app: FastifyInstance, services: Pick<Services, 'audit' | 'snapshots'>): void {
  app.get(
    '/admin/audit',
    { config: { adminPermission: ['users:manage', 'configuration:read'] } },
    async (request, reply) => {
      const context = contextOf(request);
      const { page: pageNo, limit } = pagingOf(request);
      const verify = queryText(request, 'verify') === '1';
      const [found, report, fields] = await Promise.all([
        services.audit.list({ page: pageNo }, limit),
        verify ? services.audit.verify() : undefined,
        currentJournalFields(services),
      ]);
      const status =
        report === undefined
          ? html`<form method="get" action="/admin/audit"><input type="hidden" name="verify" value="1"><button type="submit">Verify the chain</button> <span class="muted">Reads every entry and checks each hash and link (also <code>ledgerflow audit verify</code>).</span></form>`
          : chainNotice(report);
      const body =
        found.rows.length === 0
          ? emptyState(
              'No change yet. Every change (configuration, users, credentials, sign-ins, sessions closed by hand, reprocessing, reversals) is recorded here.',
            )
          : html`${table(
              'audit',
              [
                { label: '#', kind: 'num' },
                'When',
                { label: 'Who', kind: 'words' },
                { label: 'What', kind: 'words' },
              ],
              found.rows.map((e) => [String(e.seq), when(e.at), whoHtml(e), whatHtml(e, fields)]),
            )}${pagination('/admin/audit', {}, pageNo, limit, found.total ?? 0)}`;
      return sendPage(reply, page(context, 'Audit log', html`${status}${body}`));
    },
  );
}
