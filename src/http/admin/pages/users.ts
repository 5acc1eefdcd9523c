import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import {
  DisplayName,
  PASSWORD_LENGTH_MAX_CHARS,
  PASSWORD_LENGTH_MIN_CHARS,
  Password,
  UserCreateBody,
  UserUpdateBody,
} from '../../../modules/auth/inputs.js';
import { ROLE_NAMES, ROLES } from '../../../modules/auth/permissions.js';
import { lengthAttributes } from '../form-fields.js';
import { formInput } from '../form-input.js';
import { html } from '../html.js';
import { csrfField, emptyState, notice, type PageContext, page, pagination, table, when } from '../layout.js';
import { actorOf, contextOf, formOf, pagingOf, queryText, sendPage, signInIdOf } from '../request.js';

function roleBoxes(selected: readonly string[]) {
  return html`<fieldset class="roles"><legend>Roles</legend>${ROLE_NAMES.map(
    (role) =>
      html`<label title="${ROLES[role].join(', ')}"><input type="checkbox" name="roles" value="${role}"${selected.includes(role) ? html` checked` : ''}> ${role}</label>`,
  )}</fieldset>`;
}

function createForm(context: PageContext) {
  return html`<section class="card" aria-labelledby="new-user">
<h2 id="new-user">Create a user</h2>
<form method="post" action="/admin/users" class="inline-form">
  ${csrfField(context)}
  <label>E-mail <input type="email" name="email" required></label>
  <label>Display name <input name="displayName"${lengthAttributes(DisplayName, { trimmed: true })}></label>
  <label>Password <input type="password" name="password" autocomplete="new-password"${lengthAttributes(Password)}> <small>Leave empty for a user that only owns API credentials.</small></label>
  ${roleBoxes([])}
  <button type="submit">Create user</button>
</form>
</section>`;
}

function passwordForm(context: PageContext, email: string) {
  return html`<section class="card" aria-labelledby="set-password">
<h2 id="set-password">Password</h2>
<form method="post" action="/admin/users/${encodeURIComponent(email)}/password" class="inline-form">
  ${csrfField(context)}
  <label>New password <input type="password" name="password" autocomplete="new-password"${lengthAttributes(Password)}> <small>${PASSWORD_LENGTH_MIN_CHARS} to ${PASSWORD_LENGTH_MAX_CHARS} characters. Leave empty to generate one, shown once.</small></label>
  <button type="submit">Set the password</button>
</form>
<p class="muted">Signs the user out of the interface everywhere; the user’s API credentials keep working.</p>
</section>`;
}

/** Who may open the user pages: every page of this group. */
const permission = { adminPermission: 'users:manage' as const };

/** Users and roles: list, create, change roles, disable and enable, set or generate a password. */
export function userPages(app: FastifyInstance, services: Pick<Services, 'access' | 'signIns'>): void {
  registerUserListPage(app, services);
  registerCreateUserAction(app, services);
  registerUserPages(app, services);
  registerPasswordPages(app, services);
}

/** `/admin/users`: the form of a new user, and the users. */
function registerUserListPage(app: FastifyInstance, services: Pick<Services, 'access'>): void {
  app.get('/admin/users', { config: permission }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const { rows, total } = await services.access.listUsers(pageNo, limit);
    const saved = queryText(request, 'saved');
    const body = html`${saved === undefined ? '' : notice('info', html`Saved <strong>${saved}</strong>.`)}
${createForm(context)}
<h2>Users</h2>
${
  rows.length === 0
    ? emptyState('No user yet. Create one above.')
    : html`${table(
        'users',
        ['E-mail', 'Name', 'Roles', 'State', 'Created', ''],
        rows.map((u) => [
          u.email,
          u.displayName,
          u.roles.join(', ') || html`<span class="muted">none</span>`,
          html`<span class="badge ${u.disabled ? 'revoked' : 'active'}">${u.disabled ? 'disabled' : 'enabled'}</span>`,
          when(u.createdAt),
          html`<a href="/admin/users/${encodeURIComponent(u.email)}">Edit…</a>`,
        ]),
      )}${pagination('/admin/users', {}, pageNo, limit, total)}`
}`;
    return sendPage(reply, page(context, 'Users and roles', body));
  });
}

/** `POST /admin/users`: creates a user with the roles ticked and, if given, a password. */
function registerCreateUserAction(app: FastifyInstance, services: Pick<Services, 'access'>): void {
  app.post('/admin/users', { config: permission }, async (request, reply) => {
    const input = formInput(UserCreateBody, formOf(request), 'The user is not valid');
    const { answer: user } = await services.access.createUser(input, { actor: actorOf(request) });
    return reply.redirect(`/admin/users?saved=${encodeURIComponent(user.email)}`, 303);
  });
}

