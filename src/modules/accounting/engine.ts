/**
 * The accounting engine (docs/domain/accounting.md, Business events): one business event in, its
 * journals or one rule-named processing error out. Pure and deterministic: configuration (prepared
 * once), the event, the clock and the id source go in; nothing is read or written elsewhere (house
 * style, after TigerBeetle's state machine). Direct journal ingestion (same page, Direct journals)
 * lives in `direct-journals.ts` and is re-exported here, so callers import the engine from one place.
 */
import { type DecimalText, decimalTextFromValue, negateDecimalText } from '../../lib/decimal.js';
import { parseIsoDate } from './dates.js';
import { eventFingerprint } from './event-fingerprint.js';
import { assembleJournals, type CandidateLine, type JournalCandidate } from './journal-assembly.js';
import type { ProcessingContext, ProcessingOutcome } from './journal-draft.js';
import type {
  ComponentReference,
  PreparedAccounting,
  PreparedComponent,
  PreparedNode,
  PreparedNodeConfig,
  PreparedPattern,
} from './prepare.js';
import { type ProcessingError, processingError } from './processing-error.js';

export { isPosted } from './business-date.js';
export type { DirectJournalGroup } from './direct-journals.js';
export { processDirectJournals } from './direct-journals.js';
export { nodeBusinessDate, nodeOpenPeriods } from './node-business-date.js';

const NO_COMPONENTS: readonly ComponentReference[] = [];

/**
 * Turns one validated business event (a `ledger/businessEvent` record: decimals as strings, dates
 * as `YYYY-MM-DD`) into journal drafts, following the rules of docs/domain/accounting.md: event
 * type, node, the posting components of the type whose accounting basis is assigned to the node,
 * their posting patterns (AUTO/POS/NEG signage, zero or absent amounts post nothing), account
 * lookup, grouping by (core date, node, accounting configuration, journal type), balance per
 * currency, periods and posting status, and reversals. All or nothing: the first broken rule is
 * returned as `unknown-event-type`, `unknown-node`, `unknown-posting-component`,
 * `unknown-accounting-config`, `unknown-journal-type`, `invalid-amount`, `invalid-currency`,
 * `invalid-date`, `no-account`, `no-journal`, `too-many-lines`, `unbalanced`, `invalid-time-zone`
 * or `closed-period`, with a message naming the configuration item at fault. The caller records the
 * error with the event and persists the drafts in one transaction; `ctx.newId` is called only when
 * the event succeeds. Throws a `RangeError` only when `ctx.businessDatePinned` is not an ISO date
 * (validated at start-up).
 */
export function processBusinessEvent(
  prepared: PreparedAccounting,
  event: Readonly<Record<string, unknown>>,
  ctx: ProcessingContext,
): ProcessingOutcome {
  const eventType = resolveEventType(prepared, event);
  if (typeof eventType !== 'string') return { ok: false, error: eventType };
  const node = resolveNode(prepared, event);
  if ('code' in node) return { ok: false, error: node };

  const references = prepared.componentsByEventType.get(eventType) ?? NO_COMPONENTS;
  const journals: JournalCandidate[] = [];
  let unassigned: string[] | undefined;
  for (const reference of references) {
    const component = reference.component;
    if (component === undefined) {
      return fail(
        'unknown-posting-component',
        `posting component "${reference.code}" of the postingComponentIdentifications entry for event ` +
          `type "${eventType}" is not in postingComponents`,
      );
    }
    const nodeConfig = node.configs.get(component.accountingConfigName);
    if (nodeConfig === undefined) {
      // A basis is active for a node only when assigned to it (docs/domain/accounting.md, Nodes).
      unassigned ??= [];
      unassigned.push(component.accountingConfigName);
      continue;
    }
    const error = applyComponent(component, event, node, nodeConfig, journals);
    if (error !== undefined) return { ok: false, error };
  }
  if (journals.length === 0)
    return fail('no-journal', noJournalMessage(eventType, references.length, unassigned ?? []));
  const outcome = assembleJournals(prepared, journals, ctx);
  if (outcome.ok) {
    // Every journal of the event, its automatic reversals too, carries the event's identity, so
    // that a rollback withdraws them all (docs/domain/accounting.md, Rollback of business events).
    const fingerprint = eventFingerprint(prepared.fingerprintAttributes, event);
    for (const draft of outcome.journals) draft.eventFingerprint = fingerprint;
  }
  return outcome;
}

