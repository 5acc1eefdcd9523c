import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactedUrl } from '../../src/http/request-log.js';
import { createTestApp, form, type TestApp } from '../helpers/app.js';

/**
 * Issue 14, point 10: credentials a client put in a URL (`/auth/token?client_secret=...`,
 * `?access_token=...`) appeared in the `req.url` of the info log. Their values are redacted.
 */
describe('credentials in a URL are not logged', () => {
  const lines: Record<string, unknown>[] = [];
  const apps: TestApp[] = [];
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  beforeAll(async () => {
    // A pino instance, as main.ts passes, and a logger configuration.
    apps.push(await createTestApp({}, { logger: pino({ level: 'info' }, capture) }));
    apps.push(await createTestApp({}, { logger: { level: 'info', stream: capture } }));
  });
  afterAll(async () => {
    for (const t of apps) await t.close();
  });

  const secrets = [
    'lfs_in-the-query-0001',
    'at_in-the-query-0002',
    'rt_in-the-query-0003',
    'tok_in-the-query-0004',
    'pw_in-the-query-0005',
    'code_in-the-query-0006',
  ];

  it('redacts client_secret, access_token, refresh_token, token, password and code from req.url', async () => {
    for (const t of apps) {
      const query = `client_id=lfc_visible&client_secret=${secrets[0]}&grant_type=client_credentials`;
      await t.app.inject({ method: 'POST', url: `/auth/token?${query}`, ...form({ grant_type: 'x' }) });
      await t.app.inject({ method: 'GET', url: `/api/v1/journals?access_token=${secrets[1]}&limit=5` });
      await t.app.inject({
        method: 'POST',
        url: `/auth/revoke?Refresh_Token=${secrets[2]}&token=${secrets[3]}`,
        ...form({}),
      });
      await t.app.inject({ method: 'GET', url: `/healthz?password=${secrets[4]}&code=${secrets[5]}` });
    }
    const logged = JSON.stringify(lines);
    for (const secret of secrets) expect(logged).not.toContain(secret);
    const urls = lines
      .map((line) => (line.req as { url?: string } | undefined)?.url)
      .filter((url) => url !== undefined);
    expect(urls).toContain(
      '/auth/token?client_id=lfc_visible&client_secret=[redacted]&grant_type=client_credentials',
    );
    expect(urls).toContain('/api/v1/journals?access_token=[redacted]&limit=5');
    expect(urls.filter((url) => url.startsWith('/api/v1/journals'))).toHaveLength(2);
  });

  it('keeps the rest of the URL as sent', () => {
    expect(redactedUrl('/api/v1/journals')).toBe('/api/v1/journals');
    expect(redactedUrl('/a?b=1&c&%74oken=x&password')).toBe(
      '/a?b=1&c&%74oken=[redacted]&password=[redacted]',
    );
    expect(redactedUrl('/a?client%5Fsecret=s&x=%E0')).toBe('/a?client%5Fsecret=[redacted]&x=%E0');
  });
});
