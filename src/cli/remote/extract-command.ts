import { open, readFile, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import {
  ExtractConfigurationAnswer,
  ExtractIncrementAnswer,
  ExtractRow,
} from '../../http/api/extract-answers.js';
import { CursorPage } from '../../http/api/schemas.js';
import { headerOf, lineOf } from '../../modules/extracts/encode.js';
import { CliError, checkOutputFile, EXIT_REFUSED, type Io, usageError } from '../output.js';
import { EXTRACT_USAGE } from '../usage.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';

/** Rows per page read; the most the service gives. */
const PAGE_ROWS = 1000;
/** Active configurations read per page when CONFIG is a name. */
const CONFIGURATIONS_PER_PAGE = 200;

/**
 * What a pull has done so far, kept beside the output (`FILE.extract-state`) after every page:
 * the configuration, the columns of a CSV, the cursor of the next page and how many bytes of
 * `FILE.partial` hold the pages before it. A pull started again with the same FILE goes on from
 * there: the service answers the same rows until they are acknowledged.
 */
interface PullState {
  configurationId: number;
  format: 'jsonl' | 'csv';
  columns: string[] | null;
  next: string | null;
  bytes: number;
  rows: number;
}

const PageOfRows = Type.Pick(CursorPage(ExtractRow), ['data', 'next']);

/** The configuration named by CONFIG: an id, or the name of an Active configuration. */
async function configurationOf(client: ApiClient, name: string) {
  if (/^[1-9][0-9]{0,14}$/.test(name))
    return client.json(
      { method: 'GET', path: `/api/v1/extraction-configurations/${name}` },
      ExtractConfigurationAnswer,
    );
  let after: string | undefined;
  const schema = Type.Pick(CursorPage(ExtractConfigurationAnswer), ['data', 'next']);
  for (;;) {
    const page = await client.json(
      {
        method: 'GET',
        path: '/api/v1/extraction-configurations',
        query: { limit: CONFIGURATIONS_PER_PAGE, after },
      },
      schema,
    );
    const found = page.data.find((config) => config.name === name);
    if (found !== undefined) return found;
    if (page.next === null)
      throw new CliError(`no Active extraction configuration named ${name}`, EXIT_REFUSED);
    after = page.next;
  }
}

async function stateOf(file: string): Promise<PullState | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as PullState;
  } catch {
    return undefined;
  }
}

/** `extract pull`, the one subcommand: see {@link pull}. Exit 2 on any other. */
export async function extractCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'pull') throw usageError(EXTRACT_USAGE);
  await pull(rest, io);
}

/**
 * `extract pull CONFIG --output FILE [--ack]`: reads every page of the extract of CONFIG (an id
 * or the name of an Active configuration) into FILE, in the configuration's format. It is
 * resumable: it writes `FILE.partial` and, after every page, `FILE.extract-state`; run again
 * after a failure, it goes on from the last page written (an incremental extract answers the same
 * rows until acknowledged). FILE appears when the extract is complete; with `--ack` the read is
 * then acknowledged (`increment`), so the next pull of an incremental extract starts after it.
 * Exit 1 on a refused request, 2 on bad usage.
 */
async function pull(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...CONNECTION_OPTIONS, output: { type: 'string' }, ack: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  const [name, ...extra] = positionals;
  const output = values.output;
  if (name === undefined || extra.length > 0 || output === undefined || output === '-')
    throw usageError(EXTRACT_USAGE);
  await checkOutputFile(output);
  const client = new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });
  const config = await configurationOf(client, name);
  if (values.ack === true && !config.incremental)
    throw usageError(`--ack is for incremental extracts: configuration ${config.id} is not incremental`);
  const partial = `${output}.partial`;
  const stateFile = `${output}.extract-state`;
  const saved = await stateOf(stateFile);
  if (saved !== undefined && saved.configurationId !== config.id)
    throw usageError(
      `${stateFile} belongs to configuration ${saved.configurationId}: remove it or choose another FILE`,
    );
  const resumed = saved !== undefined;
  const start = await startingState(partial, saved, config);
  const state = await pullPages(client, config.id, partial, stateFile, start);
  await rename(partial, output);
  let acknowledged = '';
  if (values.ack === true) {
    const answer = await client.json(
      { method: 'POST', path: `/api/v1/extraction-configurations/${config.id}/increment` },
      ExtractIncrementAnswer,
    );
    acknowledged = ` (${answer.status})`;
  }
  await rm(stateFile, { force: true });
  io.out(
    `${resumed ? 'resumed and pulled' : 'pulled'} ${state.rows} rows of extract ${config.id} to ${output}${acknowledged}`,
  );
}

/**
 * The state a pull starts from: the saved one, with `FILE.partial` cut back to the pages it
 * counts, or else a new one, with `FILE.partial` made empty.
 */
async function startingState(
  partial: string,
  saved: PullState | undefined,
  config: Static<typeof ExtractConfigurationAnswer>,
): Promise<PullState> {
  if (saved !== undefined) {
    // A page appended after the last saved state is written again from the saved cursor.
    await truncate(partial, saved.bytes);
    return saved;
  }
  await writeFile(partial, '');
  return {
    configurationId: config.id,
    format: config.format,
    columns: config.fields,
    next: null,
    bytes: 0,
    rows: 0,
  };
}

/**
 * Appends every page from the state's cursor to `FILE.partial`, synced, and saves the state in
 * `FILE.extract-state` after each; returns the state after the last page.
 */
async function pullPages(
  client: ApiClient,
  configurationId: number,
  partial: string,
  stateFile: string,
  start: PullState,
): Promise<PullState> {
  let state = start;
  const handle = await open(partial, 'a');
  try {
    for (;;) {
      const page: Static<typeof PageOfRows> = await client.json(
        {
          method: 'GET',
          path: `/api/v1/extraction-configurations/${configurationId}/extractions/paginated`,
          query: { limit: PAGE_ROWS, after: state.next ?? undefined },
        },
        PageOfRows,
      );
      const text = pageText(state, page.data);
      await handle.write(text);
      await handle.sync();
      state = {
        ...state,
        next: page.next,
        bytes: state.bytes + Buffer.byteLength(text),
        rows: state.rows + page.data.length,
      };
      await writeFile(stateFile, JSON.stringify(state));
      if (page.next === null) return state;
    }
  } finally {
    await handle.close();
  }
}

/**
 * The text a page of rows appends, in the state's format: a CSV starts with its header. A CSV
 * without configured fields takes its columns from the first row it reads, into `state`.
 */
function pageText(state: PullState, rows: Static<typeof PageOfRows>['data']): string {
  let text = '';
  if (state.format === 'csv') {
    // Without configured fields, the columns are those of the first row (a source's rows
    // share their fields).
    if (state.columns === null && rows[0] !== undefined) state.columns = Object.keys(rows[0]);
    if (state.bytes === 0 && state.columns !== null) text += headerOf('csv', state.columns);
  }
  for (const row of rows) text += lineOf(state.format, row, state.columns ?? []);
  return text;
}
