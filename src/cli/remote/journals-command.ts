import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  CliError,
  checkOutputFile,
  EXIT_REFUSED,
  type Io,
  isStandardOutput,
  processIo,
  usageError,
} from '../output.js';
import { JOURNALS_USAGE } from '../usage.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import {
  csvColumnsOf,
  csvHeaderOf,
  type JournalLayout,
  JournalView,
  journalLayoutOf,
  journalToCsv,
  journalToJsonl,
  journalToLedger,
} from './journal-formats.js';

import { reverseJournals } from './journals-reverse.js';
import { pagedItems } from './paging.js';
import { checkDateOption } from './report-commands.js';

/** Where the export goes: a file (written beside and renamed at the end) or standard output. */
export interface Sink {
  write(text: string): Promise<void>;
  commit(): Promise<void>;
  discard(): Promise<void>;
}

export function fileSink(file: string): Sink {
  const partial = `${file}.partial`;
  const stream: WriteStream = createWriteStream(partial, { encoding: 'utf8' });
  // A failed open or write (the folder went away, the disk is full) is kept and thrown by the
  // next write, never left as an unhandled 'error' event.
  let failure: Error | undefined;
  stream.on('error', (error) => {
    failure ??= error;
  });
  const closed = async () => {
    if (stream.closed || stream.destroyed) return;
    stream.end();
    await once(stream, 'close');
  };
  return {
    async write(text) {
      if (failure !== undefined) throw new CliError(`cannot write ${file}: ${failure.message}`, EXIT_REFUSED);
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
export class ReaderGone extends Error {}

export function outputSink(io: Io): Sink {
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
 * The endpoint's date range of `--from` and `--to`, which are the endpoint's `from` and `to`:
 * `--from` is the first core date exported, `--to` the first one left out. Throws a usage error
 * (exit 2) for a value that is not a date YYYY-MM-DD or a range with no day in it.
 */
export function coreDateRangeOf(
  from: string | undefined,
  to: string | undefined,
): { from: string | undefined; to: string | undefined } {
  checkDateOption('from', from);
  checkDateOption('to', to);
  // YYYY-MM-DD dates compare as text in calendar order.
  if (from !== undefined && to !== undefined && to <= from)
    throw usageError(`--to ${to} must be after --from ${from}: --to is the first core date left out`);
  return { from, to };
}

/** `journals export|reverse`: {@link exportJournals}, or `reverseJournals` (journals-reverse.ts). */
export async function journalsCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  switch (action) {
    case 'reverse':
      return reverseJournals(rest, io);
    case 'export':
      return exportJournals(rest, io);
    default:
      throw usageError(JOURNALS_USAGE);
  }
}

/** The formats of `journals export`. */
type ExportFormat = 'csv' | 'jsonl' | 'ledger';

/**
 * `journals export --format csv|jsonl|ledger [--output FILE] [--status posted|unposted]
 * [--accounting-config NAME] [--from DATE] [--to DATE]`: pages through GET /api/v1/journals
 * (core dates from `--from`, included, to `--to`, excluded) and writes one CSV row per journal line,
 * one JSON journal per line, or a ledger/hledger journal file (to standard output without
 * `--output` or with `--output -`). The account, amount and currency line fields are found by their roles in the
 * configuration's journalDefinition. Exit 1 on a refused request or a journal that cannot be
 * written, 2 on bad usage; a failed export leaves no output file behind.
 */
async function exportJournals(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      format: { type: 'string' },
      output: { type: 'string' },
      status: { type: 'string' },
      'accounting-config': { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
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
  const range = coreDateRangeOf(values.from, values.to);
  const output = isStandardOutput(values.output) ? undefined : values.output;
  if (output !== undefined) await checkOutputFile(output);
  const client = new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });
  const writer = await journalWriterOf(client, format);
  const sink = output === undefined ? outputSink(io) : fileSink(output);
  const query = {
    status: values.status,
    accountingConfig: values['accounting-config'],
    from: range.from,
    to: range.to,
  };
  const counts = await writeJournals(client, query, writer, sink);
  // The reader of standard output went away: the export just stops, with nothing more said.
  if (counts === undefined) return;
  const summary = `exported ${counts.journals} journals (${counts.lines} lines) as ${format}`;
  if (output === undefined) io.err(summary);
  else io.out(`${summary} to ${output}`);
}

/** How the journals of an export are written: the text before the first, and each one's. */
interface JournalWriter {
  /** `undefined` when the format has no header. */
  header: string | undefined;
  render(journal: JournalView): string;
}

/**
 * The writer of a format. CSV and ledger read the configuration's journalDefinition for the roles
 * of the line fields; a configuration they cannot be written by is refused (exit 1).
 */
async function journalWriterOf(client: ApiClient, format: ExportFormat): Promise<JournalWriter> {
  if (format === 'jsonl') return { header: undefined, render: journalToJsonl };
  const document = await client.json({ method: 'GET', path: '/api/v1/configuration/bulk' });
  let layout: JournalLayout;
  try {
    layout = journalLayoutOf(document);
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error), EXIT_REFUSED);
  }
  if (format === 'ledger')
    return { header: undefined, render: (journal) => `${journalToLedger(journal, layout)}\n` };
  const csvColumns = csvColumnsOf(layout.fields);
  return { header: csvHeaderOf(csvColumns), render: (journal) => journalToCsv(journal, csvColumns) };
}

/**
 * Writes the header and every journal the query selects to `sink` and commits it; returns the
 * journals and lines written, or `undefined` when the reader of standard output went away. On
 * any failure the sink is discarded and the failure thrown as a CliError (exit 1).
 */
async function writeJournals(
  client: ApiClient,
  query: Record<string, string | undefined>,
  writer: JournalWriter,
  sink: Sink,
): Promise<{ journals: number; lines: number } | undefined> {
  let journals = 0;
  let lines = 0;
  try {
    if (writer.header !== undefined) await sink.write(writer.header);
    // The export is not a snapshot: journals made while it runs may shift later pages. Run it
    // when no ingestion is being processed for an exact copy.
    for await (const journal of pagedItems(client, '/api/v1/journals', JournalView, query)) {
      const text = writer.render(journal);
      journals += 1;
      lines += journal.lines.length;
      // A journal without lines has no CSV row.
      if (text !== '') await sink.write(text);
    }
    await sink.commit();
  } catch (error) {
    await sink.discard();
    if (error instanceof ReaderGone) return undefined;
    if (error instanceof CliError) throw error;
    throw new CliError(error instanceof Error ? error.message : String(error), EXIT_REFUSED);
  }
  return { journals, lines };
}
