import type { InjectOptions } from 'fastify';
import { expect, it } from 'vitest';
import { type Permission, permissionsOf, ROLE_NAMES } from '../../src/modules/auth/permissions.js';
import type { TestApp } from './app.js';

/** The access of a route anyone may call without a token. */
export const PUBLIC = 'public';

/**
 * Who may call each route of the app: `PUBLIC`, or the permission the route needs (a list when
 * any one of them suffices), keyed `METHOD /path` as the route is registered (HEAD routes
 * follow their GET). This is the one table of the shared auth rule: `test/http/auth-coverage`
 * checks it against the routes of the built app, both ways, and runs the shared auth cases of
 * `itRequiresPermission` on every protected route it lists. A new route therefore fails that
 * test until it is entered here, with the permission the contract gives it; a route that
 * forgot to declare its permission fails because its entry says otherwise. Routes under
 * `/docs` belong to the API reference page and are public. The administration interface's
 * routes are not listed: they declare `adminPermission`, and the same test file checks the
 * sign-in, permission and CSRF refusals of every one that changes state.
 */
export const ROUTE_ACCESS: Readonly<Record<string, typeof PUBLIC | Permission | readonly Permission[]>> = {
  'GET /healthz': PUBLIC,
  'GET /readyz': PUBLIC,
  'GET /metrics': PUBLIC,
  'GET /openapi.json': PUBLIC,
  'GET /.well-known/oauth-authorization-server': PUBLIC,
  'POST /auth/token': PUBLIC,
  'POST /auth/revoke': PUBLIC,

  'GET /api/v1/credentials': 'credentials:manage',
  'POST /api/v1/credentials': 'credentials:manage',
  'DELETE /api/v1/credentials/:clientId': 'credentials:manage',
  'GET /api/v1/users': 'users:manage',
  'POST /api/v1/users': 'users:manage',
  'PATCH /api/v1/users/:email': 'users:manage',

  'GET /api/v1/configuration/bulk': 'configuration:read',
  'PUT /api/v1/configuration/bulk': 'configuration:write',
  'DELETE /api/v1/configuration/bulk': 'configuration:delete',
  'GET /api/v1/configuration/revisions': 'configuration:read',
  'GET /api/v1/configuration/revisions/:revision': 'configuration:read',
  'GET /api/v1/configuration/revisions/:revision/diff': 'configuration:read',
  'GET /api/v1/audit-log': ['users:manage', 'configuration:read'],
  'GET /api/v1/audit-log/export': ['users:manage', 'configuration:read'],
  'GET /api/v1/audit-log/verification': ['users:manage', 'configuration:read'],

  'GET /api/v1/namespaces': 'configuration:read',
  'GET /api/v1/namespaces/:ns/entities': 'configuration:read',
  'GET /api/v1/namespaces/:ns/entities/:entity': 'configuration:read',
  'GET /api/v1/namespaces/:ns/entities/:entity/example': 'configuration:read',
  'GET /api/v1/namespaces/:ns/entities/:entity/records': 'ingestion:read',

  'POST /api/v1/ingestions': 'ingestion:write',
  'GET /api/v1/ingestions': 'ingestion:read',
  'GET /api/v1/ingestions/:ingestionId': 'ingestion:read',
  'POST /api/v1/ingestions/:ingestionId': 'ingestion:write',
  'PATCH /api/v1/ingestions/:ingestionId': 'ingestion:write',
  'GET /api/v1/ingestions/:ingestionId/errors': 'ingestion:read',

  'GET /api/v1/statistics/operational-dashboard/ingestion-metrics': 'statistics:read',
  'GET /api/v1/statistics/operational-dashboard/journal-metrics': 'statistics:read',
  'GET /api/v1/statistics/operational-dashboard/journal-metrics-by-day': 'statistics:read',
  'GET /api/v1/statistics/processing': 'statistics:read',

  'GET /api/v1/journals': 'journals:read',
  'GET /api/v1/journals/:journalId': 'journals:read',
  'GET /api/v1/balances': 'journals:read',
  'GET /api/v1/processing-errors': 'journals:read',
  'POST /api/v1/processing-errors/reprocess': 'configuration:write',
  'GET /api/v1/processing-errors/reprocess-runs': 'journals:read',
  'GET /api/v1/processing-errors/reprocess-runs/:id': 'journals:read',
  'GET /api/v1/processing-errors/reprocess-schedule': 'journals:read',
  'PUT /api/v1/processing-errors/reprocess-schedule': 'configuration:write',
  'POST /api/v1/extraction-configurations': 'extracts:manage',
  'GET /api/v1/extraction-configurations': 'journals:read',
  'GET /api/v1/extraction-configurations/:id': 'journals:read',
  'PATCH /api/v1/extraction-configurations/:id': 'extracts:manage',
  'DELETE /api/v1/extraction-configurations/:id': 'extracts:manage',
  'GET /api/v1/extraction-configurations/:id/extractions/paginated': 'journals:read',
  'GET /api/v1/extraction-configurations/:id/extractions': 'journals:read',
  'POST /api/v1/extraction-configurations/:id/increment': 'journals:read',
  'POST /api/v1/extraction-configurations/:id/executions': 'journals:read',
  'GET /api/v1/extraction-configurations/:id/executions': 'journals:read',
  'GET /api/v1/extraction-executions/:executionId': 'journals:read',
  'GET /api/v1/extraction-executions/:executionId/file': 'journals:read',
  'GET /api/v1/statistics/reprocessing': 'statistics:read',
  'POST /api/v1/reversals': 'journals:reverse',
  'GET /api/v1/reversals': 'journals:read',
  'GET /api/v1/reversals/:reversalId': 'journals:read',
  'GET /api/v1/event-deliveries/event-types': 'webhooks:read',
  'POST /api/v1/event-deliveries/subscriptions': 'webhooks:manage',
  'GET /api/v1/event-deliveries/subscriptions': 'webhooks:read',
  'GET /api/v1/event-deliveries/subscriptions/:id': 'webhooks:read',
  'PATCH /api/v1/event-deliveries/subscriptions/:id': 'webhooks:manage',
  'POST /api/v1/event-deliveries/subscriptions/:id/pause': 'webhooks:manage',
  'POST /api/v1/event-deliveries/subscriptions/:id/resume': 'webhooks:manage',
  'DELETE /api/v1/event-deliveries/subscriptions/:id': 'webhooks:manage',
  'GET /api/v1/event-deliveries/subscriptions/:id/deliveries': 'webhooks:read',
  'POST /api/v1/event-deliveries/subscriptions/:id/redeliver': 'webhooks:manage',
  'POST /api/v1/event-deliveries/secrets': 'webhooks:manage',
  'POST /api/v1/event-deliveries/secrets/rotate': 'webhooks:manage',
  'GET /api/v1/event-deliveries/secrets': 'webhooks:manage',
  'GET /api/v1/event-deliveries/deliveries': 'webhooks:read',
  'GET /api/v1/event-deliveries/deliveries/:id': 'webhooks:read',
  'POST /api/v1/event-deliveries/deliveries/:id/redeliver': 'webhooks:manage',
  'GET /api/v1/approval-requests': ['approvals:read', 'approvals:approve'],
  'GET /api/v1/approval-requests/:requestId': ['approvals:read', 'approvals:approve'],
  'POST /api/v1/approval-requests/:requestId/approve': 'approvals:approve',
  'POST /api/v1/approval-requests/:requestId/reject': 'approvals:approve',
  'POST /api/v1/approval-requests/:requestId/cancel': ['approvals:read', 'approvals:approve'],
  'GET /api/v1/periods': 'journals:read',
  'POST /api/v1/periods/close': 'periods:manage',
  'POST /api/v1/periods/lock': 'periods:manage',
  'POST /api/v1/periods/reopen': 'periods:manage',
  'GET /api/v1/periods/snapshots': 'journals:read',
  'GET /api/v1/periods/snapshots/:snapshotId': 'journals:read',
};

