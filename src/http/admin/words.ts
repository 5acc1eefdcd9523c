import type { ReversalSelection } from '../../modules/accounting/reversal-store.js';
import type { PeriodBasis, PeriodStateName } from '../../modules/periods/service.js';
import { type Html, type HtmlValue, html } from './html.js';
import { type JournalFields, nodeHtml } from './journal-fields.js';
import { when } from './layout.js';
import { formatCount } from './money.js';

/**
 * How the pages say things in words: periods by their month, counts with their noun, the
 * selection of a reversal, a node by its labels. Dates stay ISO (`YYYY-MM-DD`) everywhere, in
 * every browser language; only a period, which is a calendar month, is named by its month.
 */

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/** The month of an ISO day (`2026-11-01` → `November 2026`), or the text itself when it is none. */
export function monthName(day: string): string {
  const match = /^(\d{4})-(\d{2})/.exec(day);
  const month = match === null ? undefined : MONTHS[Number(match[2]) - 1];
  return match === null || month === undefined ? day : `${month} ${match[1]}`;
}

/**
 * A period as people name it: its month (periods are calendar months), or its first and last
 * day when it spans more than one month.
 */
export function periodName(firstDay: string, lastDay: string): string {
  return firstDay.slice(0, 7) === lastDay.slice(0, 7) ? monthName(firstDay) : `${firstDay} to ${lastDay}`;
}

