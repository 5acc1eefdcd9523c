import { readFile, rename, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type Io, usageError } from '../output.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf, isRecord } from './client.js';

const CONFIG_USAGE = 'usage: ledgerflow config pull FILE | config push FILE | config wipe';
const BULK_PATH = '/api/v1/configuration/bulk';

function parseConfigArgs(
  args: string[],
  files: number,
  io: Io,
): { client: ApiClient; file: string | undefined } {
  const { values, positionals } = parseArgs({
    args,
    options: CONNECTION_OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== files) throw usageError(CONFIG_USAGE);
  return {
    client: new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) }),
    file: positionals[0],
  };
}

async function readDocument(file: string): Promise<unknown> {
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (error) {
    throw usageError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw usageError(`${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * `config pull FILE` (writes the downloaded Configuration Data as pretty JSON; `-` is standard
 * output), `config push FILE` (uploads it; a 400 prints every problem as `path: message`, one
 * per line, exit 1), `config wipe` (deletes the configuration and the processing data).
 * Contract sections 3 and 7. Exit 2 on bad usage or an unreadable file, 1 on a refused request.
 */
export async function configCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'pull') {
    const { client, file } = parseConfigArgs(rest, 1, io);
    if (file === undefined) throw usageError(CONFIG_USAGE);
    const document = await client.json({ method: 'GET', path: BULK_PATH });
    const pretty = `${JSON.stringify(document, null, 2)}\n`;
    if (file === '-') {
      io.out(pretty.trimEnd());
      return;
    }
    // Written beside the target and renamed, so a failed write never leaves half a document.
    const partial = `${file}.partial`;
    await writeFile(partial, pretty, 'utf8');
    await rename(partial, file);
    io.out(`pulled configuration ${String(document.version)} to ${file}`);
    return;
  }
  if (action === 'push') {
    const { client, file } = parseConfigArgs(rest, 1, io);
    if (file === undefined) throw usageError(CONFIG_USAGE);
    const document = await readDocument(file);
    const result = await client.json({ method: 'PUT', path: BULK_PATH, json: document });
    io.out(`pushed configuration ${String(result.version)} from ${file}`);
    if (isRecord(result.sections)) {
      const width = Math.max(...Object.keys(result.sections).map((name) => name.length));
      for (const [name, count] of Object.entries(result.sections))
        io.out(`  ${name.padEnd(width)}  ${count}`);
    }
    return;
  }
  if (action === 'wipe') {
    const { client } = parseConfigArgs(rest, 0, io);
    await client.request({ method: 'DELETE', path: BULK_PATH });
    io.out('configuration wiped, processing data deleted (users and credentials kept)');
    return;
  }
  throw usageError(CONFIG_USAGE);
}
