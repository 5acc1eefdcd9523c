/**
 * The wire format of the API's answers: the TypeBox schemas the routes declare as their
 * responses (the OpenAPI document is generated from them) and the CLI checks the answers it
 * reads against (with their static types). This module imports TypeBox and module constants
 * only, never Fastify, so that the CLI can load it.
 *
 * Bounds (`maxLength`, `maxItems`, `maximum`, `pattern`, `format`) are stated only where the
 * service enforces them, each from the constant that does; the CLI refuses an answer outside
 * them, so an invented bound would break it. Counters and free text keep no upper bound.
 */
import { Type } from '@sinclair/typebox';
import { JOURNAL_LINES_MAX } from '../../modules/accounting/journal-assembly.js';
import { AUDIT_ACTIONS } from '../../modules/audit/entry.js';
import { TOKEN_LENGTH_MAX } from '../../modules/auth/token-service.js';
import { CONFIGURATION_DIFF_CHANGES_MAX } from '../../modules/configuration/diff.js';
import { CONFIGURATION_SECTIONS } from '../../modules/configuration/document.js';
import {
  CHUNK_ERRORS_SHOWN_MAX,
  CHUNK_NAME_LENGTH_MAX,
  CHUNK_RECORDS_MAX,
} from '../../modules/ingestion/chunk-body.js';
import { CursorPage, Page, Problem } from './schemas.js';

export { CursorPage, Page, Problem };

/** An ingestion id as `newIngestionId` (`lib/ids.ts`) makes it: 35 characters. */
const IngestionId = Type.String({
  maxLength: 35,
  description: '`in_` followed by 32 lower-case hex digits.',
});

/** The sequence number of a chunk in its session, from 1 (`chunk_seq_next + 1`). */
const ChunkSeq = Type.Integer({
  minimum: 1,
  description: 'Sequence number of the chunk in its session, distinct per chunk.',
});

/** A record's position in its chunk, which holds at most `CHUNK_RECORDS_MAX` records. */
const RecordIndex = Type.Integer({
  minimum: 0,
  maximum: CHUNK_RECORDS_MAX - 1,
  description: 'Position of the record in its chunk, from 0.',
});

/** A count of records of one chunk. */
const ChunkRecordCount = Type.Integer({ minimum: 0, maximum: CHUNK_RECORDS_MAX });

/** An opaque token: the service accepts none longer than `TOKEN_LENGTH_MAX`, so issues none. */
const OpaqueToken = Type.String({ maxLength: TOKEN_LENGTH_MAX });

/** The answer of POST /auth/token (RFC 6749, section 5.1). */
export const TokenAnswer = Type.Object({
  access_token: OpaqueToken,
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds the access token is valid.' }),
  refresh_token: OpaqueToken,
  refresh_expires_in: Type.Integer({ description: 'Seconds the refresh token is valid.' }),
});

/** An error of the token endpoint, in the OAuth form (RFC 6749, section 5.2). */
export const OAuthErrorBody = Type.Object(
  {
    error: Type.String(),
    error_description: Type.Optional(Type.String()),
    reference: Type.Optional(
      Type.String({ description: 'Id of the request, also on its server log lines.' }),
    ),
  },
  { description: 'An error of the OAuth endpoints (RFC 6749, section 5.2), with the id of the request.' },
);

/** A problem of a request or of a configuration document: where (a JSON Pointer) and what. */
export const PathError = Type.Object({ path: Type.String(), message: Type.String() });

/** The authorisation server metadata (RFC 8414, section 2) at /.well-known/oauth-authorization-server. */
export const AuthorizationServerMetadata = Type.Object({
  issuer: Type.String({ description: '`PUBLIC_URL`, or the address the service listens on.' }),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.String(),
  grant_types_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  service_documentation: Type.String(),
});

/** The answer of GET /healthz. */
export const Health = Type.Object({ status: Type.Literal('ok') });

