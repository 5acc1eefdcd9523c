import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { AppError } from '../../../lib/errors.js';
import type { CredentialView, UserView } from '../../../modules/auth/access-directory.js';
import {
  CREDENTIAL_EXPIRY_DAYS_DEFAULT,
  CREDENTIAL_EXPIRY_DAYS_MAX,
  CredentialCreateBody,
  CredentialName,
} from '../../../modules/auth/inputs.js';
import { lengthAttributes } from '../form-fields.js';
import { formInput } from '../form-input.js';
import { type Html, html } from '../html.js';
import { csrfField, emptyState, notice, page, pagination, table, when } from '../layout.js';
import { actorOf, contextOf, formOf, pagingOf, queryText, sendPage, signInIdOf } from '../request.js';

/** A credential just made, with the secret its one view shows. */
type CreatedCredential = CredentialView & { clientSecret: string };

/** Users offered in the owner list at most; past that the owner is typed (with suggestions). */
const OWNER_CHOICES_MAX = 500;

/**
 * A credential's description: its name, unless the name is its client id, which is what a
 * credential made without a name is called (the list shows the client id beside it already).
 */
function descriptionOf(credential: Pick<CredentialView, 'clientId' | 'name'>): string | undefined {
  return credential.name === '' || credential.name === credential.clientId ? undefined : credential.name;
}

/** The owner of a credential as people know them: their name, then their e-mail. */
function ownerHtml(email: string, owner: UserView | undefined): Html {
  return html`${owner === undefined ? '' : html`<span class="owner-name">${owner.displayName}</span> `}<span class="breakable muted">&lt;${email}&gt;</span>`;
}

/**
 * A credential as the list and its pages name it: by its owner and its description, which say
 * whose program it is and what for, rather than by its client id.
 */
function credentialNameHtml(credential: CredentialView, owner: UserView | undefined): Html {
  const description = descriptionOf(credential);
  return html`${ownerHtml(credential.ownerEmail, owner)} <span class="why">${description === undefined ? html`<span class="muted">no description</span>` : description}</span>`;
}

function stateOf(credential: CredentialView, nowMs: number): string {
  if (credential.revokedAt !== null) return 'revoked';
  return Date.parse(credential.expiresAt) <= nowMs ? 'expired' : 'active';
}

/** What the create form sent, checked with the same rules as the API before anything is made. */
async function requestedCredential(services: Pick<Services, 'access'>, form: URLSearchParams) {
  const input = formInput(CredentialCreateBody, form, 'The credential is not valid');
  const owner = await services.access.findUser(input.ownerEmail);
  if (owner === undefined)
    throw new AppError('not-found', `no user with e-mail ${input.ownerEmail}; create the user first`);
  return {
    owner,
    name: input.name ?? '',
    expiresInDays: input.expiresInDays ?? CREDENTIAL_EXPIRY_DAYS_DEFAULT,
  };
}

/** Who may open the credential pages: every page of this group. */
const permission = { adminPermission: 'credentials:manage' as const };

/** The owners of these credentials, by lower-case e-mail: those listed, and any found apart. */
async function ownersOf(
  access: Services['access'],
  credentials: readonly Pick<CredentialView, 'ownerEmail'>[],
  listed: readonly UserView[] = [],
): Promise<Map<string, UserView>> {
  const owners = new Map(listed.map((u) => [u.email.toLowerCase(), u]));
  const missing = [...new Set(credentials.map((c) => c.ownerEmail.toLowerCase()))].filter(
    (e) => !owners.has(e),
  );
  for (const user of await Promise.all(missing.map((email) => access.findUser(email)))) {
    if (user !== undefined) owners.set(user.email.toLowerCase(), user);
  }
  return owners;
}

/**
 * The developer area: API credentials. Create (owner, name, lifetime), confirm, the secret shown
 * once with a copy button; list without secrets; revoke after a confirmation.
 */
export function credentialPages(
  app: FastifyInstance,
  services: Pick<Services, 'access' | 'signIns' | 'ingestion'>,
): void {
  registerCredentialListPage(app, services);
  registerConfirmPage(app, services);
  registerCreateAction(app, services);
  registerCreatedPage(app, services);
  registerRevokePages(app, services);
}

