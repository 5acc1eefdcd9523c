/**
 * The webhook changes an operator makes, as the change runner runs them (`modules/changes/`):
 * each states what it writes in the webhook tables, the refusals it can answer and its audit
 * entry's details; the runner owns the transaction, the `Idempotency-Key`, the dry run and the
 * audit entry. A signing secret's answer is kept for repeats sealed, never in clear.
 */
import { AppError } from '../../lib/errors.js';
import type { Change as RunnerChange } from '../changes/runner.js';
import { REDELIVER_EVENTS_MAX } from './inputs.js';
import { newSigningSecret, openSecret, sealSecret } from './signing.js';
import type { EventType, StoredDelivery, StoredSubscription, WebhookTables } from './store.js';

/** The tables the webhook changes touch. */
export interface WebhookChangeTables {
  webhooks: WebhookTables;
}

/** A webhook change. */
type Change<Input, Answer> = RunnerChange<Input, Answer, WebhookChangeTables>;

/** A subscription as the API gives it. */
export interface SubscriptionView {
  id: number;
  url: string;
  eventTypes: EventType[];
  description: string | null;
  status: StoredSubscription['status'];
  /** True after a delivery failed for good, until the next one succeeds. */
  flagged: boolean;
  flaggedAt: string | null;
  flagReason: string | null;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
}

/** A signing secret as its details give it: in clear. */
export interface SecretView {
  id: number;
  secret: string;
  createdAt: string;
  /** Null for the current secret; the end of the overlap for one a rotation replaced. */
  expiresAt: string | null;
}

/** A new subscription as asked for. */
export interface SubscriptionInput {
  url: string;
  eventTypes: EventType[];
  description?: string | undefined;
}

/** A change of a subscription as asked for; absent members stay as they are. */
export interface SubscriptionUpdate {
  url?: string | undefined;
  eventTypes?: EventType[] | undefined;
  description?: string | null | undefined;
}

export function viewOf(subscription: StoredSubscription): SubscriptionView {
  return { ...subscription, flagged: subscription.flaggedAt !== null };
}

function noSubscription(id: number): AppError {
  return new AppError('not-found', `no webhook subscription ${id}`);
}

/** What the changes need of the service. */
export interface WebhookChangeNeeds {
  /** The URL as stored, or a `validation-failed` naming `url` and the address rule it breaks. */
  checkedUrl(url: string): string;
  /** Called once deliveries may have become due: the deliverer's wake. */
  wake(): void;
  /** Called once the signing secrets changed: the signer reads them again. */
  secretsChanged(): void;
}

/** The webhook changes, bound to what they need. */
export function webhookChanges(needs: WebhookChangeNeeds) {
  return {
    createSubscription: createSubscription(needs),
    updateSubscription: updateSubscription(needs),
    pauseSubscription: setStatus('paused', needs),
    resumeSubscription: setStatus('active', needs),
    deleteSubscription,
    createSecret: (sealingKey: string) => addSecret('webhooks.secret-create', sealingKey, needs),
    rotateSecret: (sealingKey: string) => addSecret('webhooks.secret-rotate', sealingKey, needs),
    redeliver: redeliver(needs),
    redeliverSince: redeliverSince(needs),
  };
}

function createSubscription(needs: WebhookChangeNeeds): Change<SubscriptionInput, SubscriptionView> {
  return {
    action: 'webhooks.subscription-create',
    async apply(tx, input, { at, actor }) {
      const url = needs.checkedUrl(input.url);
      if (!(await tx.webhooks.hasSecret()))
        throw new AppError(
          'conflict',
          'there is no signing secret yet: create one (POST /api/v1/event-deliveries/secrets) before the first subscription',
        );
      const subscription = await tx.webhooks.createSubscription({
        url,
        eventTypes: input.eventTypes,
        description: input.description ?? null,
        status: 'active',
        createdAt: at,
        createdBy: actor.user,
      });
      return {
        answer: viewOf(subscription),
        audit: { details: { url, eventTypes: input.eventTypes, subscriptionId: subscription.id } },
      };
    },
  };
}

