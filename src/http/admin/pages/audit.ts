import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import type { AuditEntry } from '../../../modules/audit/entry.js';
import type { ChainReport } from '../../../modules/audit/verify.js';
import { type Html, html } from '../html.js';
import { emptyState, notice, page, pagination, table, when } from '../layout.js';
import { contextOf, pagingOf, queryText, sendPage } from '../request.js';

/** Longest picture of a summary shown in a cell; the API and the export carry the whole of it. */
const SUMMARY_SHOWN_CHARS_MAX = 160;

/** A summary or details object as one short line (`key: value, …`), or a dash. */
function shortText(value: Record<string, unknown> | null): string {
  if (value === null) return '—';
  const text = Object.entries(value)
    .map(([key, member]) => `${key}: ${typeof member === 'string' ? member : JSON.stringify(member)}`)
    .join(', ');
  return text.length > SUMMARY_SHOWN_CHARS_MAX
    ? `${text.slice(0, SUMMARY_SHOWN_CHARS_MAX - 1)}…`
    : text || '—';
}

/** An entry's action; a reversal's with its reason and a link to it. */
function actionHtml(entry: AuditEntry): Html | string {
  const details = entry.details ?? {};
  if (entry.action !== 'journals.reverse' || typeof details.reversalId !== 'string') return entry.action;
  return html`${entry.action}: <a href="/admin/reversals/${encodeURIComponent(details.reversalId)}">${String(details.journals ?? 0)} journals</a>, “${String(details.reason ?? '')}”`;
}

/** What a configuration change wiped, or nothing. */
function deletedText(entry: AuditEntry): string {
  const d = entry.deleted;
  return d === null
    ? ''
    : ` (wiped ${d.ingestions ?? 0} sessions, ${d.records ?? 0} records, ${d.journals ?? 0} journals)`;
}

function whoHtml(entry: AuditEntry): Html {
  return entry.clientId === null
    ? html`${entry.actor}`
    : html`${entry.actor}<br><span class="muted">via ${entry.clientId}</span>`;
}

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
 * The audit trail: who did what and when, the changed thing before and after, newest first;
 * the chain's verification on demand (it reads every entry, so it is not run on every view).
 */
export function auditPages(app: FastifyInstance, services: Pick<Services, 'audit'>): void {
  app.get(
    '/admin/audit',
    { config: { adminPermission: ['users:manage', 'configuration:read'] } },
    async (request, reply) => {
      const context = contextOf(request);
      const { page: pageNo, limit } = pagingOf(request);
      const verify = queryText(request, 'verify') === '1';
      const [found, report] = await Promise.all([
        services.audit.list({ page: pageNo }, limit),
        verify ? services.audit.verify() : undefined,
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
              ['#', 'When', 'Who', 'Action', 'Before', 'After', 'Details'],
              found.rows.map((e) => [
                e.seq,
                when(e.at),
                whoHtml(e),
                actionHtml(e),
                shortText(e.before),
                `${shortText(e.after)}${deletedText(e)}`,
                shortText(e.details),
              ]),
            )}${pagination('/admin/audit', {}, pageNo, limit, found.total ?? 0)}`;
      return sendPage(reply, page(context, 'Audit log', html`${status}${body}`));
    },
  );
}
