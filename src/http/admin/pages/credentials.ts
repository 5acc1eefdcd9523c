import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { AppError } from '../../../lib/errors.js';
import { type CredentialView, checkExpiryDays } from '../../../modules/auth/access-directory.js';
import {
  CREDENTIAL_EXPIRY_DAYS_DEFAULT,
  CREDENTIAL_EXPIRY_DAYS_MAX,
  CREDENTIAL_NAME_LENGTH_MAX,
  checkCredentialName,
} from '../../../modules/auth/inputs.js';
import { html } from '../html.js';
import { csrfField, emptyState, notice, page, pagination, table, when } from '../layout.js';
import { actorOf, contextOf, formOf, pagingOf, queryText, sendPage, signInIdOf } from '../request.js';

/** A credential just made, with the secret its one view shows. */
type CreatedCredential = CredentialView & { clientSecret: string };

/** Users offered in the owner list at most; past that the owner is typed (with suggestions). */
const OWNER_CHOICES_MAX = 500;

function stateOf(credential: CredentialView, nowMs: number): string {
  if (credential.revokedAt !== null) return 'revoked';
  return Date.parse(credential.expiresAt) <= nowMs ? 'expired' : 'active';
}

/** What the create form sent, checked with the same rules as the API before anything is made. */
async function requestedCredential(services: Pick<Services, 'access'>, form: URLSearchParams) {
  const ownerEmail = (form.get('ownerEmail') ?? '').trim();
  const name = (form.get('name') ?? '').trim();
  const daysText = (form.get('expiresInDays') ?? '').trim();
  const expiresInDays = daysText === '' ? CREDENTIAL_EXPIRY_DAYS_DEFAULT : Number(daysText);
  if (ownerEmail === '') {
    throw new AppError('validation-failed', 'choose the owner of the credential', {
      errors: [{ path: '/ownerEmail', message: 'is required' }],
    });
  }
  const owner = await services.access.findUser(ownerEmail);
  if (owner === undefined)
    throw new AppError('not-found', `no user with e-mail ${ownerEmail}; create the user first`);
  checkCredentialName(name);
  checkExpiryDays(expiresInDays);
  return { owner, name, expiresInDays };
}

/**
 * The developer area: API credentials. Create (owner, name, lifetime), confirm, the secret shown
 * once with a copy button; list without secrets; revoke after a confirmation.
 */
