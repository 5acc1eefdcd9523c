import { parseArgs } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import {
  DeliveryAnswer,
  RedeliveryAnswer,
  SubscriptionAnswer,
} from '../../http/api/event-delivery-answers.js';
import { isEventType } from '../../modules/events/types.js';
import { type Io, usageError } from '../output.js';
import { WEBHOOKS_USAGE } from '../usage.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';

/** Subscriptions read per page by `webhooks list`. */
const SUBSCRIPTIONS_PER_PAGE = 200;
/** Pages of subscriptions read at most. */
const SUBSCRIPTION_PAGES_MAX = 1000;
/** Deliveries listed by default. */
const DELIVERIES_SHOWN_DEFAULT = 50;

const SubscriptionPage = Type.Object({ data: Type.Array(SubscriptionAnswer), totalPages: Type.Integer() });
const DeliveryPage = Type.Object({ data: Type.Array(DeliveryAnswer), totalSize: Type.Integer() });

/** One subscription as a line. Pure. */
export function subscriptionLine(s: Static<typeof SubscriptionAnswer>): string {
  const flag = s.flagged ? ' FLAGGED' : '';
  return `${s.id}\t${s.status}${flag}\t${s.url}\t${s.eventTypes.join(',')}`;
}

/** One delivery as a line. Pure. */
export function deliveryLine(d: Static<typeof DeliveryAnswer>): string {
  const last =
    d.lastStatusCode === null
      ? (d.lastError ?? '-')
      : `${d.lastStatusCode}${d.lastError === null ? '' : ` ${d.lastError}`}`;
  return `${d.id}\t${d.status}\t${d.eventType}\t${d.eventId}\tattempts ${d.attempts}\tlast ${last}\tnext ${d.nextAttemptAt ?? '-'}`;
}

/**
 * `webhooks list|create|deliveries|redeliver` (docs/reference.md, Webhooks): the subscriptions,
 * a new one, deliveries with their last answer, and redelivery of one delivery or of everything
 * of a subscription since a time. Exit 1 on a refused request, 2 on bad usage.
 */
export async function webhooksCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      ...CONNECTION_OPTIONS,
      endpoint: { type: 'string' },
      event: { type: 'string', multiple: true },
      description: { type: 'string' },
      subscription: { type: 'string' },
      status: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const client = () => new ApiClient(connectionOf(values), { onRetry: (m) => io.err(`retry: ${m}`) });
  if (action === 'list' && positionals.length === 0) {
    for (let page = 0; page < SUBSCRIPTION_PAGES_MAX; page += 1) {
      const answer = await client().json(
        {
          method: 'GET',
          path: '/api/v1/event-deliveries/subscriptions',
          query: { page, limit: SUBSCRIPTIONS_PER_PAGE },
        },
        SubscriptionPage,
      );
      for (const s of answer.data) io.out(subscriptionLine(s));
      if (page + 1 >= answer.totalPages) return;
    }
    return;
  }
  if (action === 'create' && positionals.length === 0) {
    const events = values.event ?? [];
    if (values.endpoint === undefined || events.length === 0) throw usageError(WEBHOOKS_USAGE);
    const unknown = events.find((e) => !isEventType(e));
    if (unknown !== undefined) throw usageError(`unknown event type ${unknown}\n${WEBHOOKS_USAGE}`);
    const created = await client().json(
      {
        method: 'POST',
        path: '/api/v1/event-deliveries/subscriptions',
        json: {
          url: values.endpoint,
          eventTypes: events,
          ...(values.description === undefined ? {} : { description: values.description }),
        },
      },
      SubscriptionAnswer,
    );
    io.out(subscriptionLine(created));
    return;
  }
  if (action === 'deliveries' && positionals.length === 0) {
    const limit = values.limit === undefined ? DELIVERIES_SHOWN_DEFAULT : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw usageError(WEBHOOKS_USAGE);
    const path =
      values.subscription === undefined
        ? '/api/v1/event-deliveries/deliveries'
        : `/api/v1/event-deliveries/subscriptions/${encodeURIComponent(values.subscription)}/deliveries`;
    const answer = await client().json(
      { method: 'GET', path, query: { limit, status: values.status } },
      DeliveryPage,
    );
    for (const d of answer.data) io.out(deliveryLine(d));
    io.err(`${answer.data.length} of ${answer.totalSize} deliveries shown, newest first`);
    return;
  }
  if (action === 'redeliver') {
    const [deliveryId, ...extra] = positionals;
    if (extra.length > 0) throw usageError(WEBHOOKS_USAGE);
    if (deliveryId !== undefined && values.subscription === undefined && values.since === undefined) {
      const again = await client().json(
        {
          method: 'POST',
          path: `/api/v1/event-deliveries/deliveries/${encodeURIComponent(deliveryId)}/redeliver`,
        },
        DeliveryAnswer,
      );
      io.out(deliveryLine(again));
      return;
    }
    if (deliveryId === undefined && values.subscription !== undefined && values.since !== undefined) {
      const queued = await client().json(
        {
          method: 'POST',
          path: `/api/v1/event-deliveries/subscriptions/${encodeURIComponent(values.subscription)}/redeliver`,
          json: { since: values.since },
        },
        RedeliveryAnswer,
      );
      io.out(`${queued.events} events queued again for subscription ${values.subscription}`);
      return;
    }
  }
  throw usageError(WEBHOOKS_USAGE);
}
