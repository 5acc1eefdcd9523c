/**
 * Verification of an audit chain, the same for the store and for an exported file
 * (docs/adr/0026-audit-trail.md): walk the entries in the order they were written, recompute each
 * hash and check each link and position, and name the first entry that is wrong and how.
 */
import { type AuditEntry, auditHashOf, type ChainHead, GENESIS_HASH } from './entry.js';

/** How an entry is wrong. */
export type ChainProblem = 'changed' | 'deleted' | 'reordered' | 'inserted';

/** The first bad entry: its position in the chain, its row id when known, and what is wrong. */
export interface ChainFault {
  problem: ChainProblem;
  seq: number;
  id: number | null;
  message: string;
}

/** The outcome of a verification: entries read, the last good position and hash, the fault. */
export interface ChainReport {
  ok: boolean;
  entries: number;
  lastSeq: number;
  lastHash: string;
  fault?: ChainFault;
}

/** Where a walk starts and what it may ask along the way. */
export interface ChainCheck {
  /**
   * `genesis` (a whole chain: the first entry must be position 1 after the genesis hash) or
   * `first-entry` (an export that starts later: its first entry's position and link are taken
   * as given, and checked against the entry itself).
   */
  start: 'genesis' | 'first-entry';
  /** Whether an entry at this position exists anywhere in the chain read (tells moved from lost). */
  hasSeq(seq: number): Promise<boolean>;
  /** The store's chain head: entries past it were put in outside the writer, missing ones removed. */
  head?: ChainHead;
  /**
   * Reads the head again: an entry past the head read at the start may have been appended while
   * the walk ran, and is inserted only if the head read after it does not cover it either.
   */
  refreshHead?(): Promise<ChainHead>;
}

function fault(
  problem: ChainProblem,
  entry: Pick<AuditEntry, 'seq' | 'id'> | number,
  message: string,
): ChainFault {
  return typeof entry === 'number'
    ? { problem, seq: entry, id: null, message }
    : { problem, seq: entry.seq, id: entry.id, message };
}

/** The fault of `entry`, read after the good entry at `prevSeq` with hash `prevHash`, or undefined. */
async function faultOf(
  entry: AuditEntry,
  prevSeq: number,
  prevHash: string,
  check: ChainCheck,
  head: ChainHead | undefined,
): Promise<ChainFault | undefined> {
  const expected = prevSeq + 1;
  if (head !== undefined && entry.seq > head.seq) {
    return fault(
      'inserted',
      entry,
      `entry ${entry.seq} lies past the chain head (${head.seq}): it was inserted`,
    );
  }
  if (entry.seq < expected) {
    return fault(
      'inserted',
      entry,
      `entry ${entry.seq} appears again after entry ${prevSeq}: it was inserted`,
    );
  }
  if (entry.seq > expected) {
    return (await check.hasSeq(expected))
      ? fault(
          'reordered',
          expected,
          `entry ${expected} is out of its place: entry ${entry.seq} comes where it should`,
        )
      : fault('deleted', expected, `entry ${expected} is missing: it was deleted`);
  }
  if (auditHashOf(entry) !== entry.hash) {
    return fault('changed', entry, `entry ${entry.seq} does not match its hash: it was changed`);
  }
  if (entry.prevHash !== prevHash) {
    return fault(
      'changed',
      entry,
      `entry ${entry.seq} does not link to entry ${prevSeq}: one of them was changed and its hash recomputed`,
    );
  }
  return undefined;
}

/**
 * Walks `entries` (in the order they were written) and returns the first fault, or ok. Reads
 * each entry once; memory stays constant. With a head, the walk must end exactly at it: an entry
 * short of it means the last entries were deleted, a different last hash that the last was
 * replaced.
 */
export async function verifyChain(
  entries: AsyncIterable<AuditEntry>,
  check: ChainCheck,
): Promise<ChainReport> {
  let prevSeq = 0;
  let prevHash = GENESIS_HASH;
  let count = 0;
  let head = check.head;
  const report = (found?: ChainFault): ChainReport => ({
    ok: found === undefined,
    entries: count,
    lastSeq: prevSeq,
    lastHash: prevHash,
    ...(found === undefined ? {} : { fault: found }),
  });
  for await (const entry of entries) {
    if (count === 0 && check.start === 'first-entry') {
      prevSeq = entry.seq - 1;
      prevHash = entry.seq === 1 ? GENESIS_HASH : entry.prevHash;
    }
    count += 1;
    if (head !== undefined && entry.seq > head.seq && check.refreshHead !== undefined)
      head = await check.refreshHead();
    const found = await faultOf(entry, prevSeq, prevHash, check, head);
    if (found !== undefined) return report(found);
    prevSeq = entry.seq;
    prevHash = entry.hash;
  }
  if (head !== undefined && prevSeq < head.seq) {
    return report(
      fault('deleted', prevSeq + 1, `entries ${prevSeq + 1} to ${head.seq} are missing: they were deleted`),
    );
  }
  if (head !== undefined && prevHash !== head.hash) {
    return report(
      fault('changed', prevSeq, `entry ${prevSeq} is not the entry the chain head names: it was replaced`),
    );
  }
  return report();
}