function fail(code: ProcessingError['code'], message: string): ProcessingOutcome {
  return { ok: false, error: processingError(code, message) };
}

function resolveEventType(
  prepared: PreparedAccounting,
  event: Readonly<Record<string, unknown>>,
): string | ProcessingError {
  const attribute = prepared.eventTypeAttribute;
  if (attribute === undefined) {
    return processingError(
      'unknown-event-type',
      'businessEventDefinition has no attribute with role event_type, so no event type can be known',
    );
  }
  const value = event[attribute];
  if (typeof value === 'string' && prepared.eventTypes.has(value)) return value;
  return processingError(
    'unknown-event-type',
    `event type ${JSON.stringify(value ?? null)} (attribute "${attribute}") is not in businessEventTypes`,
  );
}

function resolveNode(
  prepared: PreparedAccounting,
  event: Readonly<Record<string, unknown>>,
): PreparedNode | ProcessingError {
  // The key `nodeKeyOf` makes of the event's node attribute values, built without the object:
  // `nodeAttributes` is sorted and holds each name once.
  let key = '';
  for (const name of prepared.nodeAttributes) {
    const value = event[name];
    if (key !== '') key += '\u0000';
    key += `${name}\u0001${typeof value === 'string' ? value : ''}`;
  }
  const node = prepared.nodesByKey.get(key);
  if (node !== undefined) return node;
  const shown: Record<string, unknown> = {};
  for (const name of prepared.nodeAttributes) shown[name] = event[name] ?? null;
  return processingError(
    'unknown-node',
    `no nodes entry has the fields ${JSON.stringify(shown)} (business event attributes with role node)`,
  );
}

/** Adds the lines of one component's patterns to the event's journals, grouped as they go. */
function applyComponent(
  component: PreparedComponent,
  event: Readonly<Record<string, unknown>>,
  node: PreparedNode,
  nodeConfig: PreparedNodeConfig,
  journals: JournalCandidate[],
): ProcessingError | undefined {
  const accountingConfig = component.accountingConfig;
  if (accountingConfig === undefined) {
    return processingError(
      'unknown-accounting-config',
      `accounting configuration "${component.accountingConfigName}" of posting component "${component.code}" ` +
        'is not in accountingConfigurations',
    );
  }
  const journalType = component.journalType;
  if (journalType === undefined) {
    return processingError(
      'unknown-journal-type',
      `journal type "${component.journalTypeCode}" of posting component "${component.code}" is not in journalTypes`,
    );
  }
  for (const pattern of component.patterns) {
    const posting = postingOf(component, pattern, event);
    if (posting === undefined) continue;
    if ('code' in posting) return posting;
    // One journal per (core date, accounting configuration, journal type); an event has few.
    let journal: JournalCandidate | undefined;
    for (const candidate of journals) {
      if (
        candidate.coreDay === posting.coreDay &&
        candidate.accountingConfig.name === accountingConfig.name &&
        candidate.journalType.code === journalType.code
      ) {
        journal = candidate;
        break;
      }
    }
    if (journal === undefined) {
      journal = {
        coreDay: posting.coreDay,
        node,
        nodeConfig,
        accountingConfig,
        journalType,
        components: [],
        copyEventAttributesOnly: true,
        lines: [],
      };
      journals.push(journal);
    }
    if (!journal.components.includes(component.code)) journal.components.push(component.code);
    journal.lines.push(posting.line);
  }
  return undefined;
}

/**
 * An amount attribute of an event as the patterns post it: read once, with its magnitude as the
 * debit and the magnitude's negation as the credit. `read` is `undefined` when the attribute is
 * not an exact decimal.
 */
interface EventAmount {
  raw: unknown;
  read: DecimalText | undefined;
  debit: DecimalText;
  credit: DecimalText;
}