/** A count with its noun, singular for one: `1 journal`, `3 journals`. */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${formatCount(n)} ${n === 1 ? singular : plural}`;
}

/** A camelCase key in words (`signInsEnded` → `Sign ins ended`), for a member no label names. */
export function keyInWords(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[-_]+/g, ' ')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * An identifier (a client id, an e-mail, a hash) that may break anywhere when it must, unlike
 * the words around it, which are never broken.
 */
export function idHtml(id: string): Html {
  return html`<span class="breakable">${id}</span>`;
}

/** A link to a journal by its id, which breaks at its hyphens only. */
export function journalLink(journalId: string): Html {
  return html`<a class="id" href="/admin/journals/${encodeURIComponent(journalId)}">${journalId}</a>`;
}

/** A node by its field labels, or by its field names in words when no journal definition labels them. */
export function nodeWords(node: Readonly<Record<string, string>>, fields?: JournalFields): Html | string {
  return fields === undefined ? nodeText(node) : nodeHtml(node, fields);
}

/** A node as plain text (`Legal entity LF_NL · Branch AMS`), for a notice carried in a link. */
export function nodeText(node: Readonly<Record<string, string>>, fields?: JournalFields): string {
  const label = fields === undefined ? keyInWords : (name: string) => fields.label(name);
  const known = fields === undefined ? [] : fields.nodeFields.filter((name) => Object.hasOwn(node, name));
  const others = Object.keys(node)
    .filter((name) => !known.includes(name))
    .sort();
  return [...known, ...others].map((name) => `${label(name)} ${node[name] ?? ''}`).join(' · ');
}

/**
 * A link to a journal by the end of its id (`…c580f2b6ce30`), for a narrow column that names a
 * second journal beside the row's own: the last group of a journal id is its random part, so its
 * end tells journals apart where their starts (the time they were made) are alike. The whole id
 * is the link's title and its accessible name.
 */
export function journalShortLink(journalId: string): Html {
  const end =
    journalId.length > JOURNAL_ID_SHOWN_CHARS ? `…${journalId.slice(-JOURNAL_ID_SHOWN_CHARS)}` : journalId;
  return html`<a class="id" href="/admin/journals/${encodeURIComponent(journalId)}" title="${journalId}" aria-label="journal ${journalId}">${end}</a>`;
}

/** Characters of a journal id a narrow column shows: its last group. */
const JOURNAL_ID_SHOWN_CHARS = 12;

/** Journal ids of a selection listed one by one at most; more are counted. */
const SELECTED_IDS_LISTED_MAX = 3;

/** What a reversal selects, in words, with links to the journal or session it names. */
export function selectionHtml(selection: ReversalSelection): Html | string {
  if ('journalIds' in selection) {
    const ids = selection.journalIds;
    if (ids.length === 1) return html`journal ${journalLink(ids[0] ?? '')}`;
    // A few ids are listed; a long selection (up to a thousand) is counted, as a list shows it.
    return ids.length <= SELECTED_IDS_LISTED_MAX
      ? html`journals ${ids.map((id, i) => html`${i === 0 ? '' : ', '}${journalLink(id)}`)}`
      : `${countOf(ids.length, 'journal')} by id`;
  }
  if ('ingestionId' in selection)
    return html`every journal of ingestion <a class="id" href="/admin/ingestions/${encodeURIComponent(selection.ingestionId)}">${selection.ingestionId}</a>`;
  if ('originJournalId' in selection)
    return html`every journal of origin journal ${idHtml(selection.originJournalId)}`;
  return html`journals of ${selection.accountingConfig} dated ${selection.from} to ${selection.to}`;
}

/** Whether a JSON value read back from the store is a reversal selection the pages can say. */
export function isSelection(value: unknown): value is ReversalSelection {
  if (value === null || typeof value !== 'object') return false;
  const members = value as Record<string, unknown>;
  if (Array.isArray(members.journalIds)) return members.journalIds.every((id) => typeof id === 'string');
  if (typeof members.ingestionId === 'string' || typeof members.originJournalId === 'string') return true;
  return (
    typeof members.accountingConfig === 'string' &&
    typeof members.from === 'string' &&
    typeof members.to === 'string'
  );
}

/** An instant as a sentence says it: `2026-11-20 10:00:00 UTC`. */
function instantText(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** A period's state as plain words for a sentence: `locked by x@example.test on 2026-11-20 …`. */
export function periodStateText(p: PeriodStateFacts): string {
  const byOn = `${p.actedBy === null ? '' : ` by ${p.actedBy}`}${p.actedAt === null ? '' : ` on ${instantText(p.actedAt)}`}`;
  switch (p.basis) {
    case 'calendar':
      return p.state === 'open' ? 'open' : 'closed by the calendar';
    case 'grace':
      return 'in its grace time';
    case 'closed-by-hand':
      return `closed${byOn}`;
    case 'locked-by-hand':
      return `locked${byOn}`;
    case 'reopened':
      return `reopened${byOn}`;
  }
}

/** What the pages need of a period's state: the state, why, who set it by hand and why. */
export interface PeriodStateFacts {
  state: PeriodStateName;
  basis: PeriodBasis;
  actedBy: string | null;
  actedAt: string | null;
  reason?: string | null;
}

/**
 * A period's state in words, as an accountant says it: `Open`, `In its grace time`, `Closed by
 * the calendar`, `Closed by …`, `Locked by …`, `Reopened by …`, with when and why beneath.
 */
export function periodStateHtml(p: PeriodStateFacts): Html {
  const by = p.actedBy === null ? '' : html` by ${idHtml(p.actedBy)}`;
  const on = p.actedAt === null ? '' : html` <span class="why">on ${when(p.actedAt)}</span>`;
  const label = (text: string, rest: HtmlValue = '') =>
    html`<span class="state state-${p.state}">${text}</span>${rest}`;
  switch (p.basis) {
    case 'calendar':
      return p.state === 'open' ? label('Open') : label('Closed by the calendar');
    case 'grace':
      return label(
        'In its grace time',
        html` <span class="why">closed by the calendar when the node's grace time ends</span>`,
      );
    case 'closed-by-hand':
      return label('Closed', html`${by}${on}`);
    case 'locked-by-hand':
      return label('Locked', html`${by}${on}`);
    case 'reopened':
      return label(
        'Reopened',
        html`${by}${on}${p.reason === null || p.reason === undefined ? '' : html` <span class="why">because ${p.reason}</span>`}`,
      );
  }
}
