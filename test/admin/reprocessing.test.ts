import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addLookupKeepingData, failForMissingLookup } from '../helpers/reprocessing.js';
import { type Signed, signIn, userWith } from './helpers.js';

const EVENTS = 4;

/** The processing errors page's "Reprocess…": the dry run first, the run once confirmed (issue 23). */
describe('reprocessing in the administration interface', () => {
  let t: TestApp;
  let admin: Signed;
  let viewer: Signed;
  let ingestionId: string;
  beforeEach(async () => {
    t = await createTestApp();
    admin = await signIn(t, await userWith(t, ['admin']));
    viewer = await signIn(t, await userWith(t, ['viewer']));
    ingestionId = await failForMissingLookup(t, await t.tokenFor(['bulk-operator']), EVENTS);
  });
  afterEach(async () => {
    await t.close();
  });

  it('shows the dry run of the filtered errors, runs them once confirmed, and shows the run', async () => {
    const list = await admin.get(`/admin/processing-errors?ingestionId=${ingestionId}`);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`href="/admin/processing-errors/reprocess?ingestionId=${ingestionId}"`);
    expect(list.body).toContain('Reprocessing</a>');

    await addLookupKeepingData(t, await t.tokenFor(['bulk-operator']));
    const dry = await admin.get(`/admin/processing-errors/reprocess?ingestionId=${ingestionId}`);
    expect(dry.statusCode).toBe(200);
    expect(dry.body).toMatch(/<dt>Would post<\/dt><dd>4<\/dd>/);
    expect(dry.body).toContain(`Reprocess ${EVENTS} records`);
    expect(dry.body).toContain(`name="ingestionId" value="${ingestionId}"`);
    // The dry run changed nothing.
    expect((await t.services.reprocessing.errorStates()).open).toBe(EVENTS);

    const started = await admin.post('/admin/processing-errors/reprocess', { ingestionId });
    expect(started.statusCode).toBe(303);
    const location = String(started.headers.location);
    expect(location).toMatch(/^\/admin\/reprocessing\/runs\/\d+$/);
    await t.services.processor.drain();
    const run = await viewer.get(location);
    expect(run.statusCode).toBe(200);
    expect(run.body).toMatch(/<dt>Posted<\/dt><dd>4<\/dd>/);
    const runs = await viewer.get('/admin/reprocessing');
    expect(runs.body).toContain(`href="${location}"`);
    // A viewer sees neither "Reprocess…" nor the schedule's form.
    expect((await viewer.get('/admin/processing-errors')).body).not.toContain('Reprocess…');
    expect(runs.body).not.toContain('Save the schedule');
  });

  it('changes the schedule, and refuses a schedule that breaks its rules', async () => {
    const saved = await admin.post('/admin/reprocessing/schedule', {
      mode: 'interval',
      dailyAt: '06:30',
      intervalMinutes: '240',
      maxAttempts: '3',
    });
    expect(saved.statusCode).toBe(303);
    expect((await admin.get('/admin/reprocessing')).body).toContain('Every 240 minutes; at most 3 attempts');
    const refused = await admin.post('/admin/reprocessing/schedule', {
      mode: 'interval',
      dailyAt: '06:30',
      intervalMinutes: '60',
      maxAttempts: '3',
    });
    expect(refused.statusCode).toBe(400);
    expect((await t.services.reprocessing.schedule()).intervalMinutes).toBe(240);
  });
});
