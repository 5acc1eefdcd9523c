/**
 * What every route of a change made through the change runner (`modules/changes/runner.ts`)
 * takes and answers alike: `dryRun=true` in the query, an `Idempotency-Key` header, and the
 * answer's status and `Idempotent-Replayed` header.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ChangeOptions, Outcome } from '../../modules/changes/runner.js';
import { IdempotencyKey } from '../../modules/ingestion/inputs.js';
import { actorOf } from '../authenticate.js';

/** The query of a change's route: its dry run, and nothing else. */
export const ChangeQuery = Type.Object(
  {
    dryRun: Type.Boolean({
      default: false,
      description:
        'When true, the change is made and rolled back: nothing changes, nothing is audited, and the answer (200) is what the change would answer now. Any other query parameter is refused, so a misspelt one cannot turn a dry run into a real change.',
    }),
  },
  { additionalProperties: false },
);

/** The headers of a change's route. */
export const ChangeHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      ...IdempotencyKey,
      description:
        'The same key from the same client with the same request answers the first answer again (`Idempotent-Replayed: true`) and changes nothing; with another request it is 422 `idempotency-key-reused`. A refused request keeps nothing under its key; a dry run neither reads nor keeps one.',
    }),
  ),
});

/** The answers of a deletion on the runner: 204, or for its dry run 200 naming what it would delete. */
export const DeletionAnswers = {
  200: Type.Object({ id: Type.Integer() }, { description: 'The dry run: what would be deleted.' }),
  204: Type.Null(),
};

/** What the runner needs of a change's request: who asks, its key, and whether it is a dry run. */
export function changeOptionsOf(
  request: FastifyRequest & {
    query: { dryRun: boolean };
    headers: { 'idempotency-key'?: string | undefined };
  },
): ChangeOptions {
  return {
    actor: actorOf(request),
    idempotencyKey: request.headers['idempotency-key'],
    dryRun: request.query.dryRun,
  };
}

/**
 * Sends a change's answer: with `status` when it was made or replayed (a replay says so in
 * `Idempotent-Replayed`), 200 for a dry run; `body` is the answer as the route shows it.
 */
export function sendChange<Answer>(
  reply: FastifyReply,
  outcome: Outcome<Answer>,
  status: 200 | 201 | 202 | 204,
  body: unknown = outcome.answer,
): FastifyReply {
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  if (status === 204 && !outcome.dryRun) return reply.code(204).send(null);
  return reply.code(outcome.dryRun ? 200 : status).send(body);
}
