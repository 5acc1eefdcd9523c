import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { CliError, EXIT_REFUSED, type Io, processIo, usageError } from '../output.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import {
  csvColumnsOf,
  csvHeaderOf,
  isJournalView,
  type JournalLayout,
  type JournalView,
  journalLayoutOf,
  journalToCsv,
  journalToJsonl,
  journalToLedger,
} from './journal-formats.js';

/** Journals asked for per page: the most the service gives (contract section 0). */
export const JOURNALS_PAGE_LIMIT = 1000;
/** Pages read at most, a guard against a service whose `totalPages` never ends. */
const JOURNAL_PAGES_MAX = 1_000_000;

const JOURNALS_USAGE =
  'usage: ledgerflow journals export --format csv|jsonl|ledger [--output FILE] [--status posted|unposted] [--accounting-config NAME]';

type ExportFormat = 'csv' | 'jsonl' | 'ledger';

/** Where the export goes: a file (written beside and renamed at the end) or standard output. */
interface Sink {
  write(text: string): Promise<void>;
  commit(): Promise<void>;
  discard(): Promise<void>;
}

function fileSink(file: string): Sink {
  const partial = `${file}.partial`;
  const stream: WriteStream = createWriteStream(partial, { encoding: 'utf8' });
  const closed = async () => {
    if (stream.closed) return;
    stream.end();
    await once(stream, 'close');
  };
  return {
    async write(text) {
      if (!stream.write(`${text}\n`)) await once(stream, 'drain');
    },
    async commit() {
      await closed();
      await rename(partial, file);
    },
    async discard() {
      await closed();
      await rm(partial, { force: true });
    },
  };
}

/** Thrown when the reader of standard output went away (`... | head`): the export just stops. */
class ReaderGone extends Error {}

function outputSink(io: Io): Sink {
  if (io !== processIo) {
    return {
      async write(text) {
        io.out(text);
      },
      async commit() {},
      async discard() {},
    };
  }
  // The process's own standard output: wait for it to drain, so that a slow reader does not
  // make the export pile up in memory, and stop quietly when the reader closes the pipe.
  const stdout = process.stdout;
  let gone = false;
  const onError = (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') gone = true;
  };
  stdout.on('error', onError);
  const done = async () => {
    stdout.off('error', onError);
  };
  return {
    async write(text) {
      if (gone) throw new ReaderGone();
      if (!stdout.write(`${text}\n`)) {
        await once(stdout, 'drain').catch(() => {
          throw new ReaderGone();
        });
      }
    },
    commit: done,
    discard: done,
  };
}

/**
 * `journals export --format csv|jsonl|ledger [--output FILE] [--status posted|unposted]
 * [--accounting-config NAME]` (contract sections 6 and 7): pages through GET /api/v1/journals
 * and writes one CSV row per journal line, one JSON journal per line, or a ledger/hledger
 * journal file. The account, amount and currency line fields are found by their roles in the
 * configuration's journalDefinition. Exit 1 on a refused request or a journal that cannot be
 * written, 2 on bad usage; a failed export leaves no output file behind.
 */
export async function journalsCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'export') throw usageError(JOURNALS_USAGE);
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      ...CONNECTION_OPTIONS,
      format: { type: 'string' },
      output: { type: 'string' },
      status: { type: 'string' },
      'accounting-config': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw usageError(JOURNALS_USAGE);
  const format = values.format;
  if (format !== 'csv' && format !== 'jsonl' && format !== 'ledger')
    throw usageError(`--format must be csv, jsonl or ledger\n${JOURNALS_USAGE}`);
  if (values.status !== undefined && values.status !== 'posted' && values.status !== 'unposted')
    throw usageError('--status must be posted or unposted');
  const client = new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });

  let layout: JournalLayout | undefined;
  let csvColumns: ReturnType<typeof csvColumnsOf> = [];
  if (format !== 'jsonl') {
    const document = await client.json({ method: 'GET', path: '/api/v1/configuration/bulk' });
    try {
      layout = journalLayoutOf(document);
    } catch (error) {
      throw new CliError(error instanceof Error ? error.message : String(error), EXIT_REFUSED);
    }
    csvColumns = csvColumnsOf(layout.fields);
  }
  const render = (journal: JournalView): string =>
    format === 'csv'
      ? journalToCsv(journal, csvColumns)
      : format === 'jsonl' || layout === undefined
        ? journalToJsonl(journal)
        : `${journalToLedger(journal, layout)}\n`;

  const sink = values.output === undefined ? outputSink(io) : fileSink(values.output);
  let journals = 0;
  let lines = 0;
  try {
    if (format === 'csv') await sink.write(csvHeaderOf(csvColumns));
    await exportPages(client, values.status, values['accounting-config'], format, async (journal) => {
      const text = render(journal);
      journals += 1;
      lines += journal.lines.length;
      // A journal without lines has no CSV row.
      if (text !== '') await sink.write(text);
    });
    await sink.commit();
  } catch (error) {
    await sink.discard();
    if (error instanceof ReaderGone) return;
    if (error instanceof CliError) throw error;
    throw new CliError(error instanceof Error ? error.message : String(error), EXIT_REFUSED);
  }
  const summary = `exported ${journals} journals (${lines} lines) as ${format}`;
  if (values.output === undefined) io.err(summary);
  else io.out(`${summary} to ${values.output}`);
}

async function exportPages(
  client: ApiClient,
  status: string | undefined,
  accountingConfig: string | undefined,
  format: ExportFormat,
  each: (journal: JournalView) => Promise<void>,
): Promise<void> {
  // The export is not a snapshot: journals made while it runs may shift later pages. Run it
  // when no ingestion is being processed for an exact copy.
  for (let page = 0; page < JOURNAL_PAGES_MAX; page += 1) {
    const answer = await client.json({
      method: 'GET',
      path: '/api/v1/journals',
      query: { page, limit: JOURNALS_PAGE_LIMIT, status, accountingConfig },
    });
    const data = Array.isArray(answer.data) ? answer.data : [];
    for (const journal of data) {
      if (!isJournalView(journal))
        throw new CliError(
          `GET /api/v1/journals answered a journal this ${format} export cannot read`,
          EXIT_REFUSED,
        );
      await each(journal);
    }
    const totalPages = typeof answer.totalPages === 'number' ? answer.totalPages : 0;
    if (data.length === 0 || page + 1 >= totalPages) return;
  }
}