/** `/admin/credentials`: the form of a new credential, and the credentials without their secrets. */
function registerCredentialListPage(
  app: FastifyInstance,
  services: Pick<Services, 'access' | 'ingestion'>,
): void {
  app.get('/admin/credentials', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const [{ rows, total }, users] = await Promise.all([
      services.access.listCredentials(pageNo, limit),
      services.access.listUsers(0, OWNER_CHOICES_MAX),
    ]);
    // The service's clock, which tests pin, says which credentials have expired.
    const nowMs = services.ingestion.now().getTime();
    const owners = await ownersOf(services.access, rows, users.rows);
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
  <label>Description (optional) <input name="name"${lengthAttributes(CredentialName, { trimmed: true })} placeholder="e.g. Nightly loan import"></label>
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
        [{ label: 'Credential', kind: 'words' }, 'Client id', 'Created', 'Expires', 'Last used', 'State', ''],
        rows.map((c) => {
          const state = stateOf(c, nowMs);
          return [
            credentialNameHtml(c, owners.get(c.ownerEmail.toLowerCase())),
            html`<code>${c.clientId}</code>`,
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
}

/** `POST /admin/credentials/confirm`: what the form asks for, checked, to confirm before it is made. */
function registerConfirmPage(app: FastifyInstance, services: Pick<Services, 'access' | 'ingestion'>): void {
  app.post('/admin/credentials/confirm', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const { owner, name, expiresInDays } = await requestedCredential(services, formOf(request));
    const expires = new Date(
      services.ingestion.now().getTime() + expiresInDays * 24 * 3600 * 1000,
    ).toISOString();
    const body = html`<section class="card">
<p>Create this credential?</p>
<dl class="facts">
  <dt>Owner</dt><dd>${owner.displayName} &lt;${owner.email}&gt; — acts with the roles ${owner.roles.join(', ') || 'none'}</dd>
  <dt>Description</dt><dd>${name === '' ? html`<span class="muted">none</span>` : name}</dd>
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
}

/** `POST /admin/credentials`: makes the confirmed credential, whose secret the next page shows. */
function registerCreateAction(app: FastifyInstance, services: Pick<Services, 'access' | 'signIns'>): void {
  // The secret is shown by the page the creation redirects to, once: a reload of that page
  // neither shows it again nor sends the creation again. It waits in the store, sealed under the
  // session's cookie value, so the redirected request may reach any instance. The credential is
  // made first and its view kept right after: should keeping it fail, the error page is shown
  // and the credential, listed with no one knowing its secret, is revoked and made again.
  app.post('/admin/credentials', { config: permission }, async (request, reply) => {
    const { owner, name, expiresInDays } = await requestedCredential(services, formOf(request));
    const { answer: created }: { answer: CreatedCredential } = await services.access.createCredential(
      {
        ownerEmail: owner.email,
        ...(name === '' ? {} : { name }),
        expiresInDays,
      },
      { actor: actorOf(request) },
    );
    request.log.info({ clientId: created.clientId, owner: created.ownerEmail }, 'credential created');
    await services.signIns.keepForOneView(signInIdOf(request), created.clientId, JSON.stringify(created));
    return reply.redirect(`/admin/credentials/${encodeURIComponent(created.clientId)}/created`, 303);
  });
}

/** `/admin/credentials/:clientId/created`: a new credential with its secret, shown this once. */
function registerCreatedPage(app: FastifyInstance, services: Pick<Services, 'access' | 'signIns'>): void {
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
      const owner = (await ownersOf(services.access, [created])).get(created.ownerEmail.toLowerCase());
      const description = descriptionOf(created);
      const body = html`${notice('warning', html`<strong>Copy the secret now.</strong> It is shown this once and cannot be shown again; if it is lost, revoke the credential and create a new one.`)}
<section class="card">
<dl class="facts">
  <dt>Client id</dt><dd><code id="client-id">${created.clientId}</code> <button type="button" data-copy="client-id">Copy</button></dd>
  <dt>Client secret</dt><dd><code id="client-secret" class="secret">${created.clientSecret}</code> <button type="button" data-copy="client-secret">Copy secret</button> <span class="copied" aria-live="polite"></span></dd>
  <dt>Owner</dt><dd>${ownerHtml(created.ownerEmail, owner)}</dd>
  <dt>Description</dt><dd>${description ?? html`<span class="muted">none</span>`}</dd>
  <dt>Expires</dt><dd>${when(created.expiresAt)}</dd>
</dl>
<p>Get a token with <code>POST /auth/token</code>, <code>grant_type=client_credentials</code>, and this client id and secret.</p>
<p><a href="/admin/credentials">Done — back to the credentials</a></p>
</section>`;
      return sendPage(reply, page(context, 'Credential created', body));
    },
  );
}

/** `/admin/credentials/:clientId/revoke`: the confirmation of a revocation, and the revocation. */
function registerRevokePages(app: FastifyInstance, services: Pick<Services, 'access'>): void {
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
  <p class="actions"><button type="submit" class="danger">Revoke</button>
  <a href="/admin/credentials">Cancel</a></p>
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
      await services.access.revokeCredential(clientId, { actor: actorOf(request) });
      request.log.info({ clientId }, 'credential revoked');
      return reply.redirect(`/admin/credentials?revoked=${encodeURIComponent(clientId)}`, 303);
    },
  );
}
