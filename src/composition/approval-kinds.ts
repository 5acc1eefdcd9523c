/**
 * The kinds of action four-eyes approval can hold back, wired to the services that review and
 * run them (docs/domain/approvals.md). A kind is one entry of `approvalKinds`: its name (listed
 * in `APPROVAL_KIND_NAMES`), a `review` that works out the binding without changing anything,
 * and an `execute` that runs the action only while the stored data is still what the binding
 * says. The payload of each kind is the JSON value its route stores; each reads back what it
 * wrote.
 */

import { requestDigest } from '../lib/idempotency.js';
import type { ReversalCounts } from '../modules/accounting/reversal-store.js';
import type { ReversalRequest, ReversalService } from '../modules/accounting/reversals.js';
import {
  APPROVAL_KIND_NAMES,
  type ApprovalActor,
  type ApprovalKind,
  type ApprovalKinds,
} from '../modules/approvals/kinds.js';
import { type AuditActor, actorOfCaller } from '../modules/audit/entry.js';
import type { ConfigurationDiff } from '../modules/configuration/diff.js';
import type { ConfigurationService } from '../modules/configuration/service.js';
import type { ProcessingDataCounts } from '../modules/configuration/store.js';
import type { PeriodBinding, PeriodService, PeriodTarget } from '../modules/periods/service.js';
import type { PreparedConfiguration } from './prepared-configuration.js';

/** The payload of a configuration upload: the body as sent (UTF-8 text) and the keep option. */
export interface ConfigurationUploadPayload {
  document: string;
  keepProcessingData: boolean;
}

/** The payload of a period reopening: the period and the maker's reason. */
export interface PeriodReopenPayload extends PeriodTarget {
  reason: string;
}

/** Who a review's dry run is made for: no one changes anything in a review. */
const REVIEWER: AuditActor = { user: 'approval-review' };

/** The changes of a configuration listed with a request: the first ones, by path. */
const CHANGES_LISTED_MAX = 50;

/** How an approver reads a configuration change at a glance: the counts, and the first changes. */
function diffSummary(diff: ConfigurationDiff): Record<string, unknown> {
  const count = (kind: string) => diff.changes.filter((change) => change.kind === kind).length;
  return {
    added: count('added'),
    removed: count('removed'),
    changed: count('changed'),
    truncated: diff.truncated,
    changes: diff.changes.slice(0, CHANGES_LISTED_MAX).map(({ path, kind }) => ({ path, kind })),
  };
}

/** The approver, who runs an approved action, as the audit trail names who made a change. */
function approverOf(actor: ApprovalActor): AuditActor {
  return { user: actor.approverEmail, clientId: actor.approverClientId };
}

/** The counts of a dry run as the binding of a change that wipes keeps them. */
function wouldDeleteOf(dryRun: Record<string, unknown>): ProcessingDataCounts {
  return dryRun.wouldDelete as ProcessingDataCounts;
}

/** A configuration upload (plain, or keeping the processing data). */
function configurationUploadKind(configuration: ConfigurationService<PreparedConfiguration>): ApprovalKind {
  const bytesOf = (payload: ConfigurationUploadPayload) => Buffer.from(payload.document, 'utf8');
  return {
    name: 'configuration.upload',
    async review(payload) {
      const upload = payload as ConfigurationUploadPayload;
      const { dryRun, documentSha256, diff } = await configuration.review(
        bytesOf(upload),
        REVIEWER,
        upload.keepProcessingData,
      );
      if (!('wouldDelete' in dryRun)) throw new Error('a dry run answers what it would delete');
      return {
        documentSha256,
        revision: dryRun.revision,
        dryRun: {
          version: dryRun.version,
          sections: dryRun.sections,
          keepProcessingData: upload.keepProcessingData,
          wouldDelete: dryRun.wouldDelete,
        },
        summary: diffSummary(diff),
      };
    },
    async execute(payload, bound, actor) {
      const upload = payload as ConfigurationUploadPayload;
      const outcome = await configuration.uploadBound(bytesOf(upload), approverOf(actor), {
        documentSha256: bound.documentSha256,
        keepProcessingData: upload.keepProcessingData,
        revision: bound.revision,
        wouldDelete: wouldDeleteOf(bound.dryRun),
        approvalRequestId: actor.requestId,
      });
      return outcome.kind === 'moved'
        ? outcome
        : { kind: 'done', outcome: { revision: outcome.revision, deleted: outcome.deleted } };
    },
  };
}