function updateSubscription(
  needs: WebhookChangeNeeds,
): Change<SubscriptionUpdate & { id: number }, SubscriptionView> {
  return {
    action: 'webhooks.subscription-update',
    async apply(tx, { id, ...change }, { at }) {
      const url = change.url === undefined ? undefined : needs.checkedUrl(change.url);
      const eventTypes = change.eventTypes === undefined ? {} : { eventTypes: change.eventTypes };
      const stored = await tx.webhooks.updateSubscription(
        id,
        {
          ...(url === undefined ? {} : { url }),
          ...eventTypes,
          ...(change.description === undefined ? {} : { description: change.description }),
        },
        at,
      );
      if (stored === undefined) throw noSubscription(id);
      return {
        answer: viewOf(stored),
        audit: { details: { subscriptionId: id, ...(url === undefined ? {} : { url }), ...eventTypes } },
      };
    },
  };
}

function setStatus(
  status: 'active' | 'paused',
  needs: WebhookChangeNeeds,
): Change<{ id: number }, SubscriptionView> {
  return {
    action: status === 'paused' ? 'webhooks.subscription-pause' : 'webhooks.subscription-resume',
    async apply(tx, { id }, { at }) {
      const stored = await tx.webhooks.updateSubscription(id, { status }, at);
      if (stored === undefined) throw noSubscription(id);
      return {
        answer: viewOf(stored),
        audit: { details: { subscriptionId: id } },
        ...(status === 'active' ? { afterCommit: needs.wake } : {}),
      };
    },
  };
}

const deleteSubscription: Change<{ id: number }, { id: number }> = {
  action: 'webhooks.subscription-delete',
  async apply(tx, { id }) {
    if (!(await tx.webhooks.deleteSubscription(id))) throw noSubscription(id);
    return { answer: { id }, audit: { details: { subscriptionId: id } } };
  },
};

/** A secret's creation, or its rotation with `overlapSeconds`; `sealingKey` seals it where it is kept. */
function addSecret(
  action: 'webhooks.secret-create' | 'webhooks.secret-rotate',
  sealingKey: string,
  needs: WebhookChangeNeeds,
): Change<{ overlapSeconds?: number }, SecretView> {
  return {
    action,
    async apply(tx, { overlapSeconds }, { at, actor }) {
      const secret = newSigningSecret();
      const overlapUntil =
        overlapSeconds === undefined
          ? undefined
          : new Date(Date.parse(at) + overlapSeconds * 1000).toISOString();
      const added = await tx.webhooks.addSecret(
        { sealed: sealSecret(sealingKey, secret), at, actor: actor.user },
        overlapUntil === undefined ? undefined : { overlapUntil },
      );
      if (added === undefined)
        throw overlapUntil === undefined
          ? new AppError('conflict', 'a signing secret exists already: rotate it (POST …/secrets/rotate)')
          : new AppError('conflict', 'there is no signing secret to rotate: create one (POST …/secrets)');
      return {
        answer: { id: added.id, secret, createdAt: added.createdAt, expiresAt: null },
        audit: { details: overlapUntil === undefined ? {} : { overlapSeconds, overlapUntil } },
        afterCommit: needs.secretsChanged,
      };
    },
    keeping: {
      toKept: (answer) => ({ ...answer, secret: sealSecret(sealingKey, answer.secret) }),
      fromKept: (kept) => {
        const view = kept as SecretView;
        return { ...view, secret: openSecret(sealingKey, view.secret) };
      },
    },
  };
}

function redeliver(needs: WebhookChangeNeeds): Change<{ id: number }, StoredDelivery> {
  return {
    action: 'webhooks.redeliver',
    async apply(tx, { id }, { at }) {
      // The answer is the delivery as queued again, read before the deliverer is woken.
      const queued = await tx.webhooks.redeliver(id, at);
      if (queued === undefined) throw new AppError('not-found', `no event delivery ${id}`);
      return { answer: queued, audit: { details: { deliveryId: id } }, afterCommit: needs.wake };
    },
  };
}

function redeliverSince(
  needs: WebhookChangeNeeds,
): Change<{ subscriptionId: number; since: string }, { events: number }> {
  return {
    action: 'webhooks.redeliver',
    async apply(tx, { subscriptionId, since }, { at }) {
      const result = await tx.webhooks.redeliverSince(subscriptionId, since, at, REDELIVER_EVENTS_MAX);
      if (result === undefined) throw noSubscription(subscriptionId);
      if (result.tooMany)
        throw new AppError(
          'redelivery-too-large',
          `${result.events} events were recorded since ${since}; at most ${REDELIVER_EVENTS_MAX} are delivered again at once: choose a later time`,
          { events: result.events, eventsMax: REDELIVER_EVENTS_MAX },
        );
      return {
        answer: { events: result.events },
        audit: { details: { subscriptionId, since, events: result.events } },
        afterCommit: needs.wake,
      };
    },
  };
}