/** The permissions of which any one lets a caller through, as a list. */
export function anyOf(permission: Permission | readonly Permission[]): readonly Permission[] {
  return typeof permission === 'string' ? [permission] : permission;
}

/** The roles that grant none of `permissions`. */
export function rolesWithout(permissions: readonly Permission[]): string[] {
  return ROLE_NAMES.filter((role) => !permissions.some((p) => permissionsOf([role]).has(p)));
}

/** The roles that grant at least one of `permissions`. */
export function rolesWith(permissions: readonly Permission[]): string[] {
  return ROLE_NAMES.filter((role) => permissions.some((p) => permissionsOf([role]).has(p)));
}

/**
 * The authentication cases every protected route shares (style: one helper for the auth cases
 * of every route): no token, a malformed header, an unknown token, and a caller with no role
 * or only roles that lack the permission, each with the documented status and problem type.
 * `permission` is the permission the 403 names (`a or b` when either suffices).
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

  const roleSets = rolesWithout.length === 0 ? [[]] : [[], rolesWithout];
  it(`${label}: 403 naming ${permission} for no role and for ${rolesWithout.join(', ') || '(none)'}`, async () => {
    // Every role reads something, so a caller without any role is made by taking the roles
    // away after the token was issued; the token then acts with the roles it has now.
    const t = getApp();
    const credential = await t.credentialFor(['viewer']);
    const token = (await t.services.tokens.clientCredentialsGrant(credential)).access_token;
    for (const roles of roleSets) {
      await t.services.access.updateUser(credential.ownerEmail, { roles }, { actor: { user: 'test-setup' } });
      const response = await t.call(token, request);
      expect(response.statusCode, roles.join(', ')).toBe(403);
      expect(response.json()).toMatchObject({
        type: 'urn:ledgerflow:problem:forbidden',
        missingPermission: permission,
      });
      expect(response.json().detail).toContain(permission);
    }
  });
}
