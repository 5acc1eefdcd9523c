import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { SubscriptionBody, SubscriptionDescriptionInput } from '../../../modules/events/inputs.js';
import type { DeliveryFilter, StoredDelivery } from '../../../modules/events/store.js';
import { EVENT_TYPES } from '../../../modules/events/types.js';
import type { SecretView, WebhookService } from '../../../modules/events/webhooks.js';
import { lengthAttributes } from '../form-fields.js';
import { formInput } from '../form-input.js';
import { type Html, html } from '../html.js';
import { csrfField, emptyState, notice, type PageContext, page, pagination, table, when } from '../layout.js';
import { AdminPageError, actorOf, contextOf, formOf, pagingOf, sendPage, signInIdOf } from '../request.js';

const read = { adminPermission: 'webhooks:read' as const };
const manage = { adminPermission: 'webhooks:manage' as const };
/** The one-time view of a secret just created or rotated. */
const SECRET_VIEW = 'webhook-secret';

function idOf(text: string | undefined, what: string): number {
  if (text === undefined || !/^[1-9][0-9]{0,14}$/.test(text))
    throw new AdminPageError(
      404,
      `No such ${what}`,
      `There is no ${what} ${text ?? ''}.`,
      'Pick one from the list.',
    );
  return Number(text);
}

function paramId(request: FastifyRequest, what: string): number {
  return idOf((request.params as { id?: string }).id, what);
}

/** A button that posts to `action` with the CSRF token. */
function postButton(context: PageContext, action: string, label: string, danger = false): Html {
  return html`<form method="post" action="${action}" class="inline">${csrfField(context)}<button type="submit"${danger ? html` class="danger"` : ''}>${label}</button></form>`;
}

/** Deliveries with their last answer, and a redeliver button for those allowed to. */
function deliveriesTable(context: PageContext, rows: readonly StoredDelivery[]): Html {
  const canManage = context.principal.permissions.has('webhooks:manage');
  if (rows.length === 0) return emptyState('No delivery yet.');
  return table(
    'deliveries',
    [
      { label: 'Id', kind: 'num' },
      'Subscription',
      'Event',
      'Status',
      { label: 'Attempts', kind: 'num' },
      'Last answer',
      'Last attempt',
      'Next attempt',
      '',
    ],
    rows.map((d) => [
      d.id,
      html`<a href="/admin/webhooks/${d.subscriptionId}">${d.subscriptionId}</a>`,
      html`${d.eventType}<br><code class="muted">${d.eventId}</code>`,
      d.status,
      d.attempts,
      d.lastStatusCode === null && d.lastError === null
        ? html`<span class="muted">—</span>`
        : html`${d.lastStatusCode === null ? '' : html`<strong>${d.lastStatusCode}</strong> `}${d.lastError ?? ''}${d.lastResponse === null || d.lastResponse === '' ? '' : html`<br><code>${d.lastResponse.slice(0, 200)}</code>`}`,
      when(d.lastAttemptAt),
      when(d.nextAttemptAt),
      canManage ? postButton(context, `/admin/webhooks/deliveries/${d.id}/redeliver`, 'Redeliver') : '',
    ]),
  );
}

