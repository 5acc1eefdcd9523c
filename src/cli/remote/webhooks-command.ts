import { parseArgs } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import {
  DeliveryAnswer,
  RedeliveryAnswer,
  SecretAnswer,
  SubscriptionAnswer,
} from '../../http/api/event-delivery-answers.js';
import { SECRET_OVERLAP_SECONDS_DEFAULT, SECRET_OVERLAP_SECONDS_MAX } from '../../modules/events/inputs.js';
import { type EventType, isEventType } from '../../modules/events/types.js';
import { type Io, usageError } from '../output.js';
import { WEBHOOKS_USAGE } from '../usage.js';
import { answerOf } from './answers.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';

/** Subscriptions read per page by `webhooks list`. */
const SUBSCRIPTIONS_PER_PAGE = 200;
/** Pages of subscriptions read at most. */
const SUBSCRIPTION_PAGES_MAX = 1000;
/** Deliveries listed by default. */
const DELIVERIES_SHOWN_DEFAULT = 50;

const SUBSCRIPTIONS_PATH = '/api/v1/event-deliveries/subscriptions';
const SECRETS_PATH = '/api/v1/event-deliveries/secrets';
/** The status of a refused subscription while there is no signing secret, the only 409 it has. */
const NO_SECRET_STATUS = 409;
/** The status of a secret's creation when one exists already. */
const SECRET_EXISTS_STATUS = 409;

const SECONDS_PER_HOUR = 3600;

/** How to replace the signing secret, told wherever the command speaks of it. */
const ROTATE_HINT = `lost or leaked: ledgerflow webhooks rotate-secret makes a new one (shown once), and the old one goes on signing beside it for ${SECRET_OVERLAP_SECONDS_DEFAULT / SECONDS_PER_HOUR} hours (--overlap-seconds), so that receivers can switch`;

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
 * Prints a signing secret that the service has just made, the one time it is shown: on standard
 * output, marked as shown once, so that it reaches a file the output is kept in; on standard
 * error what it is for and how to replace it.
 */
function showSecretOnce(io: Io, secret: Static<typeof SecretAnswer>, what: string): void {
  io.err(`${what}: every delivery is signed with it, and the service never shows it again.`);
  io.out(`signing secret (shown this once, store it now): ${secret.secret}`);
  io.err(`Give it to the receivers that verify the signatures; ${ROTATE_HINT}.`);
}

/**
 * Creates a subscription. On a fresh instance the service refuses it until a signing secret
 * exists (409, after the URL was checked, so a bad URL makes no secret): the secret is then
 * created, shown once, and the subscription asked again. When the secret exists, that is said and
 * it is not shown. Secrets are never read back: the service answers one in clear only when it is
 * made, and the command does not fetch an existing one just to learn that it exists.
 */
async function createSubscription(
  client: ApiClient,
  subscription: { url: string; eventTypes: EventType[]; description?: string },
  io: Io,
): Promise<Static<typeof SubscriptionAnswer>> {
  const request = { method: 'POST', path: SUBSCRIPTIONS_PATH, json: subscription } as const;
  const first = await client.request({ ...request, accept: [NO_SECRET_STATUS] });
  if (first.status !== NO_SECRET_STATUS) {
    io.err(`signed with the signing secret that exists (not shown again; ${ROTATE_HINT})`);
    return answerOf(`POST ${SUBSCRIPTIONS_PATH}`, SubscriptionAnswer, first.body);
  }
  const made = await client.request({ method: 'POST', path: SECRETS_PATH, accept: [SECRET_EXISTS_STATUS] });
  if (made.status === SECRET_EXISTS_STATUS) {
    // Another user or command made it between the two requests: it was shown to them, not here.
    io.err(
      `a signing secret was created meanwhile by another request, and shown to it, not here (${ROTATE_HINT})`,
    );
  } else {
    showSecretOnce(
      io,
      answerOf(`POST ${SECRETS_PATH}`, SecretAnswer, made.body),
      'No signing secret existed, so one was created',
    );
  }
  return client.json(request, SubscriptionAnswer);
}

function parse(args: string[]) {
  return parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      endpoint: { type: 'string' },
      event: { type: 'string', multiple: true },
      description: { type: 'string' },
      subscription: { type: 'string' },
      status: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string' },
      'overlap-seconds': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
}

