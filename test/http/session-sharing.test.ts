import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openLoanSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';

/**
 * Issue 14, point 11: sessions have no owner check, by decision (docs/decisions.md, "Ingestion
 * sessions are shared"): any caller with `ingestion:write` may append to and close a session
 * another user opened, as a team shares its sessions.
 */
describe('ingestion sessions are shared by every writer', () => {
  let t: TestApp;
  let opener: string;
  let colleague: string;
  beforeAll(async () => {
    t = await createTestApp();
    opener = await t.tokenFor(['api-client']);
    colleague = await t.tokenFor(['api-client']);
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  it("lets a credential of another user append to and close the opener's session", async () => {
    const ingestionId = await openLoanSession(t, opener);
    for (const [token, n] of [
      [opener, 1],
      [colleague, 2],
    ] as const) {
      const chunk = await t.call(token, {
        method: 'POST',
        url: `/api/v1/ingestions/${ingestionId}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ data: [loanRecord(n)] }),
      });
      expect(chunk.statusCode, chunk.body).toBe(201);
    }
    const closed = await t.call(colleague, {
      method: 'PATCH',
      url: `/api/v1/ingestions/${ingestionId}`,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ state: 'closed' }),
    });
    expect(closed.statusCode, closed.body).toBe(200);
    expect(closed.json()).toMatchObject({ state: 'closed', successRows: 2 });
  });
});