function secretCard(secret: SecretView, title: string): Html {
  return html`${notice('warning', html`<strong>Copy the signing secret now.</strong> Receivers verify every delivery with it (docs: Verifying a webhook). It is shown here once; the API's secret details show it again to those allowed to manage webhooks.`)}
<section class="card">
<h2>${title}</h2>
<dl class="facts">
  <dt>Secret</dt><dd><code id="webhook-secret" class="secret">${secret.secret}</code> <button type="button" data-copy="webhook-secret">Copy secret</button> <span class="copied" aria-live="polite"></span></dd>
  <dt>Created</dt><dd>${when(secret.createdAt)}</dd>
</dl>
<p><a href="/admin/webhooks">Done — back to the webhooks</a></p>
</section>`;
}

/**
 * Webhooks in the administration interface: the subscriptions with a form to add one, the
 * signing secret (created or rotated here, shown once on the page the action leads to), a
 * subscription with its deliveries and their last answers, pause, resume, delete, and redelivery.
 */
export function webhookPages(app: FastifyInstance, services: Pick<Services, 'webhooks' | 'signIns'>): void {
  const { webhooks } = services;
  registerWebhooksPage(app, webhooks);
  registerCreateSubscriptionAction(app, webhooks);
  registerSecretPages(app, services);
  registerDeliveriesPage(app, webhooks);
  registerSubscriptionPage(app, webhooks);
  registerSubscriptionActions(app, webhooks);
}

/** `/admin/webhooks`: the signing secret, the subscriptions and the form of a new one. */
function registerWebhooksPage(app: FastifyInstance, webhooks: WebhookService): void {
  app.get('/admin/webhooks', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const { rows, total } = await webhooks.listSubscriptions(pageNo, limit);
    const canManage = context.principal.permissions.has('webhooks:manage');
    const secrets = canManage ? await webhooks.secretDetails().catch(() => []) : [];
    const list =
      rows.length === 0
        ? emptyState('No subscription yet.')
        : html`${table(
            'subscriptions',
            [{ label: 'Id', kind: 'num' }, 'URL', 'Event types', 'Status', 'Flagged', 'Created'],
            rows.map((s) => [
              s.id,
              html`<a href="/admin/webhooks/${s.id}">${s.url}</a>`,
              s.eventTypes.join(', '),
              s.status,
              s.flagged ? html`<strong>yes</strong> since ${when(s.flaggedAt)}` : 'no',
              when(s.createdAt),
            ]),
          )}${pagination('/admin/webhooks', {}, pageNo, limit, total)}`;
    const secretSection = !canManage
      ? ''
      : secrets.length === 0
        ? html`<section class="card"><h2>Signing secret</h2><p>There is no signing secret yet: create it before the first subscription.</p>${postButton(context, '/admin/webhooks/secret', 'Create the signing secret')}</section>`
        : html`<section class="card"><h2>Signing secret</h2><p>Created ${when(secrets[0]?.createdAt)}${secrets.length > 1 ? html`; the one it replaced signs beside it until ${when(secrets[1]?.expiresAt)}` : ''}. Rotating makes a new one; the current one goes on signing beside it for a day.</p>${postButton(context, '/admin/webhooks/secret/rotate', 'Rotate the signing secret…')}</section>`;
    const form = !canManage
      ? ''
      : html`<section class="card"><h2>New subscription</h2>
<form method="post" action="/admin/webhooks">
  ${csrfField(context)}
  <label>URL <input type="url" name="url" required placeholder="https://hooks.example.com/ledgerflow"></label>
  <fieldset><legend>Event types</legend>${EVENT_TYPES.map((type) => html`<label><input type="checkbox" name="eventTypes" value="${type}"> ${type}</label> `)}</fieldset>
  <label>Description <input type="text" name="description"${lengthAttributes(SubscriptionDescriptionInput, { trimmed: true })}></label>
  <button type="submit">Subscribe</button>
</form></section>`;
    const body = html`${secretSection}<h2>Subscriptions</h2>${list}<p><a href="/admin/webhooks/deliveries">Every delivery</a></p>${form}`;
    return sendPage(reply, page(context, 'Webhooks', body));
  });
}

/** `POST /admin/webhooks`: subscribes a URL to the event types ticked. */
function registerCreateSubscriptionAction(app: FastifyInstance, webhooks: WebhookService): void {
  app.post('/admin/webhooks', { config: manage }, async (request, reply) => {
    const input = formInput(SubscriptionBody, formOf(request), 'The subscription is not valid');
    const { answer: created } = await webhooks.createSubscription(input, { actor: actorOf(request) });
    return reply.redirect(`/admin/webhooks/${created.id}`, 303);
  });
}

/**
 * `POST /admin/webhooks/secret` and `…/secret/rotate`: the signing secret made or rotated, then
 * shown by `/admin/webhooks/secret/shown`, once.
 */
function registerSecretPages(app: FastifyInstance, services: Pick<Services, 'webhooks' | 'signIns'>): void {
  const { webhooks } = services;
  for (const [path, rotate] of [
    ['/admin/webhooks/secret', false],
    ['/admin/webhooks/secret/rotate', true],
  ] as const) {
    app.post(path, { config: manage }, async (request, reply) => {
      const options = { actor: actorOf(request) };
      const { answer: secret } = rotate
        ? await webhooks.rotateSecret(options, 86_400)
        : await webhooks.createSecret(options);
      // Shown by the page the action leads to, once, whichever instance serves it.
      await services.signIns.keepForOneView(signInIdOf(request), SECRET_VIEW, JSON.stringify(secret));
      return reply.redirect('/admin/webhooks/secret/shown', 303);
    });
  }

  app.get('/admin/webhooks/secret/shown', { config: manage }, async (request, reply) => {
    const context = contextOf(request);
    const kept = await services.signIns.takeOneView(signInIdOf(request), SECRET_VIEW);
    if (kept === undefined)
      return sendPage(
        reply,
        page(
          context,
          'The secret was shown once',
          html`${notice('info', 'The signing secret was shown once, when it was made. Reloading this page makes no other secret.')}<p><a href="/admin/webhooks">Back to the webhooks</a></p>`,
        ),
        410,
      );
    // Written by the action above and opened with this session's key: nothing else made it.
    return sendPage(
      reply,
      page(context, 'Signing secret', secretCard(JSON.parse(kept) as SecretView, 'The signing secret')),
    );
  });
}

/** `/admin/webhooks/deliveries`: the deliveries of every subscription. */
function registerDeliveriesPage(app: FastifyInstance, webhooks: WebhookService): void {
  app.get('/admin/webhooks/deliveries', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const { rows, total } = await webhooks.listDeliveries({}, pageNo, limit);
    const body = html`${deliveriesTable(context, rows)}${pagination('/admin/webhooks/deliveries', {}, pageNo, limit, total)}<p><a href="/admin/webhooks">The subscriptions</a></p>`;
    return sendPage(reply, page(context, 'Webhook deliveries', body));
  });
}

/** `/admin/webhooks/:id`: one subscription with its actions and its deliveries. */
function registerSubscriptionPage(app: FastifyInstance, webhooks: WebhookService): void {
  app.get('/admin/webhooks/:id', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const id = paramId(request, 'subscription');
    const subscription = await webhooks.getSubscription(id);
    const { page: pageNo, limit } = pagingOf(request);
    const filter: DeliveryFilter = { subscriptionId: id };
    const { rows, total } = await webhooks.listDeliveries(filter, pageNo, limit);
    const canManage = context.principal.permissions.has('webhooks:manage');
    const actions = !canManage
      ? ''
      : html`<p>${subscription.status === 'active' ? postButton(context, `/admin/webhooks/${id}/pause`, 'Pause') : postButton(context, `/admin/webhooks/${id}/resume`, 'Resume')} ${postButton(context, `/admin/webhooks/${id}/delete`, 'Delete with its deliveries', true)}</p>`;
    const body = html`<section class="card"><dl class="facts">
  <dt>URL</dt><dd><code>${subscription.url}</code></dd>
  <dt>Event types</dt><dd>${subscription.eventTypes.join(', ')}</dd>
  <dt>Status</dt><dd>${subscription.status}</dd>
  <dt>Flagged</dt><dd>${subscription.flagged ? html`<strong>yes</strong>: ${subscription.flagReason ?? ''}` : 'no'}</dd>
  <dt>Description</dt><dd>${subscription.description ?? '—'}</dd>
  <dt>Created</dt><dd>${when(subscription.createdAt)} by ${subscription.createdBy}</dd>
</dl>${actions}</section>
<h2>Deliveries</h2>${deliveriesTable(context, rows)}${pagination(`/admin/webhooks/${id}`, {}, pageNo, limit, total)}
<p><a href="/admin/webhooks">All subscriptions</a></p>`;
    return sendPage(reply, page(context, `Webhook ${id}`, body));
  });
}

/** The actions of a subscription's page: pause, resume, delete, and the redelivery of a delivery. */
function registerSubscriptionActions(app: FastifyInstance, webhooks: WebhookService): void {
  for (const [action, status] of [
    ['pause', 'paused'],
    ['resume', 'active'],
  ] as const) {
    app.post(`/admin/webhooks/:id/${action}`, { config: manage }, async (request, reply) => {
      const id = paramId(request, 'subscription');
      await webhooks.setStatus(id, status, { actor: actorOf(request) });
      return reply.redirect(`/admin/webhooks/${id}`, 303);
    });
  }

  app.post('/admin/webhooks/:id/delete', { config: manage }, async (request, reply) => {
    await webhooks.deleteSubscription(paramId(request, 'subscription'), { actor: actorOf(request) });
    return reply.redirect('/admin/webhooks', 303);
  });

  app.post('/admin/webhooks/deliveries/:id/redeliver', { config: manage }, async (request, reply) => {
    const { answer: delivery } = await webhooks.redeliver(paramId(request, 'delivery'), {
      actor: actorOf(request),
    });
    return reply.redirect(`/admin/webhooks/${delivery.subscriptionId}`, 303);
  });
}
