/** A session as stored. `state` is only ever `pending` or `closed`; expiry is derived. */
export interface SessionRow {
  ingestionId: string;
  ingestionName: string | null;
  namespace: string;
  entity: string;
  state: 'pending' | 'closed';
  timeout: string;
  timeoutMs: number;
  openedBy: string;
  openedOn: string;
  closedBy: string | null;
  closedOn: string | null;
  closeReason: 'manual' | null;
  lastActivityOn: string;
  expiresAtMs: number;
  chunks: number;
  apiCalls: number;
  totalRows: number;
  successRows: number;
  failedRows: number;
  processedRows: number;
  processingFailedRows: number;
}

export type SessionState = 'pending' | 'closed' | 'expired';
export type ProcessingStatus = 'pending' | 'processing' | 'completed' | 'completed_with_errors';

/** The session object, as every session endpoint answers it. */
export interface SessionView {
  ingestionId: string;
  ingestionName: string | null;
  namespace: string;
  entity: string;
  state: SessionState;
  timeout: string;
  openedBy: string;
  openedOn: string;
  closedBy: string | null;
  closedOn: string | null;
  closeReason: 'manual' | 'timeout' | null;
  lastActivityOn: string;
  chunks: number;
  totalRows: number;
  successRows: number;
  failedRows: number;
  processingStatus: ProcessingStatus;
}

/**
 * The state a session is in at `nowMs`: a pending session with no request for its timeout is
 * `expired`. Expiry is derived from the stored deadline rather than written by
 * a timer, so every instance and every query (statistics included) sees it at the same moment
 * without anyone asking for that session first.
 */
export function stateAt(row: Pick<SessionRow, 'state' | 'expiresAtMs'>, nowMs: number): SessionState {
  return row.state === 'pending' && nowMs >= row.expiresAtMs ? 'expired' : row.state;
}

/**
 * The processing status of a session: `completed` (or `completed_with_errors` when any
 * record failed validation or processing) once the session is closed or expired and every
 * accepted record is processed.
 */
export function processingStatusOf(row: SessionRow, state: SessionState): ProcessingStatus {
  const allProcessed = row.processedRows >= row.successRows;
  if (state !== 'pending' && allProcessed) {
    return row.failedRows > 0 || row.processingFailedRows > 0 ? 'completed_with_errors' : 'completed';
  }
  return row.processedRows > 0 ? 'processing' : 'pending';
}

/** The session object at `nowMs`. */
export function sessionView(row: SessionRow, nowMs: number): SessionView {
  const state = stateAt(row, nowMs);
  const expired = state === 'expired';
  return {
    ingestionId: row.ingestionId,
    ingestionName: row.ingestionName,
    namespace: row.namespace,
    entity: row.entity,
    state,
    timeout: row.timeout,
    openedBy: row.openedBy,
    openedOn: row.openedOn,
    closedBy: row.closedBy,
    closedOn: expired ? new Date(row.expiresAtMs).toISOString() : row.closedOn,
    closeReason: expired ? 'timeout' : row.closeReason,
    lastActivityOn: row.lastActivityOn,
    chunks: row.chunks,
    totalRows: row.totalRows,
    successRows: row.successRows,
    failedRows: row.failedRows,
    processingStatus: processingStatusOf(row, state),
  };
}