/** The answer of GET /readyz: ready, with `processing` when background processing runs degraded. */
export const Readiness = Type.Object({
  status: Type.Literal('ready'),
  processing: Type.Optional(
    Type.Object({
      state: Type.Literal('degraded'),
      runsOn: Type.Union([
        Type.Literal('processing-thread'),
        Type.Literal('main-thread'),
        Type.Literal('none'),
      ]),
      detail: Type.Optional(Type.String()),
    }),
  ),
});

/** An ingestion session. */
export const Session = Type.Object({
  ingestionId: IngestionId,
  ingestionName: Type.Union([Type.String(), Type.Null()]),
  namespace: Type.String(),
  entity: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('closed'), Type.Literal('expired')]),
  timeout: Type.String({ description: 'ISO 8601 duration of inactivity after which the session expires.' }),
  openedBy: Type.String(),
  openedOn: Type.String({ format: 'date-time' }),
  closedBy: Type.Union([Type.String(), Type.Null()]),
  closedOn: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  closeReason: Type.Union([Type.Literal('manual'), Type.Literal('timeout'), Type.Null()]),
  lastActivityOn: Type.String({ format: 'date-time' }),
  chunks: Type.Integer({ minimum: 0 }),
  totalRows: Type.Integer({ minimum: 0 }),
  successRows: Type.Integer({ minimum: 0 }),
  failedRows: Type.Integer({ minimum: 0 }),
  processingStatus: Type.Union([
    Type.Literal('pending'),
    Type.Literal('processing'),
    Type.Literal('completed'),
    Type.Literal('completed_with_errors'),
  ]),
});

/** One error of a record: the field (empty for the whole record), a stable code, a message. */
export const FieldError = Type.Object({ field: Type.String(), code: Type.String(), message: Type.String() });

/** A record of a chunk that failed validation. */
export const FailedRecord = Type.Object({
  index: RecordIndex,
  record: Type.Unknown({ description: 'The record as it was sent.' }),
  errors: Type.Array(FieldError),
});

/** The answer to a stored chunk. */
export const ChunkAccepted = Type.Object({
  ingestionId: IngestionId,
  chunkName: Type.Union([Type.String({ maxLength: CHUNK_NAME_LENGTH_MAX }), Type.Null()]),
  chunkSeq: ChunkSeq,
  acceptedRows: ChunkRecordCount,
  failedRows: ChunkRecordCount,
  errors: Type.Array(FailedRecord, {
    maxItems: CHUNK_ERRORS_SHOWN_MAX,
    description: `The first failed records, at most ${CHUNK_ERRORS_SHOWN_MAX}.`,
  }),
  errorsOmitted: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: CHUNK_RECORDS_MAX,
      description: 'Failed records not listed in errors; present when some were left out.',
    }),
  ),
});

/** The 400 answer to a chunk refused whole for its records: a problem listing the failed records. */
export const ChunkRefused = Type.Composite([
  Problem,
  Type.Object({
    errors: Type.Array(FailedRecord, { minItems: 1, maxItems: CHUNK_ERRORS_SHOWN_MAX }),
    errorsOmitted: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: CHUNK_RECORDS_MAX,
        description: 'Failed records not listed in errors; present when some were left out.',
      }),
    ),
  }),
]);

/** One failed record of a session (GET /api/v1/ingestions/{id}/errors). */
export const SessionError = Type.Object({
  kind: Type.Union([Type.Literal('validation'), Type.Literal('processing')]),
  chunkSeq: ChunkSeq,
  index: RecordIndex,
  record: Type.Unknown(),
  errors: Type.Array(FieldError),
  at: Type.String({ format: 'date-time' }),
});

/** An attribute of an entity. */
export const EntityAttribute = Type.Object({
  name: Type.String(),
  label: Type.String(),
  mandatory: Type.Boolean(),
  type: Type.String({ description: 'TEXT, DATE, DATETIME, INTEGER, DECIMAL, BOOLEAN, UUID or LIST.' }),
  elementType: Type.Optional(Type.String({ description: 'Element type of a LIST.' })),
});

