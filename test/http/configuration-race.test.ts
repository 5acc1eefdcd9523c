import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';

/**
 * Issue 3: a PUT racing with chunk submissions and reads never exposes a mix of old and new
 * configuration. Two configurations alternate: X knows an optional `note` on loan
 * transactions, Y does not. Readers must see X or Y whole; a chunk carrying `note` may be
 * stored only in a session opened under X, and no record may outlive the upload that replaced
 * its configuration.
 */
describe('configuration upload racing with chunks and reads', () => {
  let t: TestApp;
  let operator: string;
  const x = realisticConfiguration();
  const xEntity = x.configuration.entities[0];
  if (xEntity === undefined) throw new Error('fixture entity missing');
  (xEntity.attributes as unknown[]).push({
    name: 'note',
    label: 'Note',
    mandatory: false,
    source: 'input',
    type: { typeName: 'TEXT' },
  });
  const y = realisticConfiguration();

  beforeAll(async () => {
    t = await createTestApp();
    operator = await t.tokenFor(['bulk-operator']);
  });
  afterAll(async () => t?.close());

  it('never mixes the two', async () => {
    const put = (document: unknown) =>
      t.call(operator, { method: 'PUT', url: '/api/v1/configuration/bulk', payload: document as object });
    expect((await put(x)).statusCode).toBe(200);
    const xText = JSON.stringify(x.configuration.entities);
    const yText = JSON.stringify(y.configuration.entities);

    // What the test must have seen for the race to count. The uploader goes on alternating
    // until all of it was (or the deadline passed), so a run where every read and chunk fell
    // between two uploads, or all during one, fails instead of passing unraced.
    const observed = {
      readX: false,
      readY: false,
      readDuringUpload: false,
      chunkDuringUpload: false,
      chunkStored: false, // 201: the session was opened under X
      chunkRefused: false, // 400: opened under Y, which has no `note`
      chunkOfWipedSession: false, // 404: an upload removed the session in between
    };
    const raced = () => Object.values(observed).every(Boolean);
    const UPLOADS_MIN = 12;
    const RACE_DEADLINE_MS = 30_000;
    const deadline = Date.now() + RACE_DEADLINE_MS;

    // An operation overlapped an upload when one was in flight as it started or one started
    // before it was answered.
    let uploadsStarted = 0;
    let uploadsFinished = 0;
    let done = false;
    const duringUpload = async <T>(operation: () => Promise<T>): Promise<[T, boolean]> => {
      const started = uploadsStarted;
      const inFlight = uploadsStarted > uploadsFinished;
      const result = await operation();
      return [result, inFlight || uploadsStarted > started];
    };

    const uploader = async () => {
      for (let i = 0; (i < UPLOADS_MIN || !raced()) && Date.now() < deadline && !done; i += 1) {
        uploadsStarted += 1;
        expect((await put(i % 2 === 0 ? y : x)).statusCode).toBe(200);
        uploadsFinished += 1;
        // Uneven pauses: some rounds of the others fall between uploads, some during one.
        await new Promise((resolve) => setTimeout(resolve, i % 3));
      }
      uploadsStarted += 1;
      expect((await put(x)).statusCode).toBe(200);
      uploadsFinished += 1;
      done = true;
    };
    // The app answers an injected request without a turn of the event loop when nothing waits
    // on I/O; every side takes one per round, so none starves the others (or the timers).
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    const reader = async () => {
      while (!done) {
        await nextTurn();
        const [response, overlapped] = await duringUpload(() =>
          t.call(operator, { method: 'GET', url: '/api/v1/configuration/bulk' }),
        );
        const entities = JSON.stringify(response.json().configuration.entities);
        expect([xText, yText]).toContain(entities);
        if (entities === xText) observed.readX = true;
        else observed.readY = true;
        if (overlapped) observed.readDuringUpload = true;
      }
    };
    const submitter = async () => {
      while (!done) {
        await nextTurn();
        const opened = await t.call(operator, {
          method: 'POST',
          url: '/api/v1/ingestions',
          payload: { namespace: 'loans', entity: 'loanTransaction' },
        });
        if (opened.statusCode !== 201) continue;
        const id = opened.json().ingestionId;
        for (let i = 0; i < 3 && !done; i += 1) {
          const [chunk, overlapped] = await duringUpload(() =>
            t.call(operator, {
              method: 'POST',
              url: `/api/v1/ingestions/${id}`,
              payload: { data: [loanRecord(i, { note: 'with note' })] },
            }),
          );
          // 201 under X, 400 under Y (unknown field), 404 when an upload wiped the session.
          expect([201, 400, 404]).toContain(chunk.statusCode);
          if (chunk.statusCode === 201) observed.chunkStored = true;
          if (chunk.statusCode === 400) observed.chunkRefused = true;
          if (chunk.statusCode === 404) observed.chunkOfWipedSession = true;
          if (overlapped) observed.chunkDuringUpload = true;
        }
      }
    };
    // A failing side stops the others, so the test ends with its failure.
    const stopOnFailure = (side: Promise<void>) =>
      side.catch((error: unknown) => {
        done = true;
        throw error;
      });
    await Promise.all([uploader(), reader(), reader(), submitter(), submitter()].map(stopOnFailure));
    expect(observed, `the race was not observed within ${RACE_DEADLINE_MS} ms`).toEqual({
      readX: true,
      readY: true,
      readDuringUpload: true,
      chunkDuringUpload: true,
      chunkStored: true,
      chunkRefused: true,
      chunkOfWipedSession: true,
    });

    // The last upload was X; whatever is stored now belongs to sessions opened under X.
    const final = await t.call(operator, { method: 'GET', url: '/api/v1/configuration/bulk' });
    expect(JSON.stringify(final.json().configuration.entities)).toBe(xText);
    const sessions = (await t.call(operator, { method: 'GET', url: '/api/v1/ingestions?limit=1000' })).json();
    const records = (
      await t.call(operator, {
        method: 'GET',
        url: '/api/v1/namespaces/loans/entities/loanTransaction/records?limit=1000',
      })
    ).json();
    const live = new Set(sessions.data.map((s: { ingestionId: string }) => s.ingestionId));
    for (const record of records.data) expect(live.has(record.ingestionId)).toBe(true);
    const audit = (await t.call(operator, { method: 'GET', url: '/api/v1/audit-log?limit=1000' })).json();
    // Every configuration change made its own revision (other entries name the revision of their time).
    const revisions = audit.data
      .filter((e: { action: string }) => e.action.startsWith('configuration.'))
      .map((e: { revision: number }) => e.revision);
    expect(new Set(revisions).size).toBe(revisions.length);
  });
});
