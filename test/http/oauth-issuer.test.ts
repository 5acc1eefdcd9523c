import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const METADATA = '/.well-known/oauth-authorization-server';

/**
 * Issue 14, point 11: the RFC 8414 metadata took its issuer from the Host header, which any
 * client chooses. The issuer is the configured public URL (`PUBLIC_URL`), or the address the
 * server listens on.
 */
describe('OAuth metadata issuer', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('is the configured public URL, whatever Host the request names', async () => {
    t = await createTestApp({}, { publicUrl: 'https://ledger.example.com/base' });
    const response = await t.app.inject({
      method: 'GET',
      url: METADATA,
      headers: { host: 'attacker.example', 'x-forwarded-host': 'attacker.example' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      issuer: 'https://ledger.example.com/base',
      token_endpoint: 'https://ledger.example.com/base/auth/token',
      revocation_endpoint: 'https://ledger.example.com/base/auth/revoke',
    });
    expect(response.body).not.toContain('attacker');
  });

  it('is the listener address when no public URL is set', async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const response = await t.app.inject({
      method: 'GET',
      url: METADATA,
      headers: { host: 'attacker.example' },
    });
    expect(response.json()).toMatchObject({
      issuer: `http://127.0.0.1:${port}`,
      token_endpoint: `http://127.0.0.1:${port}/auth/token`,
    });
  });
});
