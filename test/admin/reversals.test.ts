import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { type Signed, signIn, userWith } from './helpers.js';

const EVENTS = 3;

/** The "Reverse…" actions of a journal and of an ingestion, and the reversals pages (issue 24). */
describe('reversals in the administration interface', () => {
  let t: TestApp;
  let admin: Signed;
  let viewer: Signed;
  let ingestionId: string;
  let journalIds: string[];
  beforeEach(async () => {
    t = await createTestApp();
    admin = await signIn(t, await userWith(t, ['admin']));
    viewer = await signIn(t, await userWith(t, ['viewer']));
    const token = await t.tokenFor(['bulk-operator']);
    const put = await t.call(token, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode, put.body).toBe(200);
    const events = Array.from({ length: EVENTS }, (_, i) => businessEvent({ amount: `${100 + i}.25` }));
    ingestionId = await ingestClosedSession(t, token, 'businessEvent', events);
    await t.services.processor.drain();
    const page = await t.services.journals.list({ ingestionId }, 0, 100);
    journalIds = page.rows.map((j) => j.journalId);
    expect(journalIds.length).toBeGreaterThan(0);
  });
  afterEach(async () => {
    await t.close();
  });

  it('reverses one journal after its dry run and a reason, links both ways, and lists the reversal', async () => {
    const [journalId = ''] = journalIds;
    const shown = await admin.get(`/admin/journals/${journalId}`);
    expect(shown.body).toContain(`href="/admin/journals/${journalId}/reverse"`);
    expect((await viewer.get(`/admin/journals/${journalId}`)).body).not.toContain('Reverse…');

    const dry = await admin.get(`/admin/journals/${journalId}/reverse`);
    expect(dry.statusCode).toBe(200);
    expect(dry.body).toMatch(/<dt>Reversal journals<\/dt><dd>1 \(\d+ lines\)<\/dd>/);
    expect(dry.body).toContain('Reverse 1 journal<');
    expect(dry.body).toContain('name="reason"');
    // The dry run changed nothing, and a viewer may not reverse.
    expect((await t.services.journals.get(journalId)).withdrawnBy).toBeNull();
    expect((await viewer.get(`/admin/journals/${journalId}/reverse`)).statusCode).toBe(403);

    const noReason = await admin.post(`/admin/journals/${journalId}/reverse`, { reason: '  ' });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.body).toContain('A reason is needed');

    const done = await admin.post(`/admin/journals/${journalId}/reverse`, {
      reason: 'booked twice upstream',
    });
    expect(done.statusCode).toBe(303);
    const location = String(done.headers.location);
    expect(location).toMatch(/^\/admin\/reversals\/[0-9a-f-]{36}$/);
    const reversal = await viewer.get(location);
    expect(reversal.statusCode).toBe(200);
    expect(reversal.body).toContain('booked twice upstream');
    const withdrawnBy = (await t.services.journals.get(journalId)).withdrawnBy ?? '';
    expect(withdrawnBy).not.toBe('');
    expect(reversal.body).toContain(`href="/admin/journals/${withdrawnBy}"`);

    const original = await admin.get(`/admin/journals/${journalId}`);
    expect(original.body).toContain(
      `<dt>Withdrawn by</dt><dd>journal <a class="id" href="/admin/journals/${withdrawnBy}">`,
    );
    expect(original.body).not.toContain('Reverse…');
    const reversalJournal = await admin.get(`/admin/journals/${withdrawnBy}`);
    expect(reversalJournal.body).toContain(`href="/admin/journals/${journalId}"`);
    expect(reversalJournal.body).toContain(`href="${location}"`);

    const audit = await admin.get('/admin/audit');
    expect(audit.body).toContain(`Reversed <a href="${location}">1 journal</a>`);
    expect(audit.body).toContain('<dt>Reason</dt><dd>booked twice upstream</dd>');
    const list = await viewer.get('/admin/reversals');
    expect(list.body).toContain(`href="${location}"`);
    expect(list.body).toContain('booked twice upstream');
  });

  it('shows a refused posting date on the form, naming the period, its state and the node, and reverses nothing', async () => {
    const [journalId = ''] = journalIds;
    // November is locked for the Amsterdam node in both accounting configurations.
    const controller = await t.tokenFor(['admin']);
    for (const accountingConfig of ['IFRS', 'LOCAL_GAAP']) {
      const locked = await t.call(controller, {
        method: 'POST',
        url: '/api/v1/periods/lock',
        payload: { accountingConfig, node: { legalEntity: 'LF_NL', branch: 'AMS' }, firstDay: '2026-11-01' },
      });
      expect(locked.statusCode, locked.body).toBe(200);
    }
    const refused = await admin.post(`/admin/journals/${journalId}/reverse`, {
      reason: 'booked twice upstream',
      postingDate: '2026-11-20',
    });
    expect(refused.statusCode).toBe(422);
    // The form again, with what was entered and the refusal beside the posting date.
    expect(refused.body).toContain(`action="/admin/journals/${journalId}/reverse"`);
    expect(refused.body).toContain('required>booked twice upstream</textarea>');
    expect(refused.body).toMatch(
      /name="postingDate" value="2026-11-20" [^>]*aria-describedby="postingDate-hint posting-date-refusal" aria-invalid="true"/,
    );
    expect(refused.body).toContain('The posting date 2026-11-20 was refused; nothing was reversed.');
    expect(refused.body).toContain(
      'postingDate 2026-11-20 is in period 2026-11 of node {&quot;branch&quot;:&quot;AMS&quot;,&quot;legalEntity&quot;:&quot;LF_NL&quot;} and accounting configuration',
    );
    expect(refused.body).toContain('which is locked');
    expect((await t.services.journals.get(journalId)).withdrawnBy).toBeNull();

    // Not a date at all (a form has no schema): refused on the form too.
    const notADate = await admin.post(`/admin/journals/${journalId}/reverse`, {
      reason: 'booked twice upstream',
      postingDate: '20/11/2026',
    });
    expect(notADate.statusCode).toBe(400);
    expect(notADate.body).toContain('Posting date: must be a date YYYY-MM-DD.');
    expect((await t.services.journals.get(journalId)).withdrawnBy).toBeNull();
    expect((await t.services.reversals.list({ page: 0 }, 10)).rows).toEqual([]);
  });

  it('reverses what an ingestion produced, and a second dry run finds nothing left to reverse', async () => {
    const session = await admin.get(`/admin/ingestions/${ingestionId}`);
    expect(session.body).toContain(`href="/admin/ingestions/${ingestionId}/reverse"`);
    const dry = await admin.get(`/admin/ingestions/${ingestionId}/reverse`);
    expect(dry.body).toContain(`Reverse ${journalIds.length} journals`);
    const done = await admin.post(`/admin/ingestions/${ingestionId}/reverse`, {
      reason: 'the whole file was sent to the wrong instance',
    });
    expect(done.statusCode).toBe(303);
    const again = await admin.get(`/admin/ingestions/${ingestionId}/reverse`);
    expect(again.body).toContain('Nothing to reverse');
    expect(again.body).toMatch(
      new RegExp(`<dt>Already reversed, left as they are</dt><dd>${journalIds.length}`),
    );
    // A form sent again (a second tab, a back button) reverses nothing and records nothing.
    const twice = await admin.post(`/admin/ingestions/${ingestionId}/reverse`, {
      reason: 'the whole file was sent to the wrong instance',
    });
    expect(twice.statusCode).toBe(200);
    expect(twice.body).toContain('Nothing to reverse');
    expect((await t.services.reversals.list({ page: 0 }, 10)).rows).toHaveLength(1);
  });
});