/**
 * The last amount read: the patterns of an event mostly post the same attribute, so it is read
 * once per event, not once per pattern. Amounts are immutable, so sharing them is safe.
 */
let lastAmount: EventAmount | undefined;

function amountOf(raw: unknown): EventAmount {
  if (lastAmount !== undefined && lastAmount.raw === raw) return lastAmount;
  const read = decimalTextFromValue(raw);
  const debit = read === undefined || read.sign >= 0 ? read : negateDecimalText(read);
  lastAmount =
    debit === undefined
      ? { raw, read, debit: UNREADABLE, credit: UNREADABLE }
      : { raw, read, debit, credit: negateDecimalText(debit) };
  return lastAmount;
}

/** The debit and credit of an amount that is not a decimal; never posted. */
const UNREADABLE: DecimalText = { sign: 0, scale: 0, text: '', units: Number.NaN };

/**
 * One pattern applied to the event (docs/domain/accounting.md, Posting patterns): `undefined` when
 * it posts nothing (zero or absent amount, or a POS/NEG pattern of the other sign), a line with its
 * core day, or an error.
 */
function postingOf(
  component: PreparedComponent,
  pattern: PreparedPattern,
  event: Readonly<Record<string, unknown>>,
): { coreDay: number; line: CandidateLine } | ProcessingError | undefined {
  const raw = event[pattern.amountField];
  // An absent amount posts nothing, like a zero one (choice: optional amount attributes are
  // common, e.g. a tax amount that only some events carry).
  if (raw === undefined || raw === null || raw === '') return undefined;
  const amount = amountOf(raw);
  if (amount.read === undefined) {
    return processingError(
      'invalid-amount',
      `amount field "${pattern.amountField}" of ${whereOf(component, pattern)} is ${JSON.stringify(raw)}, not an exact decimal`,
    );
  }
  const amountSign = amount.read.sign;
  if (amountSign === 0) return undefined;
  if ((pattern.signage === 'POS' && amountSign < 0) || (pattern.signage === 'NEG' && amountSign > 0))
    return undefined;
  const currency = event[pattern.currencyField];
  if (typeof currency !== 'string' || currency === '') {
    return processingError(
      'invalid-currency',
      `currency field "${pattern.currencyField}" of ${whereOf(component, pattern)} is ${JSON.stringify(currency ?? null)}, not a currency code`,
    );
  }
  const dateValue = event[pattern.postingDateField];
  const coreDay = parseIsoDate(dateValue);
  if (coreDay === undefined) {
    return processingError(
      'invalid-date',
      `posting date field "${pattern.postingDateField}" of ${whereOf(component, pattern)} is ${JSON.stringify(dateValue ?? null)}, ` +
        'not a date YYYY-MM-DD',
    );
  }
  if (pattern.account === undefined) {
    return processingError(
      'no-account',
      `posting code "${pattern.postingCode}" of posting component "${component.code}" has no account in accountLookups`,
    );
  }
  // The signed line amount (debit positive). AUTO posts a negative amount's absolute value on the
  // opposite side (choice); POS and NEG post the absolute value on their own side.
  const flipped = pattern.signage === 'AUTO' && amountSign < 0;
  const debit = (pattern.side === 'DR') !== flipped;
  return {
    coreDay,
    line: {
      account: pattern.account,
      amount: debit ? amount.debit : amount.credit,
      currency,
      source: event,
    },
  };
}

function whereOf(component: PreparedComponent, pattern: PreparedPattern): string {
  return `posting pattern "${pattern.postingCode}" of posting component "${component.code}"`;
}

function noJournalMessage(eventType: string, componentCount: number, unassigned: readonly string[]): string {
  if (componentCount === 0) {
    return `event type "${eventType}" has no posting component in postingComponentIdentifications`;
  }
  if (unassigned.length === componentCount) {
    const bases = [...new Set(unassigned)].map((name) => `"${name}"`).join(', ');
    return `the accounting configurations of the posting components of event type "${eventType}" (${bases}) are not assigned to the node`;
  }
  return `every amount of the posting patterns of event type "${eventType}" is zero, absent or of a sign its pattern skips`;
}