/** A configuration deletion: it wipes the processing data. */
function configurationDeleteKind(configuration: ConfigurationService<PreparedConfiguration>): ApprovalKind {
  return {
    name: 'configuration.delete',
    async review() {
      const { wouldDelete, revision } = await configuration.wipeDryRun();
      return {
        documentSha256: configuration.emptyDocumentSha256(),
        revision,
        dryRun: { wouldDelete },
        summary: {},
      };
    },
    async execute(_payload, bound, actor) {
      const outcome = await configuration.wipeBound(approverOf(actor), {
        revision: bound.revision,
        wouldDelete: wouldDeleteOf(bound.dryRun),
        approvalRequestId: actor.requestId,
      });
      return outcome.kind === 'moved'
        ? outcome
        : { kind: 'done', outcome: { revision: outcome.revision, deleted: outcome.deleted } };
    },
  };
}

/** A reversal by selection (`POST /api/v1/reversals`). */
function reversalKind(reversals: ReversalService<PreparedConfiguration>): ApprovalKind {
  return {
    name: 'reversal',
    async review(payload) {
      const request = payload as ReversalRequest;
      const { revision, counts, digest } = await reversals.review(request);
      // What the approver reads before deciding: what is selected, and why.
      const summary = {
        selection: request.selection,
        reason: request.reason,
        postingDate: request.postingDate ?? null,
      };
      return { documentSha256: digest, revision, dryRun: { ...counts }, summary };
    },
    async execute(payload, bound, actor) {
      const outcome = await reversals.reverseBound(
        payload as ReversalRequest,
        actorOfCaller(actor.approverEmail, actor.approverClientId),
        {
          revision: bound.revision,
          counts: bound.dryRun as unknown as ReversalCounts,
          approvalRequestId: actor.requestId,
        },
      );
      if (outcome.kind === 'moved') return outcome;
      const { reversalId, journals, lines } = outcome.reversal;
      return { kind: 'done', outcome: { reversalId, journals, lines } };
    },
  };
}

/**
 * A period reopening. It binds to the period's state as the approver saw it (`basis` and
 * `actedAt`: a close, a lock or another reopening in between makes the request invalid); the
 * configuration revision is recorded with it, but a change of configuration that keeps the node
 * does not touch a period's state.
 */
function periodReopenKind(periods: PeriodService<PreparedConfiguration>): ApprovalKind {
  const targetOf = ({ accountingConfig, node, firstDay }: PeriodReopenPayload): PeriodTarget => ({
    accountingConfig,
    node,
    firstDay,
  });
  return {
    name: 'period.reopen',
    async review(payload) {
      const reopen = payload as PeriodReopenPayload;
      const { period, revision } = await periods.reviewReopen(targetOf(reopen), reopen.reason);
      return {
        documentSha256: requestDigest(reopen),
        revision,
        dryRun: {
          state: period.state,
          basis: period.basis,
          actedBy: period.actedBy,
          actedAt: period.actedAt,
        },
        summary: {
          accountingConfig: reopen.accountingConfig,
          node: reopen.node,
          firstDay: period.firstDay,
          lastDay: period.lastDay,
          reason: reopen.reason,
        },
      };
    },
    async execute(payload, bound, actor) {
      const reopen = payload as PeriodReopenPayload;
      const outcome = await periods.reopenBound(
        targetOf(reopen),
        reopen.reason,
        actorOfCaller(actor.approverEmail, actor.approverClientId),
        { ...(bound.dryRun as unknown as PeriodBinding), approvalRequestId: actor.requestId },
      );
      if ('moved' in outcome) return { kind: 'moved', detail: outcome.moved };
      const { state, basis, actedAt } = outcome.period;
      return { kind: 'done', outcome: { state, basis, actedAt } };
    },
  };
}

/**
 * Every kind, by name. A new kind is one more function like those above and one more entry here,
 * with its name added to `APPROVAL_KIND_NAMES`.
 */
export function approvalKinds(services: {
  configuration: ConfigurationService<PreparedConfiguration>;
  reversals: ReversalService<PreparedConfiguration>;
  periods: PeriodService<PreparedConfiguration>;
}): ApprovalKinds {
  const kinds = [
    configurationUploadKind(services.configuration),
    configurationDeleteKind(services.configuration),
    reversalKind(services.reversals),
    periodReopenKind(services.periods),
  ];
  const byName: ApprovalKinds = new Map(kinds.map((kind) => [kind.name, kind]));
  const missing = APPROVAL_KIND_NAMES.filter((name) => !byName.has(name));
  if (missing.length > 0) throw new Error(`approval kinds without an implementation: ${missing.join(', ')}`);
  return byName;
}