type Values = ReturnType<typeof parse>['values'];

/** Makes the client of a request, once the usage is checked (reading the connection may refuse it). */
type ClientMaker = () => ApiClient;

/**
 * `webhooks list|create|rotate-secret|deliveries|redeliver` (docs/reference.md, Webhooks): the
 * subscriptions, a new one (with the signing secret on a fresh instance), a new signing secret,
 * deliveries with their last answer, and redelivery of one delivery or of everything of a
 * subscription since a time. Exit 1 on a refused request, 2 on bad usage.
 */
export async function webhooksCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parse(rest);
  const client = () => new ApiClient(connectionOf(values), { onRetry: (m) => io.err(`retry: ${m}`) });
  if (action === 'redeliver') return redeliver(client, values, positionals, io);
  if (positionals.length > 0) throw usageError(WEBHOOKS_USAGE);
  switch (action) {
    case 'list':
      return listSubscriptions(client, io);
    case 'create':
      return create(client, values, io);
    case 'rotate-secret':
      return rotateSecret(client, values, io);
    case 'deliveries':
      return listDeliveries(client, values, io);
    default:
      throw usageError(WEBHOOKS_USAGE);
  }
}

/** `webhooks list`: every subscription, a line each, page after page. */
async function listSubscriptions(client: ClientMaker, io: Io): Promise<void> {
  for (let page = 0; page < SUBSCRIPTION_PAGES_MAX; page += 1) {
    const answer = await client().json(
      {
        method: 'GET',
        path: SUBSCRIPTIONS_PATH,
        query: { page, limit: SUBSCRIPTIONS_PER_PAGE },
      },
      SubscriptionPage,
    );
    for (const s of answer.data) io.out(subscriptionLine(s));
    if (page + 1 >= answer.totalPages) return;
  }
}

/** `webhooks create --endpoint URL --event TYPE...`: a new subscription, with its line printed. */
async function create(client: ClientMaker, values: Values, io: Io): Promise<void> {
  const events = values.event ?? [];
  if (values.endpoint === undefined || events.length === 0) throw usageError(WEBHOOKS_USAGE);
  const unknown = events.find((e) => !isEventType(e));
  if (unknown !== undefined) throw usageError(`unknown event type ${unknown}\n${WEBHOOKS_USAGE}`);
  const subscription = {
    url: values.endpoint,
    eventTypes: events.filter(isEventType),
    ...(values.description === undefined ? {} : { description: values.description }),
  };
  io.out(subscriptionLine(await createSubscription(client(), subscription, io)));
}

/** `webhooks rotate-secret [--overlap-seconds N]`: a new signing secret, shown once. */
async function rotateSecret(client: ClientMaker, values: Values, io: Io): Promise<void> {
  const overlapText = values['overlap-seconds'];
  const overlapSeconds = overlapText === undefined ? SECRET_OVERLAP_SECONDS_DEFAULT : Number(overlapText);
  if (
    overlapText !== undefined &&
    (!/^\d+$/.test(overlapText) || overlapSeconds > SECRET_OVERLAP_SECONDS_MAX)
  )
    throw usageError(`--overlap-seconds must be a whole number from 0 to ${SECRET_OVERLAP_SECONDS_MAX}`);
  const secret = await client().json(
    { method: 'POST', path: `${SECRETS_PATH}/rotate`, json: { overlapSeconds } },
    SecretAnswer,
  );
  showSecretOnce(
    io,
    secret,
    `A new signing secret replaced the old one, which goes on signing beside it for ${overlapSeconds} seconds`,
  );
}

/** `webhooks deliveries [--subscription ID] [--status S] [--limit N]`: the newest deliveries. */
async function listDeliveries(client: ClientMaker, values: Values, io: Io): Promise<void> {
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
}

/**
 * `webhooks redeliver ID` (one delivery) or `webhooks redeliver --subscription ID --since TIME`
 * (every event of a subscription since then); any other mix of the two is bad usage.
 */
async function redeliver(client: ClientMaker, values: Values, positionals: string[], io: Io): Promise<void> {
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
  throw usageError(WEBHOOKS_USAGE);
}
