import { parseArgs } from 'node:util';
import { Type } from '@sinclair/typebox';
import { Balances, Page, ProcessingError } from '../../http/api/answer-schemas.js';
import { PROCESSING_ERROR_CODES } from '../../modules/accounting/processing-error.js';
import { countLines, type Io, usageError } from '../output.js';
import { BALANCES_USAGE, PROCESSING_ERRORS_USAGE } from '../usage.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { nodeText, quoteRecord, textTable } from './format.js';
import { PAGE_LIMIT, pagedItems } from './paging.js';

/** A calendar date as the service takes it. */
const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
/** The date the messages show as an example of the format. */
const DATE_EXAMPLE = '2026-11-25';

/**
 * Throws a usage error (exit 2) naming the option and the expected format unless `value` is
 * absent or a calendar day written YYYY-MM-DD (2026-02-30 is refused here, not by the service).
 */
export function checkDateOption(name: string, value: string | undefined): void {
  if (value === undefined) return;
  const ms = Date.parse(`${value}T00:00:00Z`);
  if (!DATE_PATTERN.test(value) || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value)
    throw usageError(`--${name} must be a date like ${DATE_EXAMPLE} (YYYY-MM-DD), got ${value}`);
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

/** Processing errors listed without `--limit` or `--all`. */
const PROCESSING_ERRORS_SHOWN_DEFAULT = 100;

/** How many processing errors match `query`: the `totalSize` of a one-item page. */
async function processingErrorTotal(
  client: ApiClient,
  query: Record<string, string | undefined>,
): Promise<number> {
  const answer = await client.json(
    { method: 'GET', path: '/api/v1/processing-errors', query: { ...query, page: 0, limit: 1 } },
    Type.Pick(Page(ProcessingError), ['totalSize']),
  );
  return answer.totalSize;
}

/** How many processing errors may be shown: `--all`, `--limit N` (N ≥ 1) or the default. */
function shownMaxOf(limit: string | undefined, all: boolean | undefined): number {
  if (all === true && limit !== undefined) throw usageError('give --limit or --all, not both');
  if (all === true) return Number.POSITIVE_INFINITY;
  if (limit === undefined) return PROCESSING_ERRORS_SHOWN_DEFAULT;
  if (!/^[1-9]\d*$/.test(limit)) throw usageError(`--limit must be a whole number from 1, got ${limit}`);
  return Number(limit);
}

/**
 * `processing-errors [--ingestion ID] [--code C] [--limit N | --all]`: the records that produced
 * no journal, page by page, one line each on standard output,
 * `INGESTION NAMESPACE/ENTITY CODE: MESSAGE -- RECORD`, at most `--limit` (default
 * `PROCESSING_ERRORS_SHOWN_DEFAULT`) unless `--all`. On standard error: the total, how many
 * more were not shown, and the count per code (from the shown errors when all are shown, else
 * one count per known code from the service). Exit 1 on a refused request, 2 on bad usage.
 */
export async function processingErrorsCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      ingestion: { type: 'string' },
      code: { type: 'string' },
      limit: { type: 'string' },
      all: { type: 'boolean' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw usageError(PROCESSING_ERRORS_USAGE);
  const shownMax = shownMaxOf(values.limit, values.all);
  const client = clientOf(values, io);
  const query = { ingestionId: values.ingestion, code: values.code };
  const total = await processingErrorTotal(client, query);
  const shownByCode = new Map<string, number>();
  let shown = 0;
  if (total > 0) {
    const pageLimit = Math.min(shownMax, PAGE_LIMIT);
    for await (const entry of pagedItems(
      client,
      '/api/v1/processing-errors',
      ProcessingError,
      query,
      pageLimit,
    )) {
      shown += 1;
      shownByCode.set(entry.code, (shownByCode.get(entry.code) ?? 0) + 1);
      io.out(
        `${entry.ingestionId} ${entry.namespace}/${entry.entity} ` +
          `${entry.code}: ${entry.message} -- ${quoteRecord(entry.record)}`,
      );
      if (shown >= shownMax) break;
    }
  }
  const more = Math.max(0, total - shown);
  io.err(
    more === 0
      ? `${total} processing errors`
      : `${total} processing errors, ${shown} shown; ${more} more: use --limit N or --all to see them`,
  );
  if (total === 0) return;
  const byCode = more === 0 ? shownByCode : await countsByCode(client, query, total);
  const rows = [...byCode].sort(([a, m], [b, n]) => n - m || a.localeCompare(b));
  io.err('by code:');
  for (const line of countLines(Object.fromEntries(rows))) io.err(line);
}

/**
 * The processing errors matching `query` per code, one count request per known code (or the
 * one `query.code`); errors of codes this command does not know are counted as `other codes`.
 */
async function countsByCode(
  client: ApiClient,
  query: { ingestionId: string | undefined; code: string | undefined },
  total: number,
): Promise<Map<string, number>> {
  if (query.code !== undefined) return new Map([[query.code, total]]);
  const counts = new Map<string, number>();
  for (const code of PROCESSING_ERROR_CODES) {
    const count = await processingErrorTotal(client, { ...query, code });
    if (count > 0) counts.set(code, count);
  }
  const other = total - [...counts.values()].reduce((sum, count) => sum + count, 0);
  if (other > 0) counts.set('other codes', other);
  return counts;
}
