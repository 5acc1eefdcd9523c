import { type ColumnDefinitionBuilder, type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

type Db = Kysely<unknown>;

/**
 * The first schema: access (users, credentials, tokens), the configuration document and its
 * audit log, ingestion sessions with their chunks, records and errors, and journals. Every
 * table is shared safely by several service instances: counters are updated in place by single
 * statements, ids are random, and uniqueness is enforced by keys, never by reading first.
 */
export async function up(db: Db, dialect: Dialect): Promise<void> {
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  const idColumn = (c: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement();
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  const amount = dialect === 'postgres' ? 'numeric' : 'text';

  await db.schema
    .createTable('users')
    .addColumn('email', 'text', (c) => c.primaryKey())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('roles', 'text', (c) => c.notNull())
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('credentials')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('owner_email', 'text', (c) => c.notNull().references('users.email').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();

  await db.schema
    .createTable('token_families')
    .addColumn('family_id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) =>
      c.notNull().references('credentials.client_id').onDelete('cascade'),
    )
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();

  await db.schema
    .createTable('oauth_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('family_id', 'text', (c) =>
      c.notNull().references('token_families.family_id').onDelete('cascade'),
    )
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('oauth_tokens_expires_at').on('oauth_tokens').column('expires_at').execute();
  await db.schema.createIndex('oauth_tokens_family_id').on('oauth_tokens').column('family_id').execute();

  await db.schema
    .createTable('configuration')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('revision', bigint, (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', serial, idColumn)
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('version', 'text')
    .addColumn('revision', bigint, (c) => c.notNull())
    .addColumn('sections', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('ingestions')
    .addColumn('ingestion_id', 'text', (c) => c.primaryKey())
    .addColumn('ingestion_name', 'text')
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('timeout', 'text', (c) => c.notNull())
    .addColumn('timeout_ms', bigint, (c) => c.notNull())
    .addColumn('opened_by', 'text', (c) => c.notNull())
    .addColumn('opened_on', 'text', (c) => c.notNull())
    .addColumn('closed_by', 'text')
    .addColumn('closed_on', 'text')
    .addColumn('close_reason', 'text')
    .addColumn('last_activity_on', 'text', (c) => c.notNull())
    .addColumn('expires_at_ms', bigint, (c) => c.notNull())
    .addColumn('chunk_seq_next', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('chunks', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('api_calls', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('total_rows', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('success_rows', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('failed_rows', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('processed_rows', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('processing_failed_rows', bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('ingestions_opened_on').on('ingestions').column('opened_on').execute();
  await db.schema.createIndex('ingestions_expires_at_ms').on('ingestions').column('expires_at_ms').execute();

  await db.schema
    .createTable('chunks')
    .addColumn('ingestion_id', 'text', (c) =>
      c.notNull().references('ingestions.ingestion_id').onDelete('cascade'),
    )
    .addColumn('chunk_seq', bigint, (c) => c.notNull())
    .addColumn('chunk_name', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('body_sha256', 'text')
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('accepted_rows', bigint, (c) => c.notNull())
    .addColumn('failed_rows', bigint, (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('chunks_pk', ['ingestion_id', 'chunk_seq'])
    .addUniqueConstraint('chunks_idempotency_key', ['ingestion_id', 'idempotency_key'])
    .execute();

  await db.schema
    .createTable('records')
    .addColumn('record_id', serial, idColumn)
    .addColumn('ingestion_id', 'text', (c) =>
      c.notNull().references('ingestions.ingestion_id').onDelete('cascade'),
    )
    .addColumn('chunk_seq', bigint, (c) => c.notNull())
    .addColumn('record_index', 'integer', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('processing', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('records_ingestion')
    .on('records')
    .columns(['ingestion_id', 'record_id'])
    .execute();
  await db.schema
    .createIndex('records_entity')
    .on('records')
    .columns(['namespace', 'entity', 'record_id'])
    .execute();
  // Only records still waiting for the accounting engine are in this index, so the background
  // processor finds its next batch without scanning processed history.
  await db.schema
    .createIndex('records_to_process')
    .on('records')
    .column('record_id')
    .where(sql.ref('processing'), '=', 1)
    .execute();
  // A claimed chunk's waiting records, read and marked processed without walking the backlog.
  await db.schema
    .createIndex('records_chunk_to_process')
    .on('records')
    .columns(['ingestion_id', 'chunk_seq'])
    .where(sql.ref('processing'), '=', 1)
    .execute();

  await db.schema
    .createTable('record_errors')
    .addColumn('id', serial, idColumn)
    .addColumn('ingestion_id', 'text', (c) =>
      c.notNull().references('ingestions.ingestion_id').onDelete('cascade'),
    )
    .addColumn('chunk_seq', bigint, (c) => c.notNull())
    .addColumn('record_index', 'integer', (c) => c.notNull())
    .addColumn('record', 'text', (c) => c.notNull())
    .addColumn('errors', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('record_errors_ingestion')
    .on('record_errors')
    .columns(['ingestion_id', 'id'])
    .execute();

  await db.schema
    .createTable('processing_errors')
    .addColumn('id', serial, idColumn)
    .addColumn('ingestion_id', 'text', (c) =>
      c.notNull().references('ingestions.ingestion_id').onDelete('cascade'),
    )
    .addColumn('record_id', bigint, (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('record', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('processing_errors_ingestion')
    .on('processing_errors')
    .columns(['ingestion_id', 'id'])
    .execute();

  await db.schema
    .createTable('journals')
    .addColumn('journal_id', 'text', (c) => c.primaryKey())
    .addColumn('ingestion_id', 'text', (c) =>
      c.notNull().references('ingestions.ingestion_id').onDelete('cascade'),
    )
    .addColumn('record_id', bigint, (c) => c.notNull())
    .addColumn('core_date', 'text', (c) => c.notNull())
    .addColumn('original_core_date', 'text')
    .addColumn('journal_type', 'text', (c) => c.notNull())
    .addColumn('accounting_config', 'text', (c) => c.notNull())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('posted', 'integer', (c) => c.notNull())
    .addColumn('reverses', 'text')
    .addColumn('reversed_by', 'text')
    .addColumn('origin_journal_id', 'text')
    .addColumn('line_count', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('journals_core_date').on('journals').columns(['core_date']).execute();
  await db.schema
    .createIndex('journals_ingestion')
    .on('journals')
    .columns(['ingestion_id', 'origin_journal_id'])
    .execute();
  await db.schema
    .createIndex('journals_unposted')
    .on('journals')
    .columns(['node', 'core_date'])
    .where(sql.ref('posted'), '=', 0)
    .execute();

  await db.schema
    .createTable('journal_lines')
    .addColumn('line_id', 'text', (c) => c.primaryKey())
    .addColumn('journal_id', 'text', (c) => c.notNull().references('journals.journal_id').onDelete('cascade'))
    .addColumn('line_no', 'integer', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('amount', amount, (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('extras', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('journal_lines_journal')
    .on('journal_lines')
    .columns(['journal_id', 'line_no'])
    .execute();
}
