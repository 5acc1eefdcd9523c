/**
 * Journals ingested directly (docs/domain/accounting.md, Direct journals): `ledger/journal` records
 * are journal lines sent by an upstream system. Lines with the same `originJournalId` in one chunk
 * form one journal, which passes the same checks as a generated one and gets system ids, posting
 * status and, for a reversing type, its reversal.
 */
import { type DecimalText, decimalTextFromValue } from '../../lib/decimal.js';
import {
  isMandatorySenderRole,
  JOURNAL_FIELD_ROLES,
  type JournalFieldRole,
} from '../configuration/journal-roles.js';
import { parseIsoDate } from './dates.js';
import { assembleJournals, type CandidateLine, type JournalCandidate } from './journal-assembly.js';
import type { ProcessingContext, ProcessingOutcome } from './journal-draft.js';
import { nodeKeyOf, type PreparedAccounting, type PreparedNode } from './prepare.js';
import { type ProcessingError, processingError } from './processing-error.js';

/**
 * Roles of one field each that a sender must supply on every line (docs/domain/accounting.md,
 * Direct journals); the fields of role `node` are read together, as the node's field values.
 */
const SENDER_ROLES: readonly JournalFieldRole[] = JOURNAL_FIELD_ROLES.filter(
  (role) => role !== 'node' && isMandatorySenderRole(role),
);

/** The outcome of the lines of one origin journal, with the positions of its records. */
export interface DirectJournalGroup {
  /** `undefined` for a line without an origin journal id (a group of its own). */
  originJournalId: string | undefined;
  /** Indexes into the `lines` argument, in order. */
  recordIndexes: number[];
  outcome: ProcessingOutcome;
}

/** What the caller knows of the journals stored before this chunk (see `processDirectJournals`). */
export type DirectJournalContext = ProcessingContext & {
  seenOriginJournalIds?: ReadonlySet<string>;
  /** Accounting configuration → origin journal id → the journal id already holding it. */
  bookedOriginJournals?: ReadonlyMap<string, ReadonlyMap<string, string>>;
};

/** A checked line and the journal-level values it names. */
interface ReadLine {
  candidateLine: CandidateLine;
  coreDate: string;
  journalType: string;
  accountingConfig: string;
  nodeKey: string;
}

/**
 * Processes the `ledger/journal` records of one chunk (Direct journals): groups them by
 * `originJournalId` in order of first appearance and turns each group into a journal (and its
 * reversal for a reversing type) or one error for the whole group. Per line, in order:
 * `missing-field` (a sender role without a field in journalDefinition or without a value),
 * `unknown-node`, `unknown-accounting-config`, `accounting-config-not-assigned`,
 * `unknown-journal-type`, `invalid-amount`, `zero-amount`, `invalid-currency`, `invalid-date`;
 * then per journal `inconsistent-journal` (lines disagree on core date, type, basis or node),
 * `journal-split-across-chunks`, `duplicate-origin-journal`, `too-many-lines`, `unbalanced`,
 * `invalid-time-zone`, `closed-period`. What was stored before can only be seen by the caller:
 * it passes the origin journal ids already stored for earlier chunks of the session in
 * `seenOriginJournalIds` (a journal split across chunks), and the journals already holding an
 * origin journal id, in any session, in `bookedOriginJournals` (a journal sent again). Throws a
 * `RangeError` only when `ctx.businessDatePinned` is not an ISO date (validated at start-up).
 */
export function processDirectJournals(
  prepared: PreparedAccounting,
  lines: readonly Readonly<Record<string, unknown>>[],
  ctx: DirectJournalContext,
): DirectJournalGroup[] {
  const originField = prepared.journalDefinition.fieldByRole.get('originJournalId');
  const groups = new Map<string, DirectJournalGroup>();
  const result: DirectJournalGroup[] = [];
  lines.forEach((line, index) => {
    const origin = originField === undefined ? undefined : line[originField];
    if (typeof origin !== 'string' || origin === '') {
      const error = missingField(prepared, 'originJournalId', `line ${index + 1} of the chunk`, origin);
      result.push({ originJournalId: undefined, recordIndexes: [index], outcome: { ok: false, error } });
      return;
    }
    let group = groups.get(origin);
    if (group === undefined) {
      group = { originJournalId: origin, recordIndexes: [], outcome: { ok: true, journals: [] } };
      groups.set(origin, group);
      result.push(group);
    }
    group.recordIndexes.push(index);
  });
  for (const group of groups.values()) {
    const origin = group.originJournalId ?? '';
    const groupLines = group.recordIndexes.map((index) => lines[index] ?? {});
    group.outcome = processOriginJournal(prepared, origin, groupLines, ctx);
  }
  return result;
}