/** One entity with its ordered attributes. */
export const EntityDetail = Type.Object({
  name: Type.String(),
  namespace: Type.String(),
  description: Type.String(),
  temporalityType: Type.String(),
  type: Type.String(),
  attributes: Type.Array(EntityAttribute, { description: 'In their configured order.' }),
});

/** Counts of processing data, as a configuration change wipes it. */
export const ProcessingDataCounts = Type.Object(
  {
    ingestions: Type.Integer({
      description: 'Ingestion sessions; their chunks and rejected records go with them.',
    }),
    records: Type.Integer({ description: 'Accepted records.' }),
    journals: Type.Integer({ description: 'Journals made from the records.' }),
    journalLines: Type.Integer({ description: 'Lines of those journals.' }),
    processingErrors: Type.Integer({ description: 'Processing errors of the records.' }),
  },
  { description: 'Counts of processing data. Users, credentials, tokens and the audit log are never wiped.' },
);

/** Items per configuration section. */
export const Sections = Type.Object(
  Object.fromEntries(CONFIGURATION_SECTIONS.map((name) => [name, Type.Integer()])),
  {
    description:
      'Items per section: array sections count their elements, featureFlags its flags, and the settings and definition objects 1 when not empty.',
  },
);

/** A configuration change that the stored processing data forbids when it is to be kept. */
export const BlockingChange = Type.Object({
  path: Type.String({
    description:
      'JSON Pointer of the change in the uploaded document, as a 400 names problems (in the stored document for something removed), e.g. /configuration/entities/0/attributes/2/type.',
  }),
  reason: Type.String({ description: 'Why the stored data forbids it.' }),
});

/** Whether an upload could keep the processing data. */
export const KeepPossibility = Type.Object(
  {
    possible: Type.Boolean(),
    blocking: Type.Optional(
      Type.Array(BlockingChange, { description: 'When not possible: every change the stored data forbids.' }),
    ),
  },
  {
    description:
      'Whether the same upload with `keep=processing-data` would be accepted now (it keeps every session, record, journal and error).',
  },
);

/** What the failed records would do under a candidate configuration. */
export const WhatIfAnswer = Type.Object(
  {
    wouldPost: Type.Integer({ minimum: 0, description: 'Failed records that would post.' }),
    wouldStillFail: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'Failed records that would still fail, by error code.',
    }),
    examples: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
      description: 'A few of the records run.',
    }),
  },
  {
    description:
      'How many of the records that failed processing would post under the uploaded configuration (nothing is written).',
  },
);

/** The answer to a configuration upload or its dry run. */
export const UploadResult = Type.Object({
  version: Type.String({ description: 'Configuration format label of the document.' }),
  sections: Sections,
  deleted: Type.Optional({
    ...ProcessingDataCounts,
    description:
      'What the upload wiped, counted in the transaction that deleted it (all 0 with `keep=processing-data`). Absent on a dry run.',
  }),
  wouldDelete: Type.Optional({
    ...ProcessingDataCounts,
    description:
      'What the upload would wipe if it were made now (all 0 with `keep=processing-data`). Only on a dry run.',
  }),
  keepProcessingData: Type.Optional(KeepPossibility),
  whatIf: Type.Optional(WhatIfAnswer),
});

/** One configuration revision, without its document. */
export const ConfigurationRevision = Type.Object({
  revision: Type.Integer({ minimum: 1 }),
  at: Type.String({ format: 'date-time' }),
  actor: Type.Union([Type.String(), Type.Null()], {
    description:
      'E-mail of the owner of the credential that made it; null only for a revision made before revisions were kept whose author was not recorded.',
  }),
  action: Type.Union([Type.Literal('upload'), Type.Literal('delete')]),
  version: Type.String({ description: 'Configuration format label.' }),
  sha256: Type.String({
    pattern: '^[0-9a-f]{64}$',
    description:
      "SHA-256 (hex) of the revision's configuration as the `configuration` member of its download is written.",
  }),
  sections: Sections,
});

