/**
 * The business events the service reports to webhooks, each with its versioned JSON shape
 * (docs/domain/events.md). The body of every delivery is the envelope `{ event_id, type,
 * version, occurred_at, data }`, `event_id` first, written once when the event is recorded and
 * sent byte for byte on every attempt, so a signature and an `Idempotency-Key` always describe
 * the same text. A shape changes only by a new version of its type; fields are only ever added
 * within a version.
 */

/** The shape of each event type's `data`, by type. */
export interface EventData {
  /** A session was closed by a request (`POST /api/v1/ingestions/{id}/close`). */
  'ingestion.closed': SessionEnded & { closedBy: string };
  /** A session expired: no request within its timeout. Reported by the sweep, within a minute. */
  'ingestion.expired': SessionEnded;
  /** A session ended and every record it accepted was processed. */
  'ingestion.processed': SessionProcessed;
  /** A session ended and was processed, and some of its records failed processing. */
  'processing.failed': {
    ingestionId: string;
    namespace: string;
    entity: string;
    processingFailedRows: number;
    /** Failed records by the code of their processing error. */
    byCode: Record<string, number>;
  };
  /** A configuration was uploaded: wiping the processing data, or keeping it. */
  'configuration.changed': {
    revision: number;
    version: string;
    actor: string;
    processingData: 'wiped' | 'kept';
    /** What the upload deleted (all zero when the data was kept). */
    deleted: Record<string, number>;
  };
  /** The configuration was deleted (`config wipe`), with every processing data. */
  'configuration.wiped': { revision: number; actor: string; deleted: Record<string, number> };
  /** A reversal request wrote its reversal journals. */
  'reversal.completed': {
    reversalId: string;
    createdBy: string;
    reason: string;
    postingDate: string | null;
    journals: number;
    lines: number;
    alreadyReversed: number;
    notReversible: number;
  };
  /** An asynchronous extraction ended: its file is ready (`completed`) or it `failed`. */
  'extraction.completed': {
    executionId: number;
    extractConfigurationId: number;
    status: 'completed' | 'failed';
    failure: string | null;
  };
}

/** What the session events share. */
interface SessionEnded {
  ingestionId: string;
  ingestionName: string | null;
  namespace: string;
  entity: string;
  /** When it was closed, or when it expired. */
  endedOn: string;
  chunks: number;
  totalRows: number;
  successRows: number;
  failedRows: number;
}

interface SessionProcessed {
  ingestionId: string;
  namespace: string;
  entity: string;
  state: 'closed' | 'expired';
  /** Records accepted at ingestion, all processed now. */
  successRows: number;
  /** Records refused at ingestion (validation). */
  failedRows: number;
  processedRows: number;
  processingFailedRows: number;
  processingStatus: 'completed' | 'completed_with_errors';
}

export type EventType = keyof EventData;

/** Every event type with the version of its shape now written. */
export const EVENT_VERSIONS: { readonly [T in EventType]: number } = {
  'ingestion.closed': 1,
  'ingestion.expired': 1,
  'ingestion.processed': 1,
  'processing.failed': 1,
  'configuration.changed': 1,
  'configuration.wiped': 1,
  'reversal.completed': 1,
  'extraction.completed': 1,
};

export const EVENT_TYPES = Object.keys(EVENT_VERSIONS) as EventType[];

/** The event `type` with `data` as a change announces it (`Applied.events`, `modules/changes`). */
export function changeEventOf<T extends EventType>(
  type: T,
  data: EventData[T],
): { type: T; data: EventData[T] } {
  return { type, data };
}

/** True when `name` is an event type. */
export function isEventType(name: string): name is EventType {
  return Object.hasOwn(EVENT_VERSIONS, name);
}

/** An event ready to be recorded: its id, type, version, time and the body deliveries send. */
export interface RecordedEvent {
  eventId: string;
  type: EventType;
  version: number;
  occurredAt: string;
  body: string;
}

/**
 * The event of `type` with `data`, as recorded: the envelope's text is made here, once, so every
 * attempt sends the same bytes. `event_id` comes first, as receivers expect.
 */
export function eventOf<T extends EventType>(
  type: T,
  data: EventData[T],
  eventId: string,
  occurredAt: string,
): RecordedEvent {
  const version = EVENT_VERSIONS[type];
  const body = JSON.stringify({ event_id: eventId, type, version, occurred_at: occurredAt, data });
  return { eventId, type, version, occurredAt, body };
}
