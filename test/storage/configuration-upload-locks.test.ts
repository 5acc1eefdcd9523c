import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  openLoanSession,
  realisticConfiguration,
  uploadRealisticConfiguration,
} from '../helpers/fixtures.js';
import { loanRecords } from '../helpers/records.js';
import { TEST_DIALECT } from '../helpers/store.js';

/**
 * A configuration upload while a processor holds a chunk (PostgreSQL, where they run side by
 * side): the upload waits for the processing transaction and then wipes, instead of deadlocking
 * with it and answering 500.
 */
describe.runIf(TEST_DIALECT === 'postgres')('configuration upload against a processing transaction', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('waits for a processor holding a chunk, then wipes; neither deadlocks', async () => {
    const operator = await t.tokenFor(['bulk-operator']);
    await uploadRealisticConfiguration(t, operator);
    const ingestionId = await openLoanSession(t, operator);
    const chunk = await t.call(operator, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}`,
      payload: { data: loanRecords(3) },
    });
    expect(chunk.statusCode).toBe(201);

    let upload: Promise<number> | undefined;
    await t.store.db.transaction().execute(async (trx) => {
      // What a processing round does: lock its chunk, work, then write rows that refer to the
      // session and add to the session's counters.
      await sql`select chunk_seq from chunks where ingestion_id = ${ingestionId} for update`.execute(trx);
      upload = t
        .call(operator, {
          method: 'PUT',
          url: '/api/v1/configuration/bulk',
          payload: realisticConfiguration(),
        })
        .then((r) => r.statusCode);
      // Longer than PostgreSQL's deadlock check (1 s), so a deadlock would be found and broken.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await sql`update ingestions set processed_rows = processed_rows + 3 where ingestion_id = ${ingestionId}`.execute(
        trx,
      );
    });
    expect(await upload).toBe(200);
    const sessions = await t.store.db.selectFrom('ingestions').select('ingestion_id').execute();
    expect(sessions).toEqual([]);
  });
});
