/**
 * The accounting engine (docs/domain/accounting.md, Business events): one business event in, its
 * journals or one rule-named processing error out. Pure and deterministic: configuration (prepared
 * once), the event, the clock and the id source go in; nothing is read or written elsewhere (house
 * style, after TigerBeetle's state machine). Direct journal ingestion (same page, Direct journals)
 * lives in `direct-journals.ts` and is re-exported here, so callers import the engine from one place.
 */
import { abs, type Decimal, decimalFromValue, negate, sign } from '../../lib/decimal.js';
import { parseIsoDate } from './dates.js';
import { assembleJournals, type CandidateLine, type JournalCandidate } from './journal-assembly.js';
import type { ProcessingContext, ProcessingOutcome } from './journal-draft.js';
import {
  nodeKeyOf,
  type PreparedAccounting,
  type PreparedComponent,
  type PreparedNode,
  type PreparedNodeConfig,
  type PreparedPattern,
} from './prepare.js';
import { type ProcessingError, processingError } from './processing-error.js';

export { isPosted } from './business-date.js';
export type { DirectJournalGroup } from './direct-journals.js';
export { processDirectJournals } from './direct-journals.js';
export { nodeBusinessDate, nodeOpenPeriods } from './node-business-date.js';

/** A journal of one event in the making, with the posting components that fed it. */
type EventJournal = JournalCandidate & { components: string[] };

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

  const references = prepared.componentsByEventType.get(eventType) ?? [];
  const groups = new Map<string, EventJournal>();
  const unassigned: string[] = [];
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
      unassigned.push(component.accountingConfigName);
      continue;
    }
    const error = applyComponent(component, event, node, nodeConfig, groups);
    if (error !== undefined) return { ok: false, error };
  }
  if (groups.size === 0)
    return fail('no-journal', noJournalMessage(eventType, references.length, unassigned));
  const candidates = [...groups.values()].map((group) => ({
    ...group,
    label: `journal of posting component${group.components.length > 1 ? 's' : ''} ${group.components
      .map((code) => `"${code}"`)
      .join(', ')}`,
  }));
  return assembleJournals(prepared, candidates, ctx);
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
  const fields: Record<string, string> = {};
  for (const name of prepared.nodeAttributes) {
    const value = event[name];
    fields[name] = typeof value === 'string' ? value : '';
  }
  const node = prepared.nodesByKey.get(nodeKeyOf(fields));
  if (node !== undefined) return node;
  const shown: Record<string, unknown> = {};
  for (const name of prepared.nodeAttributes) shown[name] = event[name] ?? null;
  return processingError(
    'unknown-node',
    `no nodes entry has the fields ${JSON.stringify(shown)} (business event attributes with role node)`,
  );
}

/** Adds the lines of one component's patterns to the event's journal groups. */
function applyComponent(
  component: PreparedComponent,
  event: Readonly<Record<string, unknown>>,
  node: PreparedNode,
  nodeConfig: PreparedNodeConfig,
  groups: Map<string, EventJournal>,
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
    const key = `${posting.coreDay}\u0000${accountingConfig.name}\u0000${journalType.code}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = {
        coreDay: posting.coreDay,
        node,
        nodeConfig,
        accountingConfig,
        journalType,
        label: '',
        copyEventAttributesOnly: true,
        lines: [],
        components: [],
      };
      groups.set(key, group);
    }
    if (!group.components.includes(component.code)) group.components.push(component.code);
    group.lines.push(posting.line);
  }
  return undefined;
}

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
  const amount = decimalFromValue(raw);
  const where = `posting pattern "${pattern.postingCode}" of posting component "${component.code}"`;
  if (amount === undefined) {
    return processingError(
      'invalid-amount',
      `amount field "${pattern.amountField}" of ${where} is ${JSON.stringify(raw)}, not an exact decimal`,
    );
  }
  const amountSign = sign(amount);
  if (amountSign === 0) return undefined;
  if ((pattern.signage === 'POS' && amountSign < 0) || (pattern.signage === 'NEG' && amountSign > 0))
    return undefined;
  const currency = event[pattern.currencyField];
  if (typeof currency !== 'string' || currency === '') {
    return processingError(
      'invalid-currency',
      `currency field "${pattern.currencyField}" of ${where} is ${JSON.stringify(currency ?? null)}, not a currency code`,
    );
  }
  const dateValue = event[pattern.postingDateField];
  const coreDay = parseIsoDate(dateValue);
  if (coreDay === undefined) {
    return processingError(
      'invalid-date',
      `posting date field "${pattern.postingDateField}" of ${where} is ${JSON.stringify(dateValue ?? null)}, ` +
        'not a date YYYY-MM-DD',
    );
  }
  if (pattern.account === undefined) {
    return processingError(
      'no-account',
      `posting code "${pattern.postingCode}" of posting component "${component.code}" has no account in accountLookups`,
    );
  }
  return {
    coreDay,
    line: { account: pattern.account, amount: signedAmount(pattern, amount), currency, source: event },
  };
}

/**
 * The signed line amount (debit positive). AUTO posts a negative amount's absolute value on the
 * opposite side (choice); POS and NEG post the absolute value on their own side.
 */
function signedAmount(pattern: PreparedPattern, amount: Decimal): Decimal {
  const magnitude = abs(amount);
  const flipped = pattern.signage === 'AUTO' && sign(amount) < 0;
  const debit = (pattern.side === 'DR') !== flipped;
  return debit ? magnitude : negate(magnitude);
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
