/**
 * The answers of the extract routes (`extract-configurations.ts`), as TypeBox schemas free of
 * Fastify, so that the CLI can check what it reads against them.
 */
import { Type } from '@sinclair/typebox';
import {
  EXTRACT_DESCRIPTION_LENGTH_MAX,
  EXTRACT_NAME_LENGTH_MAX,
  ExtractFiltersInput,
  ExtractFormatInput,
  ExtractSourceInput,
  ExtractStateInput,
} from '../../modules/extracts/inputs.js';

/** An extraction configuration. */
export const ExtractConfigurationAnswer = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    name: Type.String({ maxLength: EXTRACT_NAME_LENGTH_MAX }),
    description: Type.Union([Type.String({ maxLength: EXTRACT_DESCRIPTION_LENGTH_MAX }), Type.Null()]),
    source: ExtractSourceInput,
    filters: ExtractFiltersInput,
    fields: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: 'The fields of each row, in order; null for every field.',
    }),
    format: ExtractFormatInput,
    incremental: Type.Boolean(),
    state: ExtractStateInput,
    pending: Type.Boolean({
      description:
        'True while a read of an incremental extract waits for its `increment`: reads answer the same rows until then.',
    }),
    pendingSince: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the pending read was first made.',
    }),
    ackedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the offset last moved.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    createdBy: Type.String(),
    updatedAt: Type.String({ format: 'date-time' }),
    updatedBy: Type.String(),
  },
  { additionalProperties: false },
);

/** The answer of `increment`. */
export const ExtractIncrementAnswer = Type.Object(
  {
    status: Type.Union([
      Type.Literal('latest offsets incremented'),
      Type.Literal('no extract performed since the last increment'),
    ]),
  },
  { additionalProperties: false },
);

/** One row of an extract: the fields of its source, as the configuration names them. */
export const ExtractRow = Type.Record(Type.String(), Type.Unknown(), {
  description: 'The row’s fields, in the configured order.',
});

/** An asynchronous extraction. */
export const ExtractExecutionAnswer = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    extractConfigurationId: Type.Integer({ minimum: 1 }),
    latestStatus: Type.Union(
      [Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')],
      {
        description:
          '`queued`, `running` (made run by run), `completed` (the file is ready) or `failed` (`failure` says why).',
      },
    ),
    format: ExtractFormatInput,
    requestedBy: Type.String(),
    requestedAt: Type.String({ format: 'date-time' }),
    startedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    recordCount: Type.Integer({ minimum: 0, description: 'Rows written so far.' }),
    bytes: Type.Integer({ minimum: 0 }),
    totalRuns: Type.Integer({ minimum: 0 }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the file is deleted; set when the execution ends.',
    }),
    failure: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

/** One run of an execution: a part of its file. */
export const ExtractRunAnswer = Type.Object(
  {
    runNo: Type.Integer({ minimum: 1 }),
    records: Type.Integer({ minimum: 0 }),
    startedAt: Type.String({ format: 'date-time' }),
    completedAt: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
