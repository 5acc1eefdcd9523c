import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { TestApp } from './app.js';

/** A fresh deep copy of the realistic configuration document (tests may change it freely). */
export function realisticConfiguration(): {
  version: string;
  configuration: Record<string, unknown> & { entities: { attributes: unknown[] }[] };
  downloadTime?: unknown;
  downloadedBy?: string;
} {
  return JSON.parse(readFileSync(new URL('../../docs/examples/configuration.json', import.meta.url), 'utf8'));
}

/**
 * Uploads the realistic configuration through the API, as `token` (a bulk operator's when none
 * is given), and fails the test when it is refused.
 */
export async function uploadRealisticConfiguration(t: TestApp, token?: string): Promise<void> {
  const caller = token ?? (await t.tokenFor(['bulk-operator']));
  const put = await t.call(caller, {
    method: 'PUT',
    url: '/api/v1/configuration/bulk',
    payload: realisticConfiguration(),
  });
  expect(put.statusCode, put.body).toBe(200);
}

/** Opens an ingestion session of the realistic configuration's loan entity; returns its id. */
export async function openLoanSession(t: TestApp, token: string): Promise<string> {
  const response = await t.call(token, {
    method: 'POST',
    url: '/api/v1/ingestions',
    payload: { namespace: 'loans', entity: 'loanTransaction' },
  });
  expect(response.statusCode, response.body).toBe(201);
  return (response.json() as { ingestionId: string }).ingestionId;
}

/**
 * Opens a session of `ledger/<entity>` as `token`, sends `data` as its one chunk (which must be
 * stored) and closes it; returns its id.
 */
export async function ingestClosedSession(
  t: TestApp,
  token: string,
  entity: string,
  data: unknown[],
): Promise<string> {
  const session = await t.call(token, {
    method: 'POST',
    url: '/api/v1/ingestions',
    payload: { namespace: 'ledger', entity },
  });
  const ingestionId = session.json().ingestionId as string;
  const chunk = await t.call(token, {
    method: 'POST',
    url: `/api/v1/ingestions/${ingestionId}`,
    payload: { data },
  });
  expect(chunk.statusCode, chunk.body).toBe(201);
  await t.call(token, {
    method: 'PATCH',
    url: `/api/v1/ingestions/${ingestionId}`,
    payload: { state: 'closed' },
  });
  return ingestionId;
}
