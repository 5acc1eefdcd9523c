import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDENTIAL_NAME_LENGTH_MAX } from '../../src/modules/auth/inputs.js';
import { SUBSCRIPTION_DESCRIPTION_LENGTH_MAX } from '../../src/modules/events/inputs.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, userWith } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** A name of `n` characters, each outside the Basic Multilingual Plane (two UTF-16 units). */
const astral = (n: number) => '\u{1F4B6}'.repeat(n);

/**
 * Issue 21: a request rule is written once (`modules/<area>/inputs.ts`) and both the REST
 * schemas and the administration pages hold requests to it, so a value one accepts the other
 * accepts, and a value one refuses the other refuses.
 */
describe('request rules shared by the API and the administration pages', () => {
  it('bounds a credential name in characters, as the API does, on the confirmation page', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const ownerEmail = await userWith(t, ['api-client']);
    const token = await t.tokenFor(['admin']);
    const longest = astral(CREDENTIAL_NAME_LENGTH_MAX);
    const api = (name: string) =>
      t.call(token, { method: 'POST', url: '/api/v1/credentials', payload: { ownerEmail, name } });

    expect((await api(longest)).statusCode).toBe(201);
    const confirm = await admin.post('/admin/credentials/confirm', { ownerEmail, name: longest });
    expect(confirm.statusCode).toBe(200);

    const tooLong = `${longest}x`;
    const byApi = await api(tooLong);
    expect(byApi.statusCode).toBe(400);
    const [rule] = byApi.json().errors;
    expect(rule).toEqual({
      path: '/name',
      message: `must NOT have more than ${CREDENTIAL_NAME_LENGTH_MAX} characters`,
    });
    const refused = await admin.post('/admin/credentials/confirm', { ownerEmail, name: tooLong });
    expect(refused.statusCode).toBe(400);
    // The same rule in the same words, naming the field.
    expect(refused.body).toContain(`name ${rule.message}`);
  });

  it('reads the user forms through the API body schemas: a role the API refuses, an unticked box', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const token = await t.tokenFor(['admin']);
    const byApi = await t.call(token, {
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'form-rules@example.test', roles: ['auditor-in-chief'] },
    });
    expect(byApi.statusCode).toBe(400);
    const refused = await admin.post('/admin/users', {
      email: 'form-rules@example.test',
      roles: 'auditor-in-chief',
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('roles/0');
    expect(await t.services.access.findUser('form-rules@example.test')).toBeUndefined();

    const made = await admin.post('/admin/users', { email: 'form-rules@example.test', roles: 'viewer' });
    expect(made.statusCode).toBe(303);
    const path = `/admin/users/${encodeURIComponent('form-rules@example.test')}`;
    await admin.post(path, { displayName: 'Rules', roles: 'viewer', disabled: 'true' });
    expect(await t.services.access.findUser('form-rules@example.test')).toMatchObject({ disabled: true });
    // The form shows the box: unticked, it sends nothing, and the user is enabled again.
    expect((await admin.post(path, { displayName: 'Rules', roles: 'viewer' })).statusCode).toBe(303);
    expect(await t.services.access.findUser('form-rules@example.test')).toMatchObject({
      disabled: false,
      displayName: 'Rules',
      roles: ['viewer'],
    });
  });

  it('filters sessions and journals by the states and statuses the API accepts, and ignores others', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const sessions = await admin.get('/admin/ingestions?state=closed');
    expect(sessions.statusCode).toBe(200);
    expect(sessions.body).toContain('<option selected>closed</option>');
    const unknownState = await admin.get('/admin/ingestions?state=open');
    expect(unknownState.statusCode).toBe(200);
    expect(unknownState.body).not.toContain('<option selected>');

    const journals = await admin.get('/admin/journals?status=unposted');
    expect(journals.statusCode).toBe(200);
    expect(journals.body).toContain('<option selected>unposted</option>');
    const unknownStatus = await admin.get('/admin/journals?status=draft');
    expect(unknownStatus.statusCode).toBe(200);
    expect(unknownStatus.body).not.toContain('<option selected>');
  });

  it('reads a webhook subscription form through the API body schema: what one refuses, the other refuses', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const token = await t.tokenFor(['admin']);
    expect(
      (await t.call(token, { method: 'POST', url: '/api/v1/event-deliveries/secrets' })).statusCode,
    ).toBe(201);
    const description = 'd'.repeat(SUBSCRIPTION_DESCRIPTION_LENGTH_MAX + 1);
    const body = { url: 'https://hooks.example.com/rules', eventTypes: ['ingestion.closed'], description };
    const api = await t.call(token, {
      method: 'POST',
      url: '/api/v1/event-deliveries/subscriptions',
      payload: body,
    });
    expect(api.statusCode).toBe(400);
    expect(api.json().errors).toContainEqual({ path: '/description', message: expect.any(String) });
    const refused = await admin.post('/admin/webhooks', { ...body, eventTypes: 'ingestion.closed' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('description must NOT have more than');
    const unknownType = await admin.post('/admin/webhooks', {
      url: body.url,
      eventTypes: 'ingestion.opened',
    });
    expect(unknownType.statusCode).toBe(400);
    expect(unknownType.body).toContain('eventTypes/0');
    const made = await admin.post('/admin/webhooks', { url: body.url, eventTypes: 'ingestion.closed' });
    expect(made.statusCode).toBe(303);
  });
});
