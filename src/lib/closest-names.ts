/** The most names a "did you mean" suggestion offers. */
export const SUGGESTIONS_COUNT_MAX = 3;

/** Levenshtein distance: the fewest single-character insertions, deletions and substitutions. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * The known names closest to a name that matched none, for a "did you mean" hint: compared
 * without regard to case, a name qualifies when its edit distance is at most a third of the
 * longer name's length (at least 1), so `journals` finds `journal` and `Ledger` finds `ledger`
 * while unrelated names stay out. At most {@link SUGGESTIONS_COUNT_MAX}, closest first, ties in
 * the order given.
 */
export function closestNames(name: string, known: Iterable<string>): string[] {
  const wanted = name.toLowerCase();
  const scored: { candidate: string; distance: number }[] = [];
  for (const candidate of new Set(known)) {
    const distance = editDistance(wanted, candidate.toLowerCase());
    const allowed = Math.max(1, Math.floor(Math.max(wanted.length, candidate.length) / 3));
    if (distance <= allowed) scored.push({ candidate, distance });
  }
  return scored
    .sort((x, y) => x.distance - y.distance)
    .slice(0, SUGGESTIONS_COUNT_MAX)
    .map((entry) => entry.candidate);
}

/** ` Did you mean "a" or "b"?`, or nothing when there is no suggestion. */
export function didYouMean(suggestions: readonly string[]): string {
  if (suggestions.length === 0) return '';
  const quoted = suggestions.map((suggestion) => `"${suggestion}"`);
  const last = quoted.pop();
  return ` Did you mean ${quoted.length === 0 ? last : `${quoted.join(', ')} or ${last}`}?`;
}
