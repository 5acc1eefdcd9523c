/**
 * The one table of the roles a `journalDefinition` field may have (docs/domain/accounting.md,
 * Journal records and Direct journals). The configuration model takes the role names from it, the
 * `ledger/journal` entity its fields and mandatory flags, direct-journal processing the fields a
 * sender must supply, and the line store the fields it keeps out of a line's stored record.
 */

/** What one role means to direct journals and to the stored journals. */
export type JournalRoleRule =
  | {
      /** A direct journal's sender supplies the value; `mandatory`: on every line. */
      supplier: 'sender';
      mandatory: boolean;
      /**
       * A column of the stored journal or line holds the value, so a stored line record keeps
       * only the fields of the other roles and of none (its "extras").
       */
      column: boolean;
    }
  | {
      /** The service fills the value; a sender may not send it (not a `ledger/journal` field). */
      supplier: 'system';
      column: boolean;
    };

/** Every journal field role with its rule, in the order the configuration model lists them. */
export const JOURNAL_ROLES = {
  coreDate: { supplier: 'sender', mandatory: true, column: true },
  journalType: { supplier: 'sender', mandatory: true, column: true },
  accountingConfig: { supplier: 'sender', mandatory: true, column: true },
  account: { supplier: 'sender', mandatory: true, column: true },
  transactionAmount: { supplier: 'sender', mandatory: true, column: true },
  transactionCurrency: { supplier: 'sender', mandatory: true, column: true },
  journalId: { supplier: 'system', column: true },
  lineId: { supplier: 'system', column: true },
  reverses: { supplier: 'system', column: true },
  reversedBy: { supplier: 'system', column: true },
  journalLineNo: { supplier: 'system', column: true },
  ingestionId: { supplier: 'system', column: true },
  originJournalId: { supplier: 'sender', mandatory: true, column: true },
  originJournalLineId: { supplier: 'sender', mandatory: false, column: false },
  /** Several fields may have it: each carries the node's value of the field of that name. */
  node: { supplier: 'sender', mandatory: true, column: true },
} as const satisfies Record<string, JournalRoleRule>;

/** The role of a journal definition field. */
export type JournalFieldRole = keyof typeof JOURNAL_ROLES;

/** The roles whose values a column of the stored journal or line holds. */
export type ColumnJournalRole = {
  [R in JournalFieldRole]: (typeof JOURNAL_ROLES)[R]['column'] extends true ? R : never;
}[JournalFieldRole];

/** The role names, in table order. */
export const JOURNAL_FIELD_ROLES = Object.keys(JOURNAL_ROLES) as readonly JournalFieldRole[];

/** True when every line of a direct journal must carry a field of this role. */
export function isMandatorySenderRole(role: JournalFieldRole): boolean {
  const rule: JournalRoleRule = JOURNAL_ROLES[role];
  return rule.supplier === 'sender' && rule.mandatory;
}

/** True when a column of the stored journal or line holds the value of this role. */
export function isColumnRole(role: JournalFieldRole): role is ColumnJournalRole {
  return JOURNAL_ROLES[role].column;
}
