import type { JournalFieldRole } from '../configuration/model.js';

/**
 * One `journalDefinition.fields` entry as processing needs it. Its own file because both the
 * prepared revision (`prepare.ts`) and the line records compiled from it (`line-record.ts`) are
 * made of it, and `prepare.ts` builds on `line-record.ts`.
 */
export interface PreparedJournalField {
  name: string;
  role: JournalFieldRole | undefined;
  /** No role and the name of a business event attribute: the line takes the event's value. */
  copiesEventAttribute: boolean;
}
