import { Type } from '@sinclair/typebox';
import type { JournalStatus } from './journal-draft.js';

/**
 * The rules of what a caller may send to read journals (docs/reference.md, Journals), written
 * once: the REST schemas (`http/api/journals.ts`) are built from these fragments, and the
 * administration pages read their filters with the same ones. The ingestion and error code
 * filters are bounded like a path parameter by the route (`StoredNameFilter`); accounting
 * configuration, account and currency are compared as they are and bounded by nothing but the
 * request size, since the names they match carry no length limit; the dates are checked by the
 * route (`DateQuery`).
 */

/** Longest journal id in a path. */
export const JOURNAL_ID_LENGTH_MAX = 100;
/** The statuses a journal list may be filtered by. */
export const JOURNAL_STATUSES: readonly JournalStatus[] = ['posted', 'unposted'];

/** A journal id. */
export const JournalId = Type.String({ maxLength: JOURNAL_ID_LENGTH_MAX });
/** A journal status, as a list filter. */
export const JournalStatusFilter = Type.Union(JOURNAL_STATUSES.map((status) => Type.Literal(status)));
