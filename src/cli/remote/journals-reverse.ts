import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import { Reversal, ReversalDryRun, ReversalNothingNew } from '../../http/api/reversal-answers.js';
import { type Io, usageError } from '../output.js';
import { JOURNALS_REVERSE_USAGE } from '../usage.js';
import { answerOf } from './answers.js';
import { reportPendingApproval } from './approvals-command.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { checkDateOption } from './report-commands.js';

const REVERSALS_PATH = '/api/v1/reversals';

type Counts = Static<typeof ReversalDryRun>;

/** What a reversal answers: the reversal made, or the counts of a request that reversed nothing. */
const ReversalAnswer = Type.Union([Reversal, ReversalNothingNew]);

function printCounts(io: Io, counts: Omit<Counts, 'dryRun'>): void {
  if (counts.alreadyReversed > 0)
    io.out(
      `already reversed, left as they are: ${counts.alreadyReversed} (${counts.alreadyReversedIds.join(', ')}${counts.alreadyReversed > counts.alreadyReversedIds.length ? ', …' : ''})`,
    );
  if (counts.notReversible > 0)
    io.out(
      `reversal journals selected, not reversed again: ${counts.notReversible} (${counts.notReversibleIds.join(', ')}${counts.notReversible > counts.notReversibleIds.length ? ', …' : ''})`,
    );
  for (const t of counts.totals)
    io.out(
      `  ${t.accountingConfig}  ${t.account}  debit ${t.debit} ${t.currency}  credit ${t.credit} ${t.currency}`,
    );
}

/** The one selection the options name, or a usage error when they name none or several. */
function selectionOf(values: {
  journal?: string[];
  ingestion?: string;
  'origin-journal'?: string;
  'accounting-config'?: string;
  from?: string;
  to?: string;
}): Record<string, unknown> {
  const selections: Record<string, unknown>[] = [];
  if (values.journal !== undefined && values.journal.length > 0)
    selections.push({ journalIds: values.journal });
  if (values.ingestion !== undefined) selections.push({ ingestionId: values.ingestion });
  if (values['origin-journal'] !== undefined) selections.push({ originJournalId: values['origin-journal'] });
  const range = [values['accounting-config'], values.from, values.to];
  if (range.some((v) => v !== undefined)) {
    if (range.some((v) => v === undefined))
      throw usageError('--accounting-config, --from and --to go together (a core-date range, both included)');
    selections.push({ accountingConfig: values['accounting-config'], from: values.from, to: values.to });
  }
  if (selections.length !== 1)
    throw usageError(
      `name exactly one selection: --journal ID (repeatable), --ingestion ID, --origin-journal ID, or --accounting-config NAME --from D --to D\n${JOURNALS_REVERSE_USAGE}`,
    );
  return selections[0] as Record<string, unknown>;
}

/**
 * `journals reverse SELECTION --reason TEXT [--posting-date D] [--dry-run] [--idempotency-key K]`:
 * withdraws the selected journals with reversal journals (POST /api/v1/reversals), or with
 * `--dry-run` prints what that would do. Without `--idempotency-key` the command makes one, so
 * that its own retries after a lost answer never reverse twice. Journals reversed before are
 * reported, not an error (nothing is recorded then). A refused request (a posting date in a closed
 * or locked period, named with its state and node; a selection that matches nothing) is printed
 * as the service words it. Exit 1 on a refused request, 2 on bad usage.
 */
export async function reverseJournals(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      journal: { type: 'string', multiple: true },
      ingestion: { type: 'string' },
      'origin-journal': { type: 'string' },
      'accounting-config': { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      reason: { type: 'string' },
      'posting-date': { type: 'string' },
      'dry-run': { type: 'boolean' },
      'idempotency-key': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw usageError(JOURNALS_REVERSE_USAGE);
  checkDateOption('from', values.from);
  checkDateOption('to', values.to);
  checkDateOption('posting-date', values['posting-date']);
  const selection = selectionOf(values);
  const reason = values.reason?.trim() ?? '';
  if (reason === '')
    throw usageError(`--reason is required: why the journals are reversed\n${JOURNALS_REVERSE_USAGE}`);
  const body = {
    selection,
    reason,
    ...(values['posting-date'] === undefined ? {} : { postingDate: values['posting-date'] }),
  };
  const client = new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });
  if (values['dry-run'] === true) {
    const dry = await client.json(
      { method: 'POST', path: REVERSALS_PATH, query: { dryRun: 'true' }, json: body, idempotent: true },
      ReversalDryRun,
    );
    io.out(`dry run: ${dry.journals} reversal journals (${dry.lines} lines) would be written`);
    printCounts(io, dry);
    io.out('dry run: nothing was changed');
    return;
  }
  const answer = await client.request({
    method: 'POST',
    path: REVERSALS_PATH,
    json: body,
    idempotencyKey: values['idempotency-key'] ?? randomUUID(),
  });
  if (reportPendingApproval(io, `POST ${REVERSALS_PATH}`, answer)) return;
  const reversal = answerOf(`POST ${REVERSALS_PATH}`, ReversalAnswer, answer.body);
  if (reversal.reversalId === null) {
    io.out('no reversal: 0 reversal journals written, nothing recorded');
    printCounts(io, reversal);
    io.err(
      'nothing new was reversed: the selected journals are reversed already, or are reversal journals themselves',
    );
    return;
  }
  io.out(
    `reversal ${reversal.reversalId}: ${reversal.journals} reversal journals (${reversal.lines} lines) written`,
  );
  printCounts(io, reversal);
  // An answer recorded before requests that reverse nothing stopped being recorded, replayed.
  if (reversal.journals === 0) io.err('nothing new was reversed: the selected journals are reversed already');
}
