import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * Issue 14, point 11: an administrator could disable or demote the last administrator, leaving
 * no one to manage users. Such a change is refused with 409 `conflict` naming the rule, at the
 * API and in the administration interface, which calls the same service.
 */
describe('the last enabled administrator', () => {
  let t: TestApp;
  let admin: string;
  let adminEmail: string;
  beforeEach(async () => {
    t = await createTestApp();
    const credential = await t.credentialFor(['admin']);
    adminEmail = credential.ownerEmail;
    admin = (await t.services.tokens.clientCredentialsGrant(credential)).access_token;
  });
  afterEach(async () => t?.close());

  const patch = (email: string, payload: Record<string, unknown>) =>
    t.call(admin, { method: 'PATCH', url: `/api/v1/users/${encodeURIComponent(email)}`, payload });

  it.each([{ disabled: true }, { roles: ['viewer'] }, { roles: [] }])(
    'cannot be changed by %j: 409 naming the rule',
    async (change) => {
      const response = await patch(adminEmail, change);
      expect(response.statusCode, response.body).toBe(409);
      expect(response.json()).toMatchObject({
        type: 'urn:ledgerflow:problem:conflict',
        rule: 'last-administrator',
      });
      expect(response.json().detail).toContain('last enabled administrator');
      const user = await t.services.access.findUser(adminEmail);
      expect(user).toMatchObject({ disabled: false, roles: ['admin'] });
    },
  );

  it('can still be renamed or given more roles', async () => {
    expect((await patch(adminEmail, { displayName: 'Root', roles: ['admin', 'viewer'] })).statusCode).toBe(
      200,
    );
  });

  it('can be demoted once another administrator exists, who then is the last one', async () => {
    const other = await t.credentialFor(['admin']);
    expect((await patch(adminEmail, { roles: ['viewer'] })).statusCode).toBe(200);
    const token = (await t.services.tokens.clientCredentialsGrant(other)).access_token;
    const response = await t.call(token, {
      method: 'PATCH',
      url: `/api/v1/users/${encodeURIComponent(other.ownerEmail)}`,
      payload: { disabled: true },
    });
    expect(response.statusCode, response.body).toBe(409);
  });

  it('a disabled administrator does not count', async () => {
    const other = await t.credentialFor(['admin']);
    expect((await patch(other.ownerEmail, { disabled: true })).statusCode).toBe(200);
    expect((await patch(adminEmail, { disabled: true })).statusCode).toBe(409);
  });

  it('of two administrators demoted at once, exactly one change is made', async () => {
    const other = await t.credentialFor(['admin']);
    const outcomes = await Promise.allSettled([
      t.services.access.updateUser(adminEmail, { disabled: true }, { actor: { user: 'test-setup' } }),
      t.services.access.updateUser(
        other.ownerEmail,
        { roles: ['viewer'] },
        { actor: { user: 'test-setup' } },
      ),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(refused?.status === 'rejected' && refused.reason).toBeInstanceOf(AppError);
    expect(refused?.status === 'rejected' && (refused.reason as AppError).code).toBe('conflict');
  });
});