function processOriginJournal(
  prepared: PreparedAccounting,
  origin: string,
  lines: readonly Readonly<Record<string, unknown>>[],
  ctx: DirectJournalContext,
): ProcessingOutcome {
  const read: ReadLine[] = [];
  for (const [index, line] of lines.entries()) {
    const result = readLine(prepared, line, `line ${index + 1} of origin journal "${origin}"`);
    if ('code' in result) return { ok: false, error: result };
    read.push(result);
  }
  const first = read[0];
  if (first === undefined) return { ok: true, journals: [] };
  for (const [index, line] of read.entries()) {
    for (const key of ['coreDate', 'journalType', 'accountingConfig', 'nodeKey'] as const) {
      if (line[key] !== first[key]) {
        const what = key === 'nodeKey' ? 'node' : key;
        return fail(
          'inconsistent-journal',
          `line ${index + 1} of origin journal "${origin}" differs from line 1 in ${what}; the lines of one ` +
            'journal share core date, journal type, accounting configuration and node',
        );
      }
    }
  }
  if (ctx.seenOriginJournalIds?.has(origin) === true) {
    return fail(
      'journal-split-across-chunks',
      `origin journal "${origin}" already has lines from an earlier chunk; a journal is sent in one chunk`,
    );
  }
  // A feed sent again, in any session, must not book the same journal twice.
  const holder = ctx.bookedOriginJournals?.get(first.accountingConfig)?.get(origin);
  if (holder !== undefined) {
    return fail(
      'duplicate-origin-journal',
      `origin journal "${origin}" is already journal ${holder} of accounting configuration ` +
        `"${first.accountingConfig}"; an origin journal id is booked once per accounting configuration`,
    );
  }
  const node = prepared.nodesByKey.get(first.nodeKey);
  const accountingConfig = prepared.accountingConfigs.get(first.accountingConfig);
  const journalType = prepared.journalTypes.get(first.journalType);
  const nodeConfig = node?.configs.get(first.accountingConfig);
  const coreDay = parseIsoDate(first.coreDate);
  if (node === undefined || accountingConfig === undefined || journalType === undefined) {
    throw new Error('readLine resolved the node, accounting configuration and journal type');
  }
  if (nodeConfig === undefined || coreDay === undefined) {
    throw new Error('readLine resolved the node config and the core date');
  }
  const candidate: JournalCandidate = {
    coreDay,
    node,
    nodeConfig,
    accountingConfig,
    journalType,
    originJournalId: origin,
    components: [],
    copyEventAttributesOnly: false,
    lines: read.map((line) => line.candidateLine),
  };
  return assembleJournals(prepared, [candidate], ctx);
}

function fail(code: ProcessingError['code'], message: string): ProcessingOutcome {
  return { ok: false, error: processingError(code, message) };
}

function missingField(
  prepared: PreparedAccounting,
  role: JournalFieldRole,
  where: string,
  value: unknown,
): ProcessingError {
  const field = prepared.journalDefinition.fieldByRole.get(role);
  if (field === undefined) {
    return processingError(
      'missing-field',
      `journalDefinition has no field with role ${role}, which ${where} needs`,
    );
  }
  return processingError(
    'missing-field',
    `field "${field}" (role ${role}) of ${where} is ${JSON.stringify(value ?? null)}; the sender must supply it`,
  );
}

