import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServices } from '../../src/composition/services.js';

const SETTINGS = { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800, businessDate: undefined };

import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import {
  addLookupKeepingData,
  configurationWithoutLookup,
  expectCountersEqualCounts,
  failForMissingLookup,
  journalsPerRecord,
  openErrorRows,
} from '../helpers/reprocessing.js';

const EVENTS = 12;

let t: TestApp;
let operator: string;

beforeEach(async () => {
  t = await createTestApp();
  operator = await t.tokenFor(['bulk-operator']);
});
afterEach(async () => {
  await t.close();
});

async function reprocess(payload: Record<string, unknown>, dryRun = false) {
  return t.call(operator, {
    method: 'POST',
    url: `/api/v1/processing-errors/reprocess${dryRun ? '?dryRun=true' : ''}`,
    payload,
  });
}

async function runOf(id: number) {
  const response = await t.call(operator, {
    method: 'GET',
    url: `/api/v1/processing-errors/reprocess-runs/${id}`,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

describe('reprocessing failed records', () => {
  it('posts a record that failed for no-account once the lookup is added, closes its error, and the dry run said so', async () => {
    const ingestionId = await failForMissingLookup(t, operator, EVENTS);
    expect(await openErrorRows(t.store)).toBe(EVENTS);
    await expectCountersEqualCounts(t.store, t.clock);

    // Before the lookup is added, the dry run says they would all fail again.
    const before = await reprocess({ code: 'no-account' }, true);
    expect(before.statusCode, before.body).toBe(200);
    expect(before.json()).toMatchObject({
      dryRun: true,
      selected: EVENTS,
      wouldPost: 0,
      wouldStillFail: { 'no-account': EVENTS },
    });

    await addLookupKeepingData(t, operator);
    const dry = await reprocess({ ingestionId }, true);
    expect(dry.json()).toMatchObject({ selected: EVENTS, skipped: 0, wouldPost: EVENTS, wouldStillFail: {} });
    expect(dry.json().examples[0]).toMatchObject({ previousCode: 'no-account' });
    // A dry run writes nothing.
    expect(await openErrorRows(t.store)).toBe(EVENTS);

    const started = await reprocess({ ingestionId });
    expect(started.statusCode, started.body).toBe(202);
    const run = started.json();
    expect(started.headers.location).toBe(`/api/v1/processing-errors/reprocess-runs/${run.id}`);
    expect(run).toMatchObject({ trigger: 'manual', state: 'running', queued: EVENTS, skipped: 0 });
    await expectCountersEqualCounts(t.store, t.clock);

    await t.services.processor.drain();
    const finished = await runOf(run.id);
    expect(finished).toMatchObject({ state: 'finished', posted: dry.json().wouldPost, stillFailing: 0 });
    expect(finished.examples[0]).toMatchObject({ previousCode: 'no-account' });
    expect(finished.examples[0].code).toBeUndefined();

    const perRecord = await journalsPerRecord(t.store, ingestionId);
    expect(perRecord.size).toBe(EVENTS);
    const closed = await t.call(operator, {
      method: 'GET',
      url: '/api/v1/processing-errors?state=closed&limit=100',
    });
    expect(closed.json().totalSize).toBe(EVENTS);
    for (const error of closed.json().data) {
      expect(error).toMatchObject({ state: 'closed', attempts: 2, code: 'no-account' });
      expect(perRecord.get(error.recordId)).toBeGreaterThan(0);
    }
    const open = await t.call(operator, { method: 'GET', url: '/api/v1/processing-errors' });
    expect(open.json().totalSize).toBe(0);
    await expectCountersEqualCounts(t.store, t.clock);

    // The session's processing is complete again.
    const session = await t.call(operator, { method: 'GET', url: `/api/v1/ingestions/${ingestionId}` });
    expect(session.json()).toMatchObject({ processingStatus: 'completed' });

    // The figures of the statistics, the audit log and /metrics.
    const statistics = await t.call(await t.tokenFor(['viewer']), {
      method: 'GET',
      url: '/api/v1/statistics/reprocessing',
    });
    expect(statistics.statusCode, statistics.body).toBe(200);
    expect(statistics.json()).toMatchObject({
      errors: { open: 0, queued: 0, closed: EVENTS },
      runs: 1,
      lastRun: { id: run.id, posted: EVENTS },
      schedule: { mode: 'daily', dailyAt: '08:00', maxAttempts: 5 },
    });
    const audit = await t.call(await t.tokenFor(['admin']), { method: 'GET', url: '/api/v1/audit-log' });
    // The newest entries are the reader's own user and credential, made just above.
    const entries: { action: string }[] = audit.json().data;
    expect(entries.find((e) => e.action === 'processing.reprocess')).toMatchObject({
      action: 'processing.reprocess',
      details: { run: run.id, trigger: 'manual', queued: EVENTS, skipped: 0, selection: { ingestionId } },
    });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain(`processing_errors{state="closed"} ${EVENTS}`);
    expect(metrics.body).toContain(`reprocessing_last_run_records{outcome="posted"} ${EVENTS}`);
    expect(metrics.body).toContain('reprocessing_runs_total 1');
  });

  it('keeps a record that fails again open with its new attempt, and the dry run counts equal the run', async () => {
    await failForMissingLookup(t, operator, EVENTS);
    const dry = (await reprocess({ all: true }, true)).json();
    const run = (await reprocess({ all: true })).json();
    await t.services.processor.drain();
    const finished = await runOf(run.id);
    expect(finished).toMatchObject({
      state: 'finished',
      queued: dry.selected,
      posted: dry.wouldPost,
      stillFailing: EVENTS,
      stillFailingByCode: dry.wouldStillFail,
    });
    expect(finished.examples[0]).toMatchObject({ previousCode: 'no-account', code: 'no-account' });
    const open = await t.call(operator, { method: 'GET', url: '/api/v1/processing-errors?limit=100' });
    expect(open.json().totalSize).toBe(EVENTS);
    for (const error of open.json().data)
      expect(error).toMatchObject({ state: 'open', attempts: 2, previousCode: 'no-account' });
    await expectCountersEqualCounts(t.store, t.clock);
  });

  it('stops at the maximum number of attempts, manual runs included', async () => {
    await failForMissingLookup(t, operator, EVENTS);
    const set = await t.call(operator, {
      method: 'PUT',
      url: '/api/v1/processing-errors/reprocess-schedule',
      payload: { mode: 'daily', dailyAt: '08:00', intervalMinutes: 1440, maxAttempts: 3 },
    });
    expect(set.statusCode, set.body).toBe(200);
    for (const attempt of [2, 3]) {
      const run = (await reprocess({ all: true })).json();
      expect(run.queued).toBe(EVENTS);
      await t.services.processor.drain();
      expect((await runOf(run.id)).stillFailing).toBe(EVENTS);
      const page = await t.call(operator, { method: 'GET', url: '/api/v1/processing-errors?limit=1' });
      expect(page.json().data[0].attempts).toBe(attempt);
    }
    const dry = (await reprocess({ all: true }, true)).json();
    expect(dry).toMatchObject({ selected: 0, skipped: EVENTS });
    const last = await reprocess({ all: true });
    expect(last.statusCode).toBe(200);
    expect(last.json()).toMatchObject({ state: 'finished', queued: 0, skipped: EVENTS });
    await expectCountersEqualCounts(t.store, t.clock);
  });

  it('posts each record once when two runs start at once', async () => {
    const ingestionId = await failForMissingLookup(t, operator, EVENTS);
    await addLookupKeepingData(t, operator);
    const [a, b] = await Promise.all([reprocess({ all: true }), reprocess({ ingestionId })]);
    expect(a.json().queued + b.json().queued).toBe(EVENTS);
    await t.services.processor.drain();
    const perRecord = await journalsPerRecord(t.store, ingestionId);
    expect(perRecord.size).toBe(EVENTS);
    const counts = new Set(perRecord.values());
    expect(counts.size).toBe(1);
    // A third run finds nothing left to do.
    expect((await reprocess({ all: true })).json()).toMatchObject({ queued: 0, state: 'finished' });
    await expectCountersEqualCounts(t.store, t.clock);
  });

  it('posts each record once when two processors drain a run at once', async () => {
    const ingestionId = await failForMissingLookup(t, operator, EVENTS);
    await addLookupKeepingData(t, operator);
    const run = (await reprocess({ all: true })).json();
    const other = createServices(t.store, t.clock, SETTINGS, { processing: 'here' });
    try {
      const [mine, theirs] = await Promise.all([t.services.processor.drain(), other.processor.drain()]);
      expect(mine + theirs).toBe(EVENTS);
    } finally {
      await other.close();
    }
    expect(await runOf(run.id)).toMatchObject({ state: 'finished', posted: EVENTS });
    const perRecord = await journalsPerRecord(t.store, ingestionId);
    expect(perRecord.size).toBe(EVENTS);
    expect(new Set(perRecord.values()).size).toBe(1);
    await expectCountersEqualCounts(t.store, t.clock);
  });

  it('answers what-if counts for a candidate configuration in the keep-data dry run, equal to what the run then does', async () => {
    await failForMissingLookup(t, operator, EVENTS);
    const dryUpload = async (payload: ReturnType<typeof realisticConfiguration>) => {
      const answer = await t.call(operator, {
        method: 'PUT',
        url: '/api/v1/configuration/bulk?keep=processing-data&dryRun=true',
        payload,
      });
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.json().whatIf;
    };
    // The stored rules again: every failed record would fail as before.
    expect(await dryUpload(configurationWithoutLookup())).toMatchObject({
      wouldPost: 0,
      wouldStillFail: { 'no-account': EVENTS },
    });
    const whatIf = await dryUpload(realisticConfiguration());
    expect(whatIf).toMatchObject({ wouldPost: EVENTS, wouldStillFail: {} });
    expect(await openErrorRows(t.store)).toBe(EVENTS);
    await addLookupKeepingData(t, operator);
    const run = (await reprocess({ all: true })).json();
    await t.services.processor.drain();
    expect(await runOf(run.id)).toMatchObject({ posted: whatIf.wouldPost, stillFailing: 0 });
  });

  it('refuses an empty selection, a backwards range and unknown members, naming them', async () => {
    const empty = await reprocess({});
    expect(empty.statusCode).toBe(400);
    expect(empty.json().errors[0]).toMatchObject({ path: '/selection' });
    const backwards = await reprocess({ from: '2026-11-21', to: '2026-11-20' });
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json().errors[0]).toMatchObject({ path: '/to' });
    const unknown = await reprocess({ all: true, everything: 1 });
    expect(unknown.statusCode).toBe(400);
    const notAll = await reprocess({ all: false });
    expect(notAll.statusCode).toBe(400);
    const missing = await t.call(operator, {
      method: 'GET',
      url: '/api/v1/processing-errors/reprocess-runs/12345',
    });
    expect(missing.statusCode).toBe(404);
  });

  it('validates the schedule: interval of at least 180 minutes, HH:MM, attempts 1 to 100; changes go to the audit log', async () => {
    const put = (payload: Record<string, unknown>) =>
      t.call(operator, { method: 'PUT', url: '/api/v1/processing-errors/reprocess-schedule', payload });
    const good = { mode: 'interval', dailyAt: '08:00', intervalMinutes: 180, maxAttempts: 5 };
    for (const [member, value] of [
      ['intervalMinutes', 179],
      ['dailyAt', '24:00'],
      ['dailyAt', '8:00'],
      ['maxAttempts', 0],
      ['maxAttempts', 101],
      ['mode', 'hourly'],
    ] as const) {
      const response = await put({ ...good, [member]: value });
      expect(response.statusCode, `${member} ${value}`).toBe(400);
      expect(response.json().errors[0].path, response.body).toContain(member);
    }
    const ok = await put(good);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ mode: 'interval', intervalMinutes: 180, maxAttempts: 5 });
    expect(Date.parse(ok.json().nextDueAt) - t.clock.now().getTime()).toBe(180 * 60_000);
    const read = await t.call(operator, {
      method: 'GET',
      url: '/api/v1/processing-errors/reprocess-schedule',
    });
    expect(read.json()).toEqual(ok.json());
    const audit = await t.call(await t.tokenFor(['admin']), {
      method: 'GET',
      url: '/api/v1/audit-log',
    });
    expect(audit.statusCode, audit.body).toBe(200);
    // The newest entries are the reader's own user and credential, made just above.
    const entries: { action: string }[] = audit.json().data;
    expect(entries.find((e) => e.action === 'processing.reprocess-schedule')).toMatchObject({
      action: 'processing.reprocess-schedule',
      details: { maxAttempts: 5 },
    });
  });
});