export function credentialPages(app: FastifyInstance, services: Pick<Services, 'access' | 'signIns'>): void {
  const permission = { adminPermission: 'credentials:manage' as const };

  app.get('/admin/credentials', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const [{ rows, total }, users] = await Promise.all([
      services.access.listCredentials(pageNo, limit),
      services.access.listUsers(0, OWNER_CHOICES_MAX),
    ]);
    const nowMs = Date.now();
    const revoked = queryText(request, 'revoked');
    const ownerField =
      users.total <= OWNER_CHOICES_MAX
        ? html`<select name="ownerEmail" required><option value="">Choose a user…</option>${users.rows
            .filter((u) => !u.disabled)
            .map(
              (u) =>
                html`<option value="${u.email}">${u.displayName} &lt;${u.email}&gt; (${u.roles.join(', ') || 'no role'})</option>`,
            )}</select>`
        : html`<input type="email" name="ownerEmail" required list="owners"><datalist id="owners">${users.rows.map((u) => html`<option value="${u.email}">`)}</datalist>`;
    const body = html`${revoked === undefined ? '' : notice('info', html`Credential <code>${revoked}</code> is revoked; its tokens are refused from the next request on.`)}
<section aria-labelledby="create-heading" class="card">
<h2 id="create-heading">Create a credential</h2>
<p>A credential lets a program get API tokens. It acts with its owner’s roles.</p>
<form method="post" action="/admin/credentials/confirm" class="inline-form">
  ${csrfField(context)}
  <label>Owner ${ownerField}</label>
  <label>Name <input name="name" maxlength="${CREDENTIAL_NAME_LENGTH_MAX}" placeholder="e.g. nightly-import"></label>
  <label>Lifetime (days) <input type="number" name="expiresInDays" min="1" max="${CREDENTIAL_EXPIRY_DAYS_MAX}" value="${CREDENTIAL_EXPIRY_DAYS_DEFAULT}" required></label>
  <button type="submit">Continue</button>
</form>
</section>
<h2>Credentials</h2>
${
  rows.length === 0
    ? emptyState('No credential yet. Create one above to give a program API access.')
    : html`${table(
        'credentials',
        ['Name', 'Client id', 'Owner', 'Created', 'Expires', 'Last used', 'State', ''],
        rows.map((c) => {
          const state = stateOf(c, nowMs);
          return [
            c.name,
            html`<code>${c.clientId}</code>`,
            c.ownerEmail,
            when(c.createdAt),
            when(c.expiresAt),
            c.lastUsedAt === null ? html`<span class="muted">never</span>` : when(c.lastUsedAt),
            html`<span class="badge ${state}">${state}</span>`,
            state === 'revoked'
              ? ''
              : html`<a class="danger-link" href="/admin/credentials/${encodeURIComponent(c.clientId)}/revoke">Revoke…</a>`,
          ];
        }),
      )}${pagination('/admin/credentials', {}, pageNo, limit, total)}`
}`;
    return sendPage(reply, page(context, 'API credentials', body));
  });

  app.post('/admin/credentials/confirm', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const { owner, name, expiresInDays } = await requestedCredential(services, formOf(request));
    const expires = new Date(Date.now() + expiresInDays * 24 * 3600 * 1000).toISOString();
    const body = html`<section class="card">
<p>Create this credential?</p>
<dl class="facts">
  <dt>Owner</dt><dd>${owner.displayName} &lt;${owner.email}&gt; — acts with the roles ${owner.roles.join(', ') || 'none'}</dd>
  <dt>Name</dt><dd>${name === '' ? html`<span class="muted">(the client id)</span>` : name}</dd>
  <dt>Lifetime</dt><dd>${expiresInDays} days (until about ${when(expires)})</dd>
</dl>
<form method="post" action="/admin/credentials">
  ${csrfField(context)}
  <input type="hidden" name="ownerEmail" value="${owner.email}">
  <input type="hidden" name="name" value="${name}">
  <input type="hidden" name="expiresInDays" value="${expiresInDays}">
  <button type="submit">Confirm and create</button>
  <a href="/admin/credentials">Cancel</a>
</form>
</section>`;
    return sendPage(reply, page(context, 'Confirm the new credential', body));
  });

  // The secret is shown by the page the creation redirects to, once: a reload of that page
  // neither shows it again nor sends the creation again. It waits in the store, sealed under the
  // session's cookie value, so the redirected request may reach any instance. The credential is
  // made first and its view kept right after: should keeping it fail, the error page is shown
  // and the credential, listed with no one knowing its secret, is revoked and made again.
  app.post('/admin/credentials', { config: permission }, async (request, reply) => {
    const { owner, name, expiresInDays } = await requestedCredential(services, formOf(request));
    const created: CreatedCredential = await services.access.createCredential(
      {
        ownerEmail: owner.email,
        ...(name === '' ? {} : { name }),
        expiresInDays,
      },
      actorOf(request),
    );
    request.log.info({ clientId: created.clientId, owner: created.ownerEmail }, 'credential created');
    await services.signIns.keepForOneView(signInIdOf(request), created.clientId, JSON.stringify(created));
    return reply.redirect(`/admin/credentials/${encodeURIComponent(created.clientId)}/created`, 303);
  });

  app.get<{ Params: { clientId: string } }>(
    '/admin/credentials/:clientId/created',
    { config: permission },
    async (request, reply) => {
      const context = contextOf(request);
      const { clientId } = request.params;
      const kept = await services.signIns.takeOneView(signInIdOf(request), clientId);
      if (kept === undefined) {
        const body = html`${notice('info', html`The secret of the credential <code>${clientId}</code> was shown once, when it was created, and cannot be shown again. Reloading this page does not create another credential.`)}
<p>If the secret was not copied, revoke the credential and create a new one.</p>
<p><a href="/admin/credentials">Back to the credentials</a></p>`;
        return sendPage(reply, page(context, 'The secret was shown once', body), 410);
      }
      // Written by the creation above and opened with this session's key: nothing else made it.
      const created = JSON.parse(kept) as CreatedCredential;
      const body = html`${notice('warning', html`<strong>Copy the secret now.</strong> It is shown this once and cannot be shown again; if it is lost, revoke the credential and create a new one.`)}
<section class="card">
<dl class="facts">
  <dt>Client id</dt><dd><code id="client-id">${created.clientId}</code> <button type="button" data-copy="client-id">Copy</button></dd>
  <dt>Client secret</dt><dd><code id="client-secret" class="secret">${created.clientSecret}</code> <button type="button" data-copy="client-secret">Copy secret</button> <span class="copied" aria-live="polite"></span></dd>
  <dt>Owner</dt><dd>${created.ownerEmail}</dd>
  <dt>Name</dt><dd>${created.name}</dd>
  <dt>Expires</dt><dd>${when(created.expiresAt)}</dd>
</dl>
<p>Get a token with <code>POST /auth/token</code>, <code>grant_type=client_credentials</code>, and this client id and secret.</p>
<p><a href="/admin/credentials">Done — back to the credentials</a></p>
</section>`;
      return sendPage(reply, page(context, 'Credential created', body));
    },
  );

  app.get<{ Params: { clientId: string } }>(
    '/admin/credentials/:clientId/revoke',
    { config: permission },
    async (request, reply) => {
      const context = contextOf(request);
      const { clientId } = request.params;
      const body = html`<section class="card">
<p>Revoke the credential <code>${clientId}</code>? Programs using it lose access at their next request. This cannot be undone.</p>
<form method="post" action="/admin/credentials/${encodeURIComponent(clientId)}/revoke">
  ${csrfField(context)}
  <button type="submit" class="danger">Revoke</button>
  <a href="/admin/credentials">Cancel</a>
</form>
</section>`;
      return sendPage(reply, page(context, 'Revoke a credential', body));
    },
  );

  app.post<{ Params: { clientId: string } }>(
    '/admin/credentials/:clientId/revoke',
    { config: permission },
    async (request, reply) => {
      const { clientId } = request.params;
      await services.access.revokeCredential(clientId, actorOf(request));
      request.log.info({ clientId }, 'credential revoked');
      return reply.redirect(`/admin/credentials?revoked=${encodeURIComponent(clientId)}`, 303);
    },
  );
}
