import { AppError } from './errors.js';

/**
 * Assertions of the invariants a change must keep, checked where the change is made (as
 * TigerBeetle's TIGER_STYLE asks: an assertion turns a fault into a stop, never into wrong data).
 * A broken invariant throws `invariant-broken` naming the rule, inside the transaction of the
 * change, so that change rolls back whole and nothing wrong is committed. They guard the
 * service's own code, not its callers: input a caller got wrong is refused by the rules of the
 * request, with problems of their own, before any change is made.
 */

/** Throws `invariant-broken` naming `rule` and, worked out only then, what broke it. */
export function invariant(holds: boolean, rule: string, detail: () => string): asserts holds {
  if (!holds) throw new AppError('invariant-broken', `${rule}: ${detail()}`, { rule });
}
