import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/storage/store.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { configurationWithoutLookup, openErrorRows } from '../helpers/reprocessing.js';
import { apiClient, eventually, startE2eServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

type Session = { ingestionId: string; processingStatus: string };
type Run = { id: number; state: string; queued: number; posted: number; stillFailing: number };

/** Processing errors by state, and records with both journals and an error not closed. */
async function progress(store: Store) {
  const states = await store.db
    .selectFrom('processing_errors')
    .select((eb) => ['state', eb.fn.countAll().as('n')])
    .groupBy('state')
    .execute();
  const of = (state: string) => Number(states.find((s) => s.state === state)?.n ?? 0);
  const both = await store.db
    .selectFrom('processing_errors as e')
    .where('e.state', '!=', 'closed')
    .where(({ exists, selectFrom }) =>
      exists(selectFrom('journals as j').select('j.journal_id').whereRef('j.record_id', '=', 'e.record_id')),
    )
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  const closedWithout = await store.db
    .selectFrom('processing_errors as e')
    .where('e.state', '=', 'closed')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('journals as j').select('j.journal_id').whereRef('j.record_id', '=', 'e.record_id'),
        ),
      ),
    )
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  const perRecord = await store.db
    .selectFrom('journals')
    .select((eb) => ['record_id', eb.fn.countAll().as('n')])
    .groupBy('record_id')
    .execute();
  return {
    open: of('open'),
    queued: of('queued'),
    closed: of('closed'),
    failedAndPosted: Number(both.n),
    closedWithoutJournals: Number(closedWithout.n),
    journalCounts: new Set(perRecord.map((r) => Number(r.n))),
  };
}

/**
 * A reprocessing run whose service is killed (SIGKILL) in the middle leaves every record either
 * posted once (its error closed) or still queued, never both and never lost; after the restart the
 * run finishes and every record is posted exactly once (issue 23).
 */
describe('reprocessing across a killed process', () => {
  const urls: string[] = [];
  afterAll(async () => {
    for (const url of urls) await dropTestDatabase(url);
  });

  it('posts every record once after a kill in the middle of a run and a restart', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    const env = { BUSINESS_DATE: '2026-11-20' };
    let server = await startE2eServer(databaseUrl, env);
    let api = await apiClient(server.url);
    const store = openStore(databaseUrl);
    const CHUNKS = 12;
    const PER_CHUNK = 1_000;
    const EVENTS = CHUNKS * PER_CHUNK;
    let run: Run;
    try {
      expect((await api('PUT', '/api/v1/configuration/bulk', configurationWithoutLookup())).status).toBe(200);
      const session = (
        await api('POST', '/api/v1/ingestions', { namespace: 'ledger', entity: 'businessEvent' })
      ).body as Session;
      for (let c = 0; c < CHUNKS; c += 1) {
        const data = Array.from({ length: PER_CHUNK }, (_, i) =>
          businessEvent({ amount: `${c * PER_CHUNK + i + 1}.25` }),
        );
        expect((await api('POST', `/api/v1/ingestions/${session.ingestionId}`, { data })).status).toBe(201);
      }
      await api('PATCH', `/api/v1/ingestions/${session.ingestionId}`, { state: 'closed' });
      await eventually(async () => ((await openErrorRows(store)) === EVENTS ? true : undefined), 120_000);

      const kept = await api(
        'PUT',
        '/api/v1/configuration/bulk?keep=processing-data',
        realisticConfiguration(),
      );
      expect(kept.status).toBe(200);
      const started = await api('POST', '/api/v1/processing-errors/reprocess', { all: true });
      expect(started.status).toBe(202);
      run = started.body as Run;
      expect(run.queued).toBe(EVENTS);
      // Kill once some records posted and at least a chunk's worth still wait.
      await eventually(
        async () => {
          const now = await progress(store);
          return now.closed > 0 && now.queued >= PER_CHUNK ? true : undefined;
        },
        150_000,
        5,
      );
      await server.kill();
      const killed = await progress(store);
      expect(killed.queued).toBeGreaterThan(0);
      expect(killed.closed).toBeGreaterThan(0);
      expect(killed.open).toBe(0);
      expect(killed.failedAndPosted).toBe(0);
      expect(killed.closedWithoutJournals).toBe(0);
      expect(killed.journalCounts.size).toBe(1);
    } catch (error) {
      await server.kill();
      await store.close();
      throw error;
    }

    server = await startE2eServer(databaseUrl, env);
    api = await apiClient(server.url);
    try {
      const finished = await eventually(async () => {
        const answer = (await api('GET', `/api/v1/processing-errors/reprocess-runs/${run.id}`)).body as Run;
        return answer.state === 'finished' ? answer : undefined;
      }, 120_000);
      expect(finished).toMatchObject({ queued: EVENTS, posted: EVENTS, stillFailing: 0 });
      const after = await progress(store);
      expect(after).toMatchObject({
        open: 0,
        queued: 0,
        closed: EVENTS,
        failedAndPosted: 0,
        closedWithoutJournals: 0,
      });
      expect(after.journalCounts.size).toBe(1);
    } finally {
      await server.stop();
      await store.close();
    }
  });
});
