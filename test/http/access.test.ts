import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('users and credentials endpoints', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.tokenFor(['admin']);
  });
  afterAll(async () => t?.close());
  it('creates a user, a credential whose secret is shown once, lists without secrets, revokes', async () => {
    const user = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'Ops@Example.com', roles: ['api-client'] },
    });
    expect(user.statusCode).toBe(201);
    expect(user.json()).toMatchObject({ email: 'ops@example.com', roles: ['api-client'], disabled: false });
    const duplicate = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'ops@example.com', roles: [] },
    });
    expect(duplicate.statusCode).toBe(409);

    const created = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { ownerEmail: 'ops@example.com', name: 'nightly' },
    });
    expect(created.statusCode).toBe(201);
    const credential = created.json();
    expect(credential).toMatchObject({
      ownerEmail: 'ops@example.com',
      name: 'nightly',
      clientSecret: expect.stringMatching(/^lfs_/),
    });
    const days = (Date.parse(credential.expiresAt) - Date.parse(credential.createdAt)) / 86_400_000;
    expect(days).toBe(90);

    const list = await t.call(admin, { method: 'GET', url: '/api/v1/credentials?limit=1000' });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(credential.clientSecret);
    expect(list.body).not.toContain('secret');
    expect(list.json()).toMatchObject({ page: 0, limit: 1000, totalSize: expect.any(Number), totalPages: 1 });
    expect(list.json().data.map((c: { clientId: string }) => c.clientId)).toContain(credential.clientId);

    expect(
      (await t.call(admin, { method: 'DELETE', url: `/api/v1/credentials/${credential.clientId}` }))
        .statusCode,
    ).toBe(204);
    expect(
      (await t.call(admin, { method: 'DELETE', url: '/api/v1/credentials/lfc_missing' })).statusCode,
    ).toBe(404);
  });

  it('rejects unknown members, unknown roles, an unknown owner and an out-of-range expiry', async () => {
    const unknownMember = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'u@x.y', roles: [], admin: true },
    });
    expect(unknownMember.statusCode).toBe(400);
    expect(unknownMember.json().errors).toContainEqual({ path: '/admin', message: 'is not a known member' });
    const badRole = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'u@x.y', roles: ['root'] },
    });
    expect(badRole.statusCode).toBe(400);
    expect(badRole.json().errors[0].path).toBe('/roles/0');
    const noOwner = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { ownerEmail: 'ghost@x.y' },
    });
    expect(noOwner.statusCode).toBe(404);
    const expiry = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { ownerEmail: 'ops@example.com', expiresInDays: 0 },
    });
    expect(expiry.statusCode).toBe(400);
    expect(expiry.json().errors[0].path).toBe('/expiresInDays');
  });

  it('holds the password of a new user to the password rule, whoever creates the user', async () => {
    await expect(
      t.services.access.createUser(
        { email: 'short@example.test', roles: ['viewer'], password: 'short' },
        { actor: { user: 'test-setup' } },
      ),
    ).rejects.toMatchObject({ code: 'validation-failed' });
    const { answer: made } = await t.services.access.createUser(
      {
        email: 'long@example.test',
        roles: ['viewer'],
        password: 'long enough to be a password',
      },
      { actor: { user: 'test-setup' } },
    );
    expect(made.email).toBe('long@example.test');
  });

  it('changes roles and the disabled flag, and 404s an unknown user', async () => {
    await t.call(admin, {
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'p@x.y', roles: ['viewer'] },
    });
    const patched = await t.call(admin, {
      method: 'PATCH',
      url: '/api/v1/users/p@x.y',
      payload: { roles: ['bulk-operator'], disabled: true },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ roles: ['bulk-operator'], disabled: true });
    expect(
      (await t.call(admin, { method: 'PATCH', url: '/api/v1/users/none@x.y', payload: { disabled: true } }))
        .statusCode,
    ).toBe(404);
    const users = await t.call(admin, { method: 'GET', url: '/api/v1/users?limit=2&page=0' });
    expect(users.json().data).toHaveLength(2);
    expect(users.body).not.toContain('password');
  });

  it('rejects page sizes over the limit with a problem naming the query field', async () => {
    const response = await t.call(admin, { method: 'GET', url: '/api/v1/users?limit=1001' });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].path).toBe('/querystring/limit');
  });
});
