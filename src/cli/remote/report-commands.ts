import { parseArgs } from 'node:util';
import { Balances, ProcessingError } from '../../http/api-schemas.js';
import { type Io, usageError } from '../output.js';
import { BALANCES_USAGE, PROCESSING_ERRORS_USAGE } from '../usage.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { nodeText, quoteRecord, textTable } from './format.js';
import { pagedItems } from './paging.js';

/** A calendar date as the service takes it. */
const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** Throws a usage error (exit 2) unless `value` is absent or a YYYY-MM-DD date. */
export function checkDateOption(name: string, value: string | undefined): void {
  if (value !== undefined && !DATE_PATTERN.test(value))
    throw usageError(`--${name} must be a date YYYY-MM-DD, got ${value}`);
}

function clientOf(values: Parameters<typeof connectionOf>[0], io: Io): ApiClient {
  return new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });
}

/**
 * `balances [--accounting-config NAME] [--as-of YYYY-MM-DD] [--account A] [--currency C]`:
 * GET /api/v1/balances as a table, one row per accounting configuration, node, account and
 * currency, the balance as the exact decimal string the service gives (debits positive).
 * Exit 1 on a refused request, 2 on bad usage.
 */
export async function balancesCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      'accounting-config': { type: 'string' },
      'as-of': { type: 'string' },
      account: { type: 'string' },
      currency: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw usageError(BALANCES_USAGE);
  checkDateOption('as-of', values['as-of']);
  const client = clientOf(values, io);
  const answer = await client.json(
    {
      method: 'GET',
      path: '/api/v1/balances',
      query: {
        accountingConfig: values['accounting-config'],
        asOf: values['as-of'],
        account: values.account,
        currency: values.currency,
      },
    },
    Balances,
  );
  const rows = answer.data.map((row) => [
    row.accountingConfig,
    nodeText(row.node),
    row.account,
    row.currency,
    row.balance,
  ]);
  if (rows.length === 0) {
    io.err('no balances (no posted journal matches)');
    return;
  }
  for (const line of textTable(
    ['accountingConfig', 'node', 'account', 'currency', 'balance'],
    rows,
    new Set([4]),
  ))
    io.out(line);
}

/**
 * `processing-errors [--ingestion ID] [--code C]`: every record that produced no journal, page
 * by page, one line each: `INGESTION NAMESPACE/ENTITY CODE: MESSAGE -- RECORD`; the count on
 * standard error. Exit 1 on a refused request, 2 on bad usage.
 */
export async function processingErrorsCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...CONNECTION_OPTIONS, ingestion: { type: 'string' }, code: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw usageError(PROCESSING_ERRORS_USAGE);
  const client = clientOf(values, io);
  let count = 0;
  for await (const entry of pagedItems(client, '/api/v1/processing-errors', ProcessingError, {
    ingestionId: values.ingestion,
    code: values.code,
  })) {
    count += 1;
    io.out(
      `${entry.ingestionId} ${entry.namespace}/${entry.entity} ` +
        `${entry.code}: ${entry.message} -- ${quoteRecord(entry.record)}`,
    );
  }
  io.err(`${count} processing errors`);
}
