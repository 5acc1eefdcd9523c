import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { AuditEntry } from '../modules/audit/entry.js';
import { auditEntryOfLine, auditExportLine } from '../modules/audit/export-lines.js';
import { type ChainReport, verifyChain } from '../modules/audit/verify.js';
import { CliError, checkOutputFile, EXIT_REFUSED, type Io, isStandardOutput, usageError } from './output.js';
import { fileSink, outputSink, ReaderGone, type Sink } from './remote/journals-command.js';
import { withServices } from './store-commands.js';
import { AUDIT_USAGE } from './usage.js';

/** The lines of a file, numbered from 1, read as a stream (an export can be large). */
async function* linesOf(file: string): AsyncGenerator<{ number: number; text: string }> {
  const input = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  for await (const text of lines) {
    number += 1;
    if (text.trim() !== '') yield { number, text };
  }
}

/** The entries of an export file; a line that is no entry is reported as changed, naming it. */
async function* entriesOf(file: string): AsyncGenerator<AuditEntry> {
  for await (const { number, text } of linesOf(file)) {
    const entry = auditEntryOfLine(text);
    if (typeof entry === 'string') {
      throw new CliError(`audit chain broken: line ${number} of ${file} was changed: ${entry}`, EXIT_REFUSED);
    }
    yield entry;
  }
}

/**
 * Verifies an export file on its own: a first pass notes every position it holds (to tell an
 * entry moved from one deleted), the second walks the chain. A file that begins past position 1
 * (an export `--after-seq`) verifies from its first entry.
 */
async function verifyFile(file: string): Promise<ChainReport> {
  const positions = new Set<number>();
  try {
    for await (const entry of entriesOf(file)) positions.add(entry.seq);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw usageError(`no file ${file}`);
    throw error;
  }
  return verifyChain(entriesOf(file), { start: 'first-entry', hasSeq: async (seq) => positions.has(seq) });
}

/** Prints a report; a broken chain is a CliError (exit 1) naming the first bad entry. */
function printReport(io: Io, where: string, report: ChainReport): void {
  if (report.fault !== undefined) {
    const { problem, seq, id, message } = report.fault;
    const row = id === null ? '' : ` (row id ${id})`;
    throw new CliError(
      `audit chain broken in ${where}: ${message}${row} [${problem} at ${seq}]`,
      EXIT_REFUSED,
    );
  }
  io.out(`audit chain ok in ${where}: ${report.entries} entries, last ${report.lastSeq} ${report.lastHash}`);
}

async function exportEntries(io: Io, afterSeq: number, output: string | undefined): Promise<void> {
  const toStdout = isStandardOutput(output);
  if (!toStdout && output !== undefined) await checkOutputFile(output);
  const sink: Sink = toStdout || output === undefined ? outputSink(io) : fileSink(output);
  let written = 0;
  try {
    await withServices(io, false, async (services) => {
      for await (const entry of services.audit.entries(afterSeq)) {
        await sink.write(auditExportLine(entry).trimEnd());
        written += 1;
      }
    });
    await sink.commit();
  } catch (error) {
    await sink.discard();
    if (error instanceof ReaderGone) return;
    throw error;
  }
  io.err(`exported ${written} audit entries`);
}

/**
 * `audit verify [--file FILE]` and `audit export [--after-seq N] [--output FILE]`, directly on
 * the store of DATABASE_URL (which must exist), as `users` and `credentials` are: they read the
 * stored rows and the chain head themselves, with no service or credential in between. `verify
 * --file` reads only the file. Exit 1 names the first bad entry.
 */
export async function auditCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'verify') {
    const { values } = parseArgs({ args: rest, options: { file: { type: 'string' } }, strict: true });
    if (values.file !== undefined) return printReport(io, values.file, await verifyFile(values.file));
    const report = await withServices(io, false, (services) => services.audit.verify());
    return printReport(io, 'the store', report);
  }
  if (action === 'export') {
    const { values } = parseArgs({
      args: rest,
      options: { 'after-seq': { type: 'string' }, output: { type: 'string' } },
      strict: true,
    });
    const after = values['after-seq'] ?? '0';
    if (!/^\d{1,15}$/.test(after)) throw usageError('--after-seq must be a whole number');
    return exportEntries(io, Number(after), values.output);
  }
  throw usageError(AUDIT_USAGE);
}