/** Reads and checks one line; `where` names it in messages. */
function readLine(
  prepared: PreparedAccounting,
  line: Readonly<Record<string, unknown>>,
  where: string,
): ReadLine | ProcessingError {
  const values = new Map<JournalFieldRole, unknown>();
  const nodeFields: Record<string, string> = {};
  const missing = readSenderFields(prepared, line, where, values, nodeFields);
  if (missing !== undefined) return missing;
  const nodeKey = nodeKeyOf(nodeFields);
  const node = prepared.nodesByKey.get(nodeKey);
  if (node === undefined) {
    return processingError(
      'unknown-node',
      `no nodes entry has the fields ${JSON.stringify(nodeFields)} (journal fields with role node) of ${where}`,
    );
  }
  const accountingConfig = String(values.get('accountingConfig'));
  const configError = checkAccountingConfig(prepared, node, nodeFields, accountingConfig, where);
  if (configError !== undefined) return configError;
  const journalType = String(values.get('journalType'));
  if (!prepared.journalTypes.has(journalType)) {
    return processingError(
      'unknown-journal-type',
      `journal type "${journalType}" of ${where} is not in journalTypes`,
    );
  }
  const amount = readAmount(values.get('transactionAmount'), where);
  if ('code' in amount) return amount;
  const currency = values.get('transactionCurrency');
  if (typeof currency !== 'string') {
    return processingError(
      'invalid-currency',
      `transaction currency ${JSON.stringify(currency)} of ${where} is not a currency code`,
    );
  }
  const coreDate = values.get('coreDate');
  if (typeof coreDate !== 'string' || parseIsoDate(coreDate) === undefined) {
    return processingError(
      'invalid-date',
      `core date ${JSON.stringify(coreDate)} of ${where} is not a date YYYY-MM-DD`,
    );
  }
  const originLineField = prepared.journalDefinition.fieldByRole.get('originJournalLineId');
  return {
    candidateLine: {
      account: String(values.get('account')),
      amount,
      currency,
      source: line,
      originJournalLineId: originLineField === undefined ? undefined : line[originLineField],
    },
    coreDate,
    journalType,
    accountingConfig,
    nodeKey,
  };
}

/**
 * Reads what the sender must supply into the caller's `values` (by role) and `nodeFields` (the
 * fields of role `node`), so that a line costs no more than these two; the `missing-field` error
 * of the first sender role without a field or value, or else of the first node field that is not
 * a non-empty string.
 */
function readSenderFields(
  prepared: PreparedAccounting,
  line: Readonly<Record<string, unknown>>,
  where: string,
  values: Map<JournalFieldRole, unknown>,
  nodeFields: Record<string, string>,
): ProcessingError | undefined {
  for (const role of SENDER_ROLES) {
    const field = prepared.journalDefinition.fieldByRole.get(role);
    const value = field === undefined ? undefined : line[field];
    if (value === undefined || value === null || value === '')
      return missingField(prepared, role, where, value);
    values.set(role, value);
  }
  for (const name of prepared.journalDefinition.nodeFields) {
    const value = line[name];
    if (typeof value !== 'string' || value === '') {
      return processingError(
        'missing-field',
        `field "${name}" (role node) of ${where} is ${JSON.stringify(value ?? null)}; the sender must supply it`,
      );
    }
    nodeFields[name] = value;
  }
  return undefined;
}

/**
 * The `unknown-accounting-config` or `accounting-config-not-assigned` error of the line's
 * accounting configuration, or `undefined` when the node of `nodeFields` has it.
 */
function checkAccountingConfig(
  prepared: PreparedAccounting,
  node: PreparedNode,
  nodeFields: Readonly<Record<string, string>>,
  accountingConfig: string,
  where: string,
): ProcessingError | undefined {
  if (!prepared.accountingConfigs.has(accountingConfig)) {
    return processingError(
      'unknown-accounting-config',
      `accounting configuration "${accountingConfig}" of ${where} is not in accountingConfigurations`,
    );
  }
  if (!node.configs.has(accountingConfig)) {
    return processingError(
      'accounting-config-not-assigned',
      `accounting configuration "${accountingConfig}" of ${where} is not assigned to node ` +
        `${JSON.stringify(nodeFields)} (nodeConfigs)`,
    );
  }
  return undefined;
}

/** The line's transaction amount as an exact, non-zero decimal, or `invalid-amount` or `zero-amount`. */
function readAmount(rawAmount: unknown, where: string): DecimalText | ProcessingError {
  const amount = decimalTextFromValue(rawAmount);
  if (amount === undefined) {
    return processingError(
      'invalid-amount',
      `transaction amount ${JSON.stringify(rawAmount)} of ${where} is not an exact decimal`,
    );
  }
  if (amount.sign === 0) {
    return processingError(
      'zero-amount',
      `transaction amount of ${where} is zero; journal lines are never zero`,
    );
  }
  return amount;
}
