import { Type } from '@sinclair/typebox';

/**
 * The rules of what a caller may send with a configuration upload or deletion (docs/reference.md,
 * Configuration Data), written once: the REST schemas (`http/api/configuration.ts`) are built
 * from these, and the administration pages check their forms with the same ones. The document
 * itself is checked by `validateConfigurationDocument`.
 */

/**
 * Largest configuration document accepted: 10 MB must be, and a little more is. The document is
 * validated whole on the event loop, so the limit bounds how long one upload (and one download
 * of what it stored) can keep other requests waiting, and the memory it takes; at 32 MiB a
 * 28 MiB download held the event loop for 4 s (docs/decisions.md).
 */
export const CONFIGURATION_BODY_BYTES_MAX = 12 * 1024 * 1024;
/** Longest `If-Match` header read: room for a few entity tags, far more than a client needs. */
export const IF_MATCH_LENGTH_MAX = 1000;
/** Most digits of a configuration revision a caller names (an entity tag, a confirmation form). */
export const REVISION_DIGITS_MAX = 15;

/** A configuration revision as text: the number a download's entity tag or a checked form names. */
export const RevisionText = Type.String({ pattern: `^\\d{1,${REVISION_DIGITS_MAX}}$` });

/** The `If-Match` header of an upload or a deletion. */
export const IfMatch = Type.String({
  maxLength: IF_MATCH_LENGTH_MAX,
  description:
    'The `ETag` of the configuration this change is made against (from a download or an earlier answer). When the stored configuration has changed since, nothing changes and the answer is 412 `configuration-changed`. Without it the change is made whatever is stored.',
  examples: ['"revision-7"'],
});

/** A configuration revision a caller names in a path or query: the numbers revisions are given. */
export const RevisionNumber = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'A configuration revision number.',
});

/** The value of `keep` that makes an upload keep the processing data. */
export const KEEP_PROCESSING_DATA = 'processing-data';

/** The `keep` query parameter of an upload. */
export const KeepQuery = Type.Literal(KEEP_PROCESSING_DATA, {
  description:
    'processing-data: keep every session, record, journal and processing error, which the change must leave valid (else 409 listing each blocking change).',
});
