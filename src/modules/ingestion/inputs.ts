import { Type } from '@sinclair/typebox';
import { ISO_DURATION_PATTERN } from '../../lib/iso-duration.js';
import { CHUNK_NAME_LENGTH_MAX, CHUNK_RECORDS_MAX } from './chunk-body.js';
import type { SessionState } from './session.js';

/**
 * The rules of what a caller may send about ingestion sessions and chunks (docs/reference.md,
 * Ingestion), written once: the REST schemas (`http/api/ingestions.ts`) are built from these
 * fragments, so the API document states each bound, and the administration pages read their
 * filters with the same ones. What a schema cannot say is checked by `IngestionService`: a
 * timeout's range (`SESSION_TIMEOUT_MS_MIN` to `SESSION_TIMEOUT_MS_MAX`) and a chunk body, which
 * `chunk-body.ts` parses from the raw bytes (`ChunkBodyDocumented` only describes it).
 */

/** Longest session id in a path. */
export const INGESTION_ID_LENGTH_MAX = 100;
/** Longest namespace or entity name a new session may name. */
export const ENTITY_NAME_LENGTH_MAX = 200;
/** Longest name of a new session. */
export const INGESTION_NAME_LENGTH_MAX = 200;
/** Characters an `Idempotency-Key` may have; the key is per session. */
export const IDEMPOTENCY_KEY_LENGTH_MAX = 200;
/** The states a session list may be filtered by, as `stateAt` derives them. */
export const SESSION_STATES: readonly SessionState[] = ['pending', 'closed', 'expired'];

/** A session id. */
export const IngestionId = Type.String({ maxLength: INGESTION_ID_LENGTH_MAX });
/** The namespace or the entity of a new session. */
export const EntityName = Type.String({ minLength: 1, maxLength: ENTITY_NAME_LENGTH_MAX });
/** The name of a new session. */
export const IngestionName = Type.String({ maxLength: INGESTION_NAME_LENGTH_MAX });
/** How long a session stays open without a request; its range is checked by the service. */
export const SessionTimeout = Type.String({
  pattern: ISO_DURATION_PATTERN,
  description: 'ISO 8601 duration of weeks, days, hours, minutes and seconds, PT1S to P7D; default PT15M.',
  examples: ['PT15M'],
});
/** A session state, as a list filter. */
export const SessionStateFilter = Type.Union(SESSION_STATES.map((state) => Type.Literal(state)));
/** An `Idempotency-Key`. */
export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_LENGTH_MAX,
  description: 'Repeating a key with the same body replays the first answer.',
});
/**
 * The sequence number of one chunk of a session, from 1, up to the largest integer JavaScript
 * holds exactly (a 64-bit column holds more; above this a number would be rounded, and above
 * 2^63 PostgreSQL refuses it).
 */
export const ChunkSeq = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "One chunk's failed records, the chunk rejected or stored (its answer's `chunkSeq`).",
});

/**
 * A chunk body as `parseChunkBody` (`chunk-body.ts`) reads it, for the API document only: the
 * service parses and checks the raw bytes itself, so that its errors name every fault at once.
 */
export const ChunkBodyDocumented = Type.Object({
  chunkName: Type.Optional(Type.Union([Type.String({ maxLength: CHUNK_NAME_LENGTH_MAX }), Type.Null()])),
  data: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
    maxItems: CHUNK_RECORDS_MAX,
    description: `Records shaped by the session entity, at most ${CHUNK_RECORDS_MAX.toLocaleString('en-US')}.`,
  }),
});
