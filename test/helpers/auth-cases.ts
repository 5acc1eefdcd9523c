import type { InjectOptions } from 'fastify';
import { expect, it } from 'vitest';
import type { TestApp } from './app.js';

/**
 * The authentication cases every protected route shares (style: one helper for the auth cases
 * of every route): no token, a malformed header, an unknown token, and a caller whose roles
 * lack the permission, each with the documented status and problem type.
 */
export function itRequiresPermission(
  getApp: () => TestApp,
  request: InjectOptions & { method: string; url: string },
  permission: string,
  rolesWithout: string[],
): void {
  const label = `${request.method} ${request.url}`;

  it(`${label}: 401 with WWW-Authenticate: Bearer without a token`, async () => {
    const response = await getApp().app.inject(request);
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.json().type).toBe('urn:ledgerflow:problem:unauthorized');
  });

  it(`${label}: 401 invalid_token for a malformed or unknown token`, async () => {
    for (const authorization of [
      'Bearer',
      'Basic abc',
      'Bearer lfa_unknown',
      `Bearer ${'x'.repeat(5000)}`,
      'Bearer a b',
    ]) {
      const response = await getApp().app.inject({
        ...request,
        headers: { ...request.headers, authorization },
      });
      expect(response.statusCode, authorization.slice(0, 20)).toBe(401);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it(`${label}: 403 naming ${permission} for roles ${rolesWithout.join(', ') || '(none)'}`, async () => {
    // Every role reads something, so a caller without any role is made by taking the roles
    // away after the token was issued; the token then acts with no permission at all.
    const t = getApp();
    const credential = await t.credentialFor(['viewer']);
    const token = (await t.services.tokens.clientCredentialsGrant(credential)).access_token;
    await t.services.accounts.updateUser(credential.ownerEmail, { roles: rolesWithout });
    const response = await t.call(token, request);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:forbidden',
      missingPermission: permission,
    });
    expect(response.json().detail).toContain(permission);
  });
}
