import type { ApprovalKindName } from '../../../modules/approvals/kinds.js';
import { type AuditAction, type AuditEntry, SYSTEM_ACTOR_NAME } from '../../../modules/audit/entry.js';
import { type Html, type HtmlValue, html } from '../html.js';
import type { JournalFields } from '../journal-fields.js';
import { when } from '../layout.js';
import { formatCount } from '../money.js';
import { countOf, idHtml, isSelection, keyInWords, nodeWords, periodName, selectionHtml } from '../words.js';
import { dryRunWords, KIND_LABEL, nodeOf, wipedWords } from './approvals.js';
import { extractChange } from './extract-audit-words.js';

/** One labelled field of an entry: what it is, and its value in words. */
type Field = readonly [label: string, value: HtmlValue];

/** An entry in words: a sentence saying what was done, and its details as labelled fields. */
interface Described {
  what: HtmlValue;
  fields: Field[];
  /** The members of `details` the fields already say; the others are listed after them. */
  said: readonly string[];
}

/**
 * Members of `details` never listed: the cause is said with who acted, and the client ids say
 * again the credential the entry names (or the interface, for a signed-in user).
 */
const NEVER_LISTED = new Set(['cause', 'clientId', 'makerClientId', 'decidedByClientId', 'status']);

/** Longest text of a value shown in a field; the API and the export carry the whole of it. */
const VALUE_SHOWN_CHARS_MAX = 300;

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function recordOf(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * Any value in words, for the members no sentence names: an instant as a time, a list joined,
 * an object as its members in words, never JSON; long text cut (the export has all of it).
 */
function valueHtml(value: unknown): HtmlValue {
  if (value === null || value === undefined) return html`<span class="muted">none</span>`;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return formatCount(value);
  if (typeof value === 'string') {
    if (ISO_INSTANT.test(value)) return when(value);
    return value.length > VALUE_SHOWN_CHARS_MAX ? `${value.slice(0, VALUE_SHOWN_CHARS_MAX - 1)}…` : value;
  }
  if (Array.isArray(value))
    return value.length === 0
      ? html`<span class="muted">none</span>`
      : html`${value.map((item, i) => html`${i === 0 ? '' : ', '}${valueHtml(item)}`)}`;
  const members = Object.entries(value as Record<string, unknown>);
  if (members.length === 0) return html`<span class="muted">none</span>`;
  return html`${members.map(([key, member], i) => html`${i === 0 ? '' : ' · '}${keyInWords(key)} ${valueHtml(member)}`)}`;
}

/** A value and what it was: `admin, viewer (was viewer)`; the value alone when it did not change. */
function changedHtml(after: unknown, before: unknown): HtmlValue {
  if (before === undefined || JSON.stringify(before) === JSON.stringify(after)) return valueHtml(after);
  return html`${valueHtml(after)} <span class="muted">(was ${valueHtml(before)})</span>`;
}

const USER_LABELS: Record<string, string> = {
  email: 'E-mail',
  displayName: 'Name',
  roles: 'Roles',
  disabled: 'Disabled',
};

const SCHEDULE_LABELS: Record<string, string> = {
  mode: 'Mode',
  dailyAt: 'Daily at (UTC)',
  intervalMinutes: 'Every (minutes)',
  maxAttempts: 'Most attempts per record',
};

/** The members of `before` and `after` under their labels, each with what it was when it changed. */
function changedFields(
  labels: Record<string, string>,
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  onlyChanged: boolean,
): Field[] {
  const now = after ?? {};
  return Object.keys(labels)
    .filter((key) => key in now || (before !== null && key in before))
    .filter((key) => !onlyChanged || JSON.stringify(before?.[key]) !== JSON.stringify(now[key]))
    .map((key): Field => [labels[key] ?? keyInWords(key), changedHtml(now[key], before?.[key])]);
}

/** A credential as its summary names it: its client id, and its description unless it is that id. */
function credentialFields(summary: Record<string, unknown>): Field[] {
  const clientId = text(summary.clientId) ?? '';
  const name = text(summary.name);
  const fields: Field[] = [['Owner', idHtml(text(summary.ownerEmail) ?? '')]];
  if (name !== undefined && name !== clientId) fields.push(['Description', name]);
  if (text(summary.expiresAt) !== undefined) fields.push(['Expires', when(text(summary.expiresAt))]);
  return fields;
}

function isKind(value: unknown): value is ApprovalKindName {
  return typeof value === 'string' && Object.hasOwn(KIND_LABEL, value);
}

/** Describes an entry in words, from the entry, its details and the journal fields that name a node. */
type Describer = (entry: AuditEntry, details: Record<string, unknown>, fields: JournalFields) => Described;

/** A configuration upload or deletion: the revision it made, the sections and what it wiped. */
function configurationChange(sentence: (revision: Html) => Html): Describer {
  return (entry) => {
    const { before, after } = entry;
    const revision = html`<a href="/admin/configuration/revisions/${String(entry.revision)}">revision ${String(entry.revision)}</a>`;
    const wiped = wipedWords(entry.deleted);
    const counted = Object.entries(entry.sections).filter(([, n]) => n > 0);
    const sections = html`${counted.map(([name, n], i) => html`${i === 0 ? '' : ', '}<span class="nowrap">${keyInWords(name).toLowerCase()}: ${formatCount(n)}</span>`)}`;
    return {
      what: sentence(revision),
      fields: [
        ...(before === null ? [] : [['Before', `revision ${String(before.revision ?? '')}`] as const]),
        ...(entry.version === null ? [] : [['Format version', entry.version] as const]),
        ...(counted.length === 0 ? [] : [['Sections', sections] as const]),
        [
          'Processing data',
          entry.deleted === null
            ? html`<span class="muted">not counted</span>`
            : wiped === undefined
              ? 'nothing wiped'
              : `wiped ${wiped}`,
        ],
        ...(text(after?.sha256) === undefined
          ? []
          : [['SHA-256', html`<code>${text(after?.sha256)}</code>`] as const]),
      ],
      said: [],
    };
  };
}

/** A reprocessing run started: by hand or by the schedule, its selection and what it queued. */
function reprocessRun(_entry: AuditEntry, details: Record<string, unknown>): Described {
  const run = count(details.run);
  return {
    what: html`Started ${run === undefined ? 'a reprocessing run' : html`<a href="/admin/reprocessing/runs/${String(run)}">reprocessing run ${String(run)}</a>`}`,
    fields: [
      ['Started', details.trigger === 'scheduled' ? 'by the schedule' : 'by hand'],
      ['Selection', details.selection === undefined ? '' : valueHtml(details.selection)],
      ['Queued', countOf(count(details.queued) ?? 0, 'record')],
      ['Skipped', countOf(count(details.skipped) ?? 0, 'record')],
    ],
    said: ['run', 'trigger', 'selection', 'queued', 'skipped'],
  };
}

/** The reprocessing schedule changed: each setting, with what it was. */
function scheduleChange(entry: AuditEntry): Described {
  return {
    what: 'Changed the reprocessing schedule',
    fields: changedFields(SCHEDULE_LABELS, entry.before, entry.after, false),
    said: Object.keys(SCHEDULE_LABELS),
  };
}

/** A reversal: its request, reason, selection, posting date and the journals it wrote. */
function reversal(_entry: AuditEntry, details: Record<string, unknown>): Described {
  const reversalId = text(details.reversalId);
  const journals = countOf(count(details.journals) ?? 0, 'journal');
  const postingDate = text(details.postingDate);
  return {
    what: html`Reversed ${reversalId === undefined ? journals : html`<a href="/admin/reversals/${encodeURIComponent(reversalId)}">${journals}</a>`}`,
    fields: [
      ['Reason', text(details.reason) ?? ''],
      [
        'Selection',
        isSelection(details.selection) ? selectionHtml(details.selection) : valueHtml(details.selection),
      ],
      ['Posting date', postingDate ?? 'by the dating rule'],
      ['Reversal journals', `${journals}, ${countOf(count(details.lines) ?? 0, 'line')}`],
      ...(count(details.alreadyReversed)
        ? [['Already reversed', formatCount(count(details.alreadyReversed) ?? 0)] as const]
        : []),
      ...(count(details.notReversible)
        ? [['Not reversible', formatCount(count(details.notReversible) ?? 0)] as const]
        : []),
    ],
    said: [
      'reversalId',
      'reason',
      'selection',
      'postingDate',
      'journals',
      'lines',
      'alreadyReversed',
      'notReversible',
    ],
  };
}

/** An ingestion session closed by hand. */
function sessionClose(_entry: AuditEntry, details: Record<string, unknown>): Described {
  const ingestionId = text(details.ingestionId) ?? '';
  return {
    what: html`Closed the ingestion session <a class="id" href="/admin/ingestions/${encodeURIComponent(ingestionId)}">${ingestionId}</a> by hand`,
    fields: [
      ...(text(details.ingestionName) === undefined
        ? []
        : [['Name', text(details.ingestionName) ?? ''] as const]),
      ['Namespace', text(details.namespace) ?? ''],
    ],
    said: ['ingestionId', 'ingestionName', 'namespace'],
  };
}

/** A user created, with the name, roles and state it was given. */
function userCreate(entry: AuditEntry): Described {
  return {
    what: html`Created the user ${idHtml(text(entry.after?.email) ?? '')}`,
    fields: changedFields(
      { displayName: 'Name', roles: 'Roles', disabled: 'Disabled' },
      null,
      entry.after,
      false,
    ),
    said: [],
  };
}

/** A user changed: what changed, with what it was. */
function userUpdate(entry: AuditEntry): Described {
  return {
    what: html`Changed the user ${idHtml(text(entry.after?.email) ?? text(entry.before?.email) ?? '')}`,
    fields: changedFields(USER_LABELS, entry.before, entry.after, true),
    said: [],
  };
}

/** A password set or generated for a user, and the sign-ins it ended. */
function passwordSet(_entry: AuditEntry, details: Record<string, unknown>): Described {
  return {
    what: html`${details.generated === true ? 'Generated a new password' : 'Set a new password'} for ${idHtml(text(details.email) ?? '')}`,
    fields: [['Sign-ins ended', formatCount(count(details.signInsEnded) ?? 0)]],
    said: ['email', 'generated', 'signInsEnded'],
  };
}

/** An API credential created or revoked (`verb`), named by its client id. */
function credentialChange(verb: string): Describer {
  return (entry) => {
    const summary = entry.after ?? entry.before ?? {};
    return {
      what: html`${verb} the API credential <code>${text(summary.clientId) ?? ''}</code>`,
      fields: credentialFields(summary),
      said: [],
    };
  };
}

/** A sign-in to the interface: from where, and until when. */
function signIn(_entry: AuditEntry, details: Record<string, unknown>): Described {
  return {
    what: 'Signed in to the administration interface',
    fields: [
      ['From address', idHtml(text(details.address) ?? '')],
      ['Until', when(text(details.endsAt))],
    ],
    said: ['address', 'endsAt'],
  };
}

/** The failed sign-ins as one user in an hour, counted. */
function signInFailures(_entry: AuditEntry, details: Record<string, unknown>): Described {
  return {
    what: html`${countOf(count(details.failures) ?? 0, 'failed sign-in')} as ${idHtml(text(details.email) ?? '')}`,
    fields: [
      ['From', when(text(details.windowStartedAt))],
      ['To', when(text(details.windowEndedAt))],
    ],
    said: ['email', 'failures', 'windowStartedAt', 'windowEndedAt'],
  };
}

/** A change of webhooks (`sentence`): the subscription, address, event types or delivery it names. */
function webhookChange(sentence: string): Describer {
  return (_entry, details) => {
    const subscriptionId = text(details.subscriptionId);
    return {
      what: sentence,
      fields: [
        ...(subscriptionId === undefined
          ? []
          : [
              [
                'Subscription',
                html`<a class="id" href="/admin/webhooks/${encodeURIComponent(subscriptionId)}">${subscriptionId}</a>`,
              ] as const,
            ]),
        ...(text(details.url) === undefined ? [] : [['Address', idHtml(text(details.url) ?? '')] as const]),
        ...(details.eventTypes === undefined
          ? []
          : [['Event types', valueHtml(details.eventTypes)] as const]),
        ...(count(details.overlapSeconds) === undefined
          ? []
          : [['The old secret signs until', when(text(details.overlapUntil))] as const]),
        ...(text(details.deliveryId) === undefined
          ? []
          : [['Delivery', idHtml(text(details.deliveryId) ?? '')] as const]),
        ...(text(details.since) === undefined ? [] : [['Events since', when(text(details.since))] as const]),
      ],
      said: ['subscriptionId', 'url', 'eventTypes', 'overlapSeconds', 'overlapUntil', 'deliveryId', 'since'],
    };
  };
}

/** A step of an approval request (`verb`): its kind, maker, reason, dry run and outcome. */
function approvalStep(verb: string): Describer {
  return (entry, details) => {
    const requestId = text(details.requestId) ?? '';
    const kind = details.kind;
    const problem = recordOf(details.problem);
    return {
      what: html`${verb}: <a href="/admin/approvals/${encodeURIComponent(requestId)}">${isKind(kind) ? KIND_LABEL[kind].toLowerCase() : 'a request'}</a>`,
      fields: [
        ...(entry.action === 'approval.requested'
          ? []
          : [['Maker', idHtml(text(details.maker) ?? '')] as const]),
        ...(text(details.reason) === undefined ? [] : [['Reason', text(details.reason) ?? ''] as const]),
        ...(isKind(kind) ? [['What it does', dryRunWords(kind, recordOf(details.dryRun))] as const] : []),
        ...(text(problem.code) === undefined
          ? []
          : [['Problem', `${text(problem.code) ?? ''}: ${text(problem.detail) ?? ''}`] as const]),
        ...(details.outcome === undefined ? [] : [['Outcome', valueHtml(details.outcome)] as const]),
        ['Document SHA-256', html`<code>${text(details.documentSha256) ?? ''}</code>`],
      ],
      said: ['requestId', 'kind', 'maker', 'reason', 'dryRun', 'problem', 'outcome', 'documentSha256'],
    };
  };
}

/** A period closed, locked or reopened by hand (`verb`): its node, days, states and snapshot. */
function periodChange(verb: string): Describer {
  return (_entry, details, fields) => {
    const firstDay = text(details.firstDay) ?? '';
    const node = nodeOf(details.node);
    const snapshotId = text(details.snapshotId);
    return {
      what: html`${verb} ${periodName(firstDay, text(details.lastDay) ?? firstDay)}`,
      fields: [
        ['Node', node === undefined ? '' : nodeWords(node, fields)],
        ['Accounting configuration', text(details.accountingConfig) ?? ''],
        ['Days', `${firstDay} to ${text(details.lastDay) ?? ''}`],
        [
          'State',
          html`${text(details.after) ?? ''} <span class="muted">(was ${text(details.before) ?? 'as the calendar set it'})</span>`,
        ],
        ...(text(details.reason) === undefined ? [] : [['Reason', text(details.reason) ?? ''] as const]),
        ...(snapshotId === undefined
          ? []
          : [
              [
                'Snapshot',
                html`<a href="/admin/periods/snapshots/${encodeURIComponent(snapshotId)}">trial balance</a>, SHA-256 <code>${text(details.hash) ?? ''}</code>`,
              ] as const,
            ]),
      ],
      said: [
        'accountingConfig',
        'node',
        'firstDay',
        'lastDay',
        'before',
        'after',
        'reason',
        'snapshotId',
        'hash',
      ],
    };
  };
}

/** What each action's entry says (docs/reference.md, Audit trail, lists what each holds). */
const DESCRIBERS: { readonly [A in AuditAction]: Describer } = {
  'configuration.upload': configurationChange((revision) => html`Uploaded the configuration as ${revision}`),
  'configuration.delete': configurationChange((revision) => html`Emptied the configuration (${revision})`),
  'processing.reprocess': reprocessRun,
  'processing.reprocess-schedule': scheduleChange,
  'journals.reverse': reversal,
  'ingestions.close': sessionClose,
  'users.create': userCreate,
  'users.update': userUpdate,
  'users.set-password': passwordSet,
  'credentials.create': credentialChange('Created'),
  'credentials.revoke': credentialChange('Revoked'),
  'auth.sign-in': signIn,
  'auth.sign-in-failures': signInFailures,
  'webhooks.subscription-create': webhookChange('Added a webhook subscription'),
  'webhooks.subscription-update': webhookChange('Changed a webhook subscription'),
  'webhooks.subscription-pause': webhookChange('Paused a webhook subscription'),
  'webhooks.subscription-resume': webhookChange('Resumed a webhook subscription'),
  'webhooks.subscription-delete': webhookChange('Deleted a webhook subscription'),
  'webhooks.secret-create': webhookChange('Created the webhook signing secret'),
  'webhooks.secret-rotate': webhookChange('Rotated the webhook signing secret'),
  'webhooks.redeliver': webhookChange('Asked for webhook deliveries again'),
  'extracts.configuration-create': extractChange('Created an extraction configuration'),
  'extracts.configuration-update': extractChange('Changed an extraction configuration'),
  'extracts.configuration-delete': extractChange('Deleted an extraction configuration'),
  'extracts.increment': extractChange('Acknowledged an incremental extract: its offset moved'),
  'extracts.execution-start': extractChange('Started an asynchronous extraction'),
  'approval.requested': approvalStep('Asked for approval'),
  'approval.approved': approvalStep('Approved'),
  'approval.rejected': approvalStep('Rejected'),
  'approval.canceled': approvalStep('Canceled'),
  'approval.invalidated': approvalStep('Found invalid when approved, nothing ran'),
  'approval.failed': approvalStep('Approved, and the action failed'),
  'periods.close': periodChange('Closed'),
  'periods.lock': periodChange('Locked'),
  'periods.reopen': periodChange('Reopened'),
};

/** What an entry says, by its action. */
function describe(entry: AuditEntry, fields: JournalFields): Described {
  return DESCRIBERS[entry.action](entry, recordOf(entry.details), fields);
}

/**
 * Who made the change: the user, with the client id of the credential when it came through the
 * API; the service itself with the cause it acted for; the command line with its user.
 */
export function whoHtml(entry: AuditEntry): Html {
  const cause = text(recordOf(entry.details).cause);
  if (entry.actor === SYSTEM_ACTOR_NAME)
    return html`The service${cause === undefined ? '' : html` <span class="why">because ${cause}</span>`}`;
  if (entry.actor.startsWith('cli:'))
    return html`The command line <span class="why">as the system user ${idHtml(entry.actor.slice('cli:'.length))}</span>`;
  return html`${idHtml(entry.actor)}${entry.clientId === null ? '' : html` <span class="why">through the API, with the credential <code>${entry.clientId}</code></span>`}`;
}

/** An entry's sentence, its labelled fields (a definition list) and its action's name. */
export function whatHtml(entry: AuditEntry, fields: JournalFields): Html {
  const { what, fields: said, said: keys } = describe(entry, fields);
  const details = recordOf(entry.details);
  const others = Object.entries(details).filter(([key]) => !keys.includes(key) && !NEVER_LISTED.has(key));
  const listed: Field[] = [
    ...said,
    ...others.map(([key, value]): Field => [keyInWords(key), valueHtml(value)]),
  ];
  return html`<p class="entry-what">${what} <small class="muted action-name">${entry.action}</small></p>${
    listed.length === 0
      ? ''
      : html`<dl class="entry">${listed.map(([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`)}</dl>`
  }`;
}