/** One change between two configurations. */
export const ConfigurationChange = Type.Object({
  path: Type.String({
    description:
      'JSON Pointer (RFC 6901) into the newer configuration for an added or changed value, into the older for a removed one.',
  }),
  kind: Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('changed')]),
  old: Type.Optional(Type.Unknown({ description: 'The value before; absent for an added value.' })),
  new: Type.Optional(Type.Unknown({ description: 'The value after; absent for a removed value.' })),
});

/** The changes between two revisions. */
export const RevisionDiff = Type.Object({
  from: Type.Union([ConfigurationRevision, Type.Null()], {
    description:
      'The revision compared from; null when none is kept before `to` (compared with the empty configuration).',
  }),
  to: ConfigurationRevision,
  changes: Type.Array(ConfigurationChange, { maxItems: CONFIGURATION_DIFF_CHANGES_MAX }),
  truncated: Type.Boolean({ description: 'True when there were more changes than the answer lists.' }),
});

/** The answer to a dry run of the configuration deletion. */
export const WipeDryRunResult = Type.Object({
  wouldDelete: {
    ...ProcessingDataCounts,
    description: 'What the deletion would wipe if it were made now.',
  },
});

const Summary = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]);
const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });

/** One entry of the audit trail: who changed what, when, before and after, and its place in the hash chain. */
export const AuditEntry = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Row id: the order in which the entries were written.' }),
  seq: Type.Integer({ minimum: 1, description: 'Position in the hash chain, from 1 without a gap.' }),
  at: Type.String({ format: 'date-time' }),
  actor: Type.String({
    description:
      'E-mail of the user who made the change (through the administration interface, or as the owner of the calling credential), or the service itself: `schedule` (a scheduled reprocessing run), `bootstrap` (the first administrator and the bootstrap credential), `system` (the hourly count of failed sign-ins), `cli:<os user>` (a command run on the store).',
  }),
  clientId: Type.Union([Type.String(), Type.Null()], {
    description: 'The credential that made the change through the API; null for any other way.',
  }),
  action: Type.Union(
    AUDIT_ACTIONS.map((action) => Type.Literal(action)),
    { description: 'What was done (docs/reference.md, Audit trail, lists each action and its summaries).' },
  ),
  version: Type.Union([Type.String(), Type.Null()]),
  revision: Type.Integer({
    minimum: 0,
    description:
      'Configuration revision the change made; for any other entry, the revision stored at the time (0: none).',
  }),
  sections: Type.Record(Type.String(), Type.Integer(), {
    description: 'Items per section of the configuration the change stored; empty for other entries.',
  }),
  deleted: Type.Union([Type.Record(Type.String(), Type.Integer()), Type.Null()], {
    description:
      'What a configuration change wiped, as `ingestions`, `records`, `journals`, `journalLines` and `processingErrors` counts; null for other entries and those written before the counts.',
  }),
  details: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description:
      'What the change did beyond its summaries: a reprocessing run (run id, trigger, selection, records queued and skipped), a schedule change (the new settings), a reversal (reversal id, client id, reason, selection, posting date and counts), a password change (whether generated, sign-ins ended), the failed sign-ins of an hour (user, window, count), a webhook subscription or secret change, or an approval request (request id, kind, maker, approver, reason, document hash, dry run, outcome or problem). Never a secret.',
  }),
  before: {
    ...Summary,
    description: 'The changed thing before the change (null when it did not exist); never a secret.',
  },
  after: { ...Summary, description: 'The changed thing after the change; never a secret.' },
  prevHash: { ...Sha256, description: 'The hash of the entry before (64 zeros for the first).' },
  hash: {
    ...Sha256,
    description:
      'SHA-256 (hex) over the canonical JSON (keys sorted, no white space) of every field above but `id` and `hash`, `prevHash` included.',
  },
});