/** `/admin/users/:email`: one user's form (name, roles, disabled, password), and its changes saved. */
function registerUserPages(app: FastifyInstance, services: Pick<Services, 'access'>): void {
  app.get<{ Params: { email: string } }>(
    '/admin/users/:email',
    { config: permission },
    async (request, reply) => {
      const context = contextOf(request);
      const user = await services.access.findUser(request.params.email);
      if (user === undefined) {
        return sendPage(
          reply,
          page(
            context,
            'No such user',
            emptyState(html`No user has this e-mail. <a href="/admin/users">Back to the users</a>`),
          ),
          404,
        );
      }
      const body = html`<section class="card">
<form method="post" action="/admin/users/${encodeURIComponent(user.email)}">
  ${csrfField(context)}
  <dl class="facts"><dt>E-mail</dt><dd>${user.email}</dd><dt>Created</dt><dd>${when(user.createdAt)}</dd></dl>
  <label>Display name <input name="displayName" value="${user.displayName}" required${lengthAttributes(DisplayName, { trimmed: true })}></label>
  ${roleBoxes(user.roles)}
  <label><input type="checkbox" name="disabled" value="true"${user.disabled ? html` checked` : ''}> Disabled (signs the user out and stops the user’s API tokens at the next request)</label>
  <button type="submit">Save</button>
  <a href="/admin/users">Cancel</a>
</form>
</section>
${passwordForm(context, user.email)}`;
      return sendPage(reply, page(context, `Edit ${user.email}`, body));
    },
  );

  app.post<{ Params: { email: string } }>(
    '/admin/users/:email',
    { config: permission },
    async (request, reply) => {
      const input = formInput(UserUpdateBody, formOf(request), 'The change is not valid');
      // The form shows every member: an unticked box (which sends nothing) enables the user.
      const { answer: user } = await services.access.updateUser(
        request.params.email,
        { ...input, disabled: input.disabled ?? false },
        { actor: actorOf(request) },
      );
      return reply.redirect(`/admin/users?saved=${encodeURIComponent(user.email)}`, 303);
    },
  );
}

/**
 * `POST /admin/users/:email/password`: a password set, or generated and shown once by
 * `…/password/generated`.
 */
function registerPasswordPages(app: FastifyInstance, services: Pick<Services, 'access' | 'signIns'>): void {
  app.post<{ Params: { email: string } }>(
    '/admin/users/:email/password',
    { config: permission },
    async (request, reply) => {
      const email = request.params.email.toLowerCase();
      const typed = formOf(request).get('password') ?? '';
      if (typed !== '') {
        await services.access.setPassword(email, typed, actorOf(request));
        request.log.info({ email }, 'password set by an administrator');
        return reply.redirect(`/admin/users?saved=${encodeURIComponent(email)}`, 303);
      }
      // A generated password is shown by the page this redirects to, once (Post/Redirect/Get,
      // as a new credential's secret): a reload neither shows it again nor makes another.
      const generated = await services.access.resetPassword(email, actorOf(request));
      request.log.info({ email }, 'password generated by an administrator');
      await services.signIns.keepForOneView(signInIdOf(request), `password:${email}`, generated);
      return reply.redirect(`/admin/users/${encodeURIComponent(email)}/password/generated`, 303);
    },
  );

  app.get<{ Params: { email: string } }>(
    '/admin/users/:email/password/generated',
    { config: permission },
    async (request, reply) => {
      const context = contextOf(request);
      const email = request.params.email.toLowerCase();
      const generated = await services.signIns.takeOneView(signInIdOf(request), `password:${email}`);
      if (generated === undefined) {
        const body = html`${notice('info', html`The generated password of ${email} was shown once and cannot be shown again. Reloading this page does not make another.`)}
<p>If it was not copied, set or generate a new one on <a href="/admin/users/${encodeURIComponent(email)}">the user’s page</a>.</p>`;
        return sendPage(reply, page(context, 'The password was shown once', body), 410);
      }
      const body = html`${notice('warning', html`<strong>Copy the password now.</strong> It is shown this once and cannot be shown again; if it is lost, set a new one.`)}
<section class="card">
<dl class="facts">
  <dt>E-mail</dt><dd>${email}</dd>
  <dt>New password</dt><dd><code id="new-password" class="secret">${generated}</code> <button type="button" data-copy="new-password">Copy password</button> <span class="copied" aria-live="polite"></span></dd>
</dl>
<p>The user’s sign-in sessions were ended. Give the password to the user by a safe channel.</p>
<p><a href="/admin/users">Done — back to the users</a></p>
</section>`;
      return sendPage(reply, page(context, 'Password generated', body));
    },
  );
}
