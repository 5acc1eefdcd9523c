import type { Store } from '../src/storage/database.js';
import { createIngestionStore } from '../src/storage/ingestion-store.js';

/** Sessions a limit writes into stay open for an hour, longer than any benchmark part. */
const SESSION_TIMEOUT_MS = 3_600_000;

/**
 * Opens an ingestion session straight in a limit's own store, as the service's `POST
 * /api/v1/ingestions` would, so that its chunks and records have their session row.
 */
export async function insertBenchSession(
  store: Store,
  ingestionId: string,
  namespace: string,
  entity: string,
): Promise<void> {
  const at = new Date().toISOString();
  await createIngestionStore(store).insertSession({
    ingestionId,
    ingestionName: null,
    namespace,
    entity,
    state: 'pending',
    timeout: 'PT1H',
    timeoutMs: SESSION_TIMEOUT_MS,
    openedBy: 'bench',
    openedOn: at,
    closedBy: null,
    closedOn: null,
    closeReason: null,
    lastActivityOn: at,
    expiresAtMs: Date.now() + SESSION_TIMEOUT_MS,
    chunks: 0,
    apiCalls: 0,
    totalRows: 0,
    successRows: 0,
    failedRows: 0,
    processedRows: 0,
    processingFailedRows: 0,
  });
}