/** The outcome of verifying the stored audit chain. */
export const AuditVerification = Type.Object({
  ok: Type.Boolean(),
  entries: Type.Integer({ minimum: 0, description: 'Entries read.' }),
  lastSeq: Type.Integer({ minimum: 0, description: 'Position of the last good entry.' }),
  lastHash: Sha256,
  fault: Type.Optional(
    Type.Object({
      problem: Type.Union([
        Type.Literal('changed'),
        Type.Literal('deleted'),
        Type.Literal('reordered'),
        Type.Literal('inserted'),
      ]),
      seq: Type.Integer({ minimum: 0, description: 'Position of the first bad entry.' }),
      id: Type.Union([Type.Integer(), Type.Null()], { description: 'Its row id, when it has one.' }),
      message: Type.String(),
    }),
  ),
});

/** A journal with its lines. */
export const Journal = Type.Object({
  journalId: Type.String({ format: 'uuid' }),
  status: Type.Union([Type.Literal('posted'), Type.Literal('unposted')]),
  coreDate: Type.String({ format: 'date' }),
  originalCoreDate: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
    description:
      'The date the journal asked for, when a closed period moved it (posting-date override); on an automatic reversal moved past a closed or locked period, the day after its journal; on a reversal journal made by a correction, the core date of the journal it reverses.',
  }),
  journalType: Type.String(),
  accountingConfig: Type.String(),
  ingestionId: IngestionId,
  reverses: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description: 'The journal this reversal journal reverses (automatic or a correction); null on others.',
  }),
  reversedBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description:
      'The journal that reverses this one: its automatic reversal, or else the correction that withdrew it; null while none.',
  }),
  withdrawnBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description:
      'The reversal journal of the correction that withdrew this journal (a reversal or a business-event rollback); null while none has. A journal is withdrawn at most once.',
  }),
  reversalId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description:
      'On a reversal journal made by a reversal request, that request (`GET /api/v1/reversals/{reversalId}`); null on others.',
  }),
  node: Type.Record(Type.String(), Type.String()),
  revision: Type.Integer({
    minimum: 0,
    description: 'The configuration revision the journal was made under.',
  }),
  lines: Type.Array(
    Type.Record(Type.String(), Type.Unknown(), {
      description:
        'A line keyed by the journalDefinition field names (amounts as decimal strings, debit positive), plus drCr.',
    }),
    { maxItems: JOURNAL_LINES_MAX },
  ),
});

/** The balances of posted journals. */
export const Balances = Type.Object({
  data: Type.Array(
    Type.Object({
      accountingConfig: Type.String(),
      node: Type.Record(Type.String(), Type.String()),
      account: Type.String(),
      currency: Type.String(),
      balance: Type.String({ description: 'Exact signed sum: debits positive, credits negative.' }),
    }),
  ),
});

/** A record that produced no journal, with the rule it broke. */
export const ProcessingError = Type.Object({
  ingestionId: IngestionId,
  namespace: Type.String(),
  entity: Type.String(),
  code: Type.String({ description: 'The code of the last attempt.' }),
  message: Type.String(),
  record: Type.Record(Type.String(), Type.Unknown()),
  at: Type.String({ format: 'date-time', description: 'When the record first failed.' }),
  revision: Type.Integer({
    minimum: 0,
    description: 'The configuration revision processing worked under when the record failed.',
  }),
  id: Type.Integer({ minimum: 1 }),
  recordId: Type.Integer({ minimum: 1 }),
  state: Type.Union([Type.Literal('open'), Type.Literal('queued'), Type.Literal('closed')], {
    description:
      '`open`: still to fix; `queued`: its record waits in a reprocessing run; `closed`: its record posted when reprocessed (its journals carry `recordId`).',
  }),
  attempts: Type.Integer({ minimum: 1, description: 'Times the record was processed, the first included.' }),
  lastAttemptAt: Type.String({ format: 'date-time' }),
  previousCode: Type.Union([Type.String(), Type.Null()], {
    description: 'The code before the last attempt.',
  }),
  closedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
