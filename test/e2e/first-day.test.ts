import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROCESSING_ERRORS_USAGE } from '../../src/cli/usage.js';
import { eventually, type ServerProcess, startServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';

/** The built command, as `npx ledgerflow` runs it (`npm test` builds first). */
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../docs/examples/', import.meta.url));
const PAGE = readFileSync(fileURLToPath(new URL('../../docs/first-day.md', import.meta.url)), 'utf8');
const hasHledger = spawnSync('hledger', ['--version']).status === 0;

/** Where the page says the service listens: the default port, where the test's service has its own. */
const PAGE_URL = 'http://127.0.0.1:8080';
const DAY_MS = 86_400_000;
/** The counts the page writes out in words. */
const WORDS: Readonly<Record<number, string>> = { 3: 'three', 40: 'forty' };

/** A fenced block of the page: its language (`''` for an answer) and its lines. */
interface Block {
  language: string;
  lines: string[];
}

function blocksOf(page: string): Block[] {
  const blocks: Block[] = [];
  for (const match of page.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    blocks.push({ language: match[1] ?? '', lines: (match[2] ?? '').replace(/\n$/, '').split('\n') });
  }
  return blocks;
}

/**
 * A command the page shows in a `sh` block (lines continued with `\` read as one), and the
 * answer block right after that block, which belongs to the block's last command.
 */
interface Shown {
  command: string;
  answer: Block | undefined;
}

function commandsOf(blocks: readonly Block[]): Shown[] {
  const shown: Shown[] = [];
  blocks.forEach((block, i) => {
    if (block.language !== 'sh') return;
    const commands = block.lines
      .join('\n')
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    const next = blocks[i + 1];
    const answer = next?.language === '' ? next : undefined;
    commands.forEach((command, j) => {
      shown.push({ command, answer: j === commands.length - 1 ? answer : undefined });
    });
  });
  return shown;
}

/** The one command of the page that matches `pattern`. */
function shownIn(commands: readonly Shown[], pattern: RegExp): Shown {
  const found = commands.filter((c) => pattern.test(c.command));
  if (found.length !== 1 || found[0] === undefined)
    throw new Error(`docs/first-day.md shows ${found.length} commands like ${pattern}, not one`);
  return found[0];
}

/**
 * Ids the page shows elided: `in_92f8…` stands for one session all along the page, bound to the
 * real id where an answer first shows it. Any other `…` stands for any text of its line, and a
 * line that is only `…` for any number of lines.
 */
type Ids = ReadonlyMap<string, string>;
const ELIDED_ID = /([a-z]+)_[0-9a-f]{2,}…/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The ids bound after `line` matched the page's `pattern`, or undefined when it does not match. */
function lineMatch(pattern: string, line: string, ids: Ids): Ids | undefined {
  const captured: string[] = [];
  let source = '';
  let last = 0;
  for (const match of pattern.matchAll(ELIDED_ID)) {
    source += escapeRegExp(pattern.slice(last, match.index)).replaceAll('…', '.*');
    const bound = ids.get(match[0]);
    if (bound === undefined) {
      captured.push(match[0]);
      source += `(${match[1]}_[0-9A-Za-z_-]+)`;
    } else source += escapeRegExp(bound);
    last = match.index + match[0].length;
  }
  source += escapeRegExp(pattern.slice(last)).replaceAll('…', '.*');
  const found = new RegExp(`^${source}$`).exec(line);
  if (found === null) return undefined;
  const next = new Map(ids);
  for (const [i, placeholder] of captured.entries()) {
    const id = found[i + 1] ?? '';
    const earlier = next.get(placeholder);
    if (earlier !== undefined && earlier !== id) return undefined;
    // Two elided ids of the page are two ids of the product.
    if ([...next].some(([other, value]) => other !== placeholder && value === id)) return undefined;
    next.set(placeholder, id);
  }
  return next;
}

function linesMatch(patterns: readonly string[], lines: readonly string[], ids: Ids): Ids | undefined {
  const [pattern, ...patternsLeft] = patterns;
  if (pattern === undefined) return lines.length === 0 ? ids : undefined;
  if (pattern.trim() === '…') {
    for (let skipped = 0; skipped <= lines.length; skipped += 1) {
      const matched = linesMatch(patternsLeft, lines.slice(skipped), ids);
      if (matched !== undefined) return matched;
    }
    return undefined;
  }
  const [line, ...linesLeft] = lines;
  if (line === undefined) return undefined;
  const bound = lineMatch(pattern, line, ids);
  return bound === undefined ? undefined : linesMatch(patternsLeft, linesLeft, bound);
}

/**
 * Issue "A user's first day": the walk of docs/first-day.md, step by step, with the built
 * service and the built command, on the example files the guide uses, run from a folder where
 * they are where the page says. The commands run are the page's own: each must be shown on the
 * page, and every answer block of the page must be what the product answers to the command
 * before it, figure by figure (an elided id, a `…` or a line of `…` stand for what a reader's
 * run answers differently); every figure of the prose is checked against the answers too
 * (`pageSays`). A failure here means the guide no longer shows what a new user sees.
 */
describe('the first day of docs/first-day.md', () => {
  const blocks = blocksOf(PAGE);
  const commands = commandsOf(blocks);
  const answersChecked = new Set<Block>();
  /** How the page starts the service for the walk: with the business date pinned. */
  const START = shownIn(commands, /^BUSINESS_DATE=\S+ npm start$/);
  let ids: Ids = new Map();
  let databaseUrl: string;
  let server: ServerProcess;
  let work: string;
  let env: Record<string, string>;

  /** The command as the page shows it; fails when the page does not show it. */
  function shown(command: string): Shown {
    const found = commands.find((c) => c.command === command);
    if (found === undefined) throw new Error(`docs/first-day.md does not show the command: ${command}`);
    return found;
  }

  /** Checks that `actual` is the answer the page shows after `command`, binding the ids it elides. */
  function expectShownAnswer(
    command: string,
    actual: string,
    page: (line: string) => string = (l) => l,
  ): void {
    const answer = shown(command).answer;
    if (answer === undefined) throw new Error(`docs/first-day.md shows no answer to: ${command}`);
    answersChecked.add(answer);
    const patterns = answer.lines.map((line) => page(line).trimEnd());
    const lines = actual
      .replace(/\n$/, '')
      .split('\n')
      .map((line) => line.trimEnd());
    const matched = linesMatch(patterns, lines, ids);
    if (matched === undefined) {
      // The diff of the two texts shows the first line where they part.
      expect(lines.join('\n'), `the answer to "${command}" is not what docs/first-day.md shows`).toBe(
        patterns.join('\n'),
      );
    } else ids = matched;
  }

  /** The prose of the page, its lines joined, says `phrase`. */
  function pageSays(phrase: string): void {
    expect(PAGE.replace(/\s+/g, ' ').includes(phrase), `docs/first-day.md should say: ${phrase}`).toBe(true);
  }

  /** Runs `ledgerflow ARGS` as a user would; returns its exit status and outputs. */
  function ledgerflow(...args: string[]): { status: number | null; stdout: string; stderr: string } {
    const result = spawnSync(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      cwd: work,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  /**
   * Runs a `npx ledgerflow …` command the page shows, its elided ids replaced by the real ones,
   * and checks its standard output against the answer the page shows after it, if any.
   */
  function run(command: string): { status: number | null; stdout: string; stderr: string } {
    const page = shown(command);
    const prefix = 'npx ledgerflow ';
    if (!command.startsWith(prefix)) throw new Error(`not a ledgerflow command: ${command}`);
    const real = command.slice(prefix.length).replace(ELIDED_ID, (placeholder) => {
      const id = ids.get(placeholder);
      if (id === undefined) throw new Error(`${placeholder} is used before an answer shows it`);
      return id;
    });
    const result = ledgerflow(...real.split(/\s+/));
    if (page.answer !== undefined) expectShownAnswer(command, result.stdout);
    return result;
  }

  /** The counters of a session as the command prints them. */
  function counters(output: string): Record<'chunks' | 'totalRows' | 'successRows' | 'failedRows', number> {
    const counter = (name: string) => Number(new RegExp(`^ {2}${name} +(\\d+)$`, 'm').exec(output)?.[1]);
    return {
      chunks: counter('chunks'),
      totalRows: counter('totalRows'),
      successRows: counter('successRows'),
      failedRows: counter('failedRows'),
    };
  }

  /** The IFRS balance of an account of LF_NL in Amsterdam, as `balances` prints it. */
  function amsterdamBalance(output: string, account: string): string {
    const row = new RegExp(`^IFRS +branch=AMS,legalEntity=LF_NL +${account} +EUR +(\\S+)$`, 'm').exec(output);
    return row?.[1] ?? '';
  }

  const ndjsonRows = (file: string) =>
    readFileSync(join(EXAMPLES, file), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ledgerflow-first-day-'));
    // The page's paths are relative to the project's folder.
    mkdirSync(join(work, 'docs'));
    symlinkSync(EXAMPLES, join(work, 'docs', 'examples'));
    const businessDate = /^BUSINESS_DATE=(\S+) npm start$/.exec(START.command)?.[1];
    if (businessDate === undefined) throw new Error('docs/first-day.md pins no business date');
    databaseUrl = await createTestDatabaseUrl({ file: true });
    server = await startServer({ DATABASE_URL: databaseUrl, BUSINESS_DATE: businessDate });
    env = { DATABASE_URL: databaseUrl, LEDGERFLOW_URL: server.url };
  });

  afterAll(async () => {
    await server?.stop();
    if (databaseUrl !== undefined) await dropTestDatabase(databaseUrl);
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it('goes from a fresh start to books checked by hledger, answering what the page shows', async () => {
    // 1. The start lines (between the log's JSON lines) say where the service listens and how
    // to get a first token; the page shows the default port and the default store.
    const started = server
      .output()
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('{'))
      .join('\n')
      .replaceAll(server.url, PAGE_URL);
    expectShownAnswer(START.command, started, (line) =>
      line.replace('(storage: sqlite)', `(storage: ${TEST_DIALECT})`),
    );

    // 2. A credential for the first administrator, then a token.
    const created = run('npx ledgerflow credentials create --owner admin@localhost');
    expect(created.status, created.stderr).toBe(0);
    const clientId = /client_id:\s+(\S+)/.exec(created.stdout)?.[1] ?? '';
    const clientSecret = /client_secret:\s+(\S+)/.exec(created.stdout)?.[1] ?? '';
    const expires = /expires:\s+(\S+)/.exec(created.stdout)?.[1] ?? '';
    pageSays(
      `the credential expires ${Math.round((Date.parse(expires) - Date.now()) / DAY_MS)} days after it was made`,
    );
    env = { ...env, LEDGERFLOW_CLIENT_ID: clientId, LEDGERFLOW_CLIENT_SECRET: clientSecret };
    const token = await fetch(`${server.url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      }),
    });
    expect(token.status).toBe(200);
    const { access_token: accessToken } = (await token.json()) as { access_token: string };

    // 3. The configuration: a dry run, then the upload; a faulty document named by its path.
    const dryRun = run('npx ledgerflow config push docs/examples/configuration.json --dry-run');
    expect(dryRun.status, dryRun.stderr).toBe(0);
    const pushed = run('npx ledgerflow config push docs/examples/configuration.json');
    expect(pushed.status, pushed.stderr).toBe(0);
    const faulty = JSON.parse(readFileSync(join(EXAMPLES, 'configuration.json'), 'utf8')) as {
      configuration: { postingComponents: Record<string, unknown>[] };
    };
    const component = faulty.configuration.postingComponents[3];
    if (component === undefined) throw new Error('the example has fewer than 4 posting components');
    component.journalType = 'PERMANENT';
    writeFileSync(join(work, 'faulty.json'), JSON.stringify(faulty));
    const refused = ledgerflow('config', 'push', 'faulty.json', '--dry-run');
    expect(refused.status).toBe(1);
    const fault = refused.stderr
      .split('\n')
      .find((line) => line.startsWith('/configuration/postingComponents/3/'));
    pageSays(`\`${fault}\``);

    // 4. A file with three bad rows: refused whole, located by line, with the way to finish it.
    const rows = ndjsonRows('business-events.ndjson');
    const first = run(
      'npx ledgerflow ingest docs/examples/business-events.ndjson --namespace ledger --entity businessEvent',
    );
    expect(first.status).toBe(1);
    const failedLines = first.stdout.match(/^ {2}line \d+: /gm) ?? [];
    const notStored = Number(/^(\d+) valid records were not stored/m.exec(first.stdout)?.[1]);
    expect(notStored + failedLines.length).toBe(rows.length);
    pageSays(`${WORDS[rows.length]} loan business events, ${WORDS[failedLines.length]} of them wrong`);
    pageSays(`so the ${notStored} good records went back with the ${failedLines.length} bad ones`);
    expect(counters(first.stdout)).toEqual({ chunks: 0, totalRows: 0, successRows: 0, failedRows: 0 });
    pageSays('and the command ends with exit status 1');

    // ... the valid rows kept, the session left open for the corrections ...
    const partial = run(
      'npx ledgerflow ingest docs/examples/business-events.ndjson --partial --session in_92f8… --keep-open',
    );
    expect(partial.status).toBe(1);
    const kept = counters(partial.stdout);
    for (const line of failedLines) expect(partial.stdout).toContain(line);
    pageSays(
      `The ${kept.successRows} good records are stored; the ${kept.failedRows} bad ones are listed again (the lines left out above) and counted as failed, and the exit status is 1 again.`,
    );
    // ... and the corrected rows complete it.
    const corrections = ndjsonRows('business-events-corrections.ndjson');
    pageSays(`Send the ${WORDS[corrections.length]} corrected rows to the same session`);
    const completed = run(
      'npx ledgerflow ingest docs/examples/business-events-corrections.ndjson --session in_92f8…',
    );
    expect(completed.status, completed.stdout + completed.stderr).toBe(0);
    const final = counters(completed.stdout);
    expect(final.successRows).toBe(kept.successRows + corrections.length);
    pageSays(
      `Every row of the file is stored once (\`successRows ${final.successRows}\`: ${kept.successRows} from the file, ${corrections.length} corrected), in the ${final.chunks} chunks stored; the ${final.failedRows} rows that failed stay counted (\`failedRows ${final.failedRows}\`)`,
    );

    const ingestionId = ids.get('in_92f8…') ?? '';
    await eventually(
      async () => {
        const shownSession = ledgerflow('ingestions', 'show', ingestionId);
        return /processing\s+completed/.test(shownSession.stdout) ? true : undefined;
      },
      30_000,
      250,
    );
    const session = run('npx ledgerflow ingestions show in_92f8…');
    expect(session.status, session.stderr).toBe(0);
    pageSays('It shows `processing completed_with_errors` once processing is done');
    // The chunks are numbered as they arrived, the refused one first; the session lists the
    // failed records of the chunk it stored, and the refused chunk's under its own number.
    const errorsOf = async (chunkSeq: number) => {
      const answer = await fetch(
        `${server.url}/api/v1/ingestions/${ingestionId}/errors?chunkSeq=${chunkSeq}`,
        {
          headers: { authorization: `Bearer ${accessToken}` },
        },
      );
      expect(answer.status).toBe(200);
      return ((await answer.json()) as { data: { chunkSeq: number; index: number }[] }).data;
    };
    const refusedChunk = await errorsOf(1);
    const storedChunk = await errorsOf(2);
    expect(refusedChunk.map((e) => e.index)).toEqual(storedChunk.map((e) => e.index));
    expect(session.stdout).not.toMatch(/^ {2}chunk 1,/m);
    expect(session.stdout.match(/^ {2}chunk 2, /gm)).toHaveLength(storedChunk.length);
    pageSays('chunk 1 was the one refused whole, and chunk 2 the one the second run stored');

    // Nothing failed processing.
    const errors = run('npx ledgerflow processing-errors --ingestion in_92f8…');
    expect(errors.status).toBe(0);
    expect(errors.stdout.trim()).toBe('');
    pageSays(`for the example files there are none (\`${errors.stderr.trim()}\`)`);
    pageSays(`It lists the first ${/\(default (\d+)\)/.exec(PROCESSING_ERRORS_USAGE)?.[1]} (`);

    // 5. Balances.
    const balances = run('npx ledgerflow balances --accounting-config IFRS');
    expect(balances.status, balances.stderr).toBe(0);

    // 6. The books, exported and checked by hledger: every transaction balances (hledger
    // refuses the file otherwise), and accounting configurations and nodes stay apart.
    const exported = run('npx ledgerflow journals export --format ledger --output books.ledger');
    expect(exported.status, exported.stderr).toBe(0);
    if (hasHledger) {
      const balance = execFileSync('hledger', ['-f', 'books.ledger', 'balance', '--cleared'], {
        cwd: work,
        encoding: 'utf8',
      });
      expectShownAnswer('hledger -f books.ledger balance --cleared', balance);
    }

    // 7. A posted event corrected: rolled back, then posted again with the right amount.
    const original = rows.find((row) => row.eventType === 'LOAN_DISBURSEMENT');
    const [rollback] = ndjsonRows('correction-rollback.ndjson');
    const [post] = ndjsonRows('correction-post.ndjson');
    expect(rollback).toEqual(original);
    expect({ ...post, amount: original?.amount }).toEqual(original);
    pageSays(`The first disbursement of the file was ${post?.amount}, not ${original?.amount}.`);
    const corrected = run(
      'npx ledgerflow correct --rollback docs/examples/correction-rollback.ndjson --post docs/examples/correction-post.ndjson',
    );
    expect(corrected.status, corrected.stdout + corrected.stderr).toBe(0);
    const after = ledgerflow('balances', '--accounting-config', 'IFRS');
    expect(after.status, after.stderr).toBe(0);
    expect(
      Number(amsterdamBalance(after.stdout, '1300')) - Number(amsterdamBalance(balances.stdout, '1300')),
    ).toBe(Number(post?.amount) - Number(original?.amount));
    pageSays(
      `now shows \`${amsterdamBalance(after.stdout, '1300')}\` on account 1300 and \`${amsterdamBalance(after.stdout, '2100')}\` on account 2100 for \`branch=AMS,legalEntity=LF_NL\``,
    );
    const journals = await fetch(`${server.url}/api/v1/journals?ingestionId=${ingestionId}&limit=1000`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(journals.status).toBe(200);
    const listed = (await journals.json()) as {
      data: {
        journalId: string;
        accountingConfig: string;
        reverses: string | null;
        withdrawnBy: string | null;
      }[];
      totalPages: number;
    };
    expect(listed.totalPages).toBe(1);
    // The journals the rollback withdrew, each with the reversal that withdrew it.
    const withdrawn = listed.data.filter((j) => j.withdrawnBy !== null);
    const reversals = listed.data.filter((r) => withdrawn.some((j) => j.withdrawnBy === r.journalId));
    expect(reversals.map((r) => r.reverses).sort()).toEqual(withdrawn.map((j) => j.journalId).sort());
    expect(new Set(withdrawn.map((j) => j.accountingConfig))).toEqual(new Set(['IFRS', 'LOCAL_GAAP']));
    pageSays(
      `hold the ${withdrawn.length} original journals of the event, one per accounting configuration, each with its reversal`,
    );

    // Every answer the page shows was compared with the product's (hledger's only where it is
    // installed).
    const hledgerAnswer = shown('hledger -f books.ledger balance --cleared').answer;
    const unchecked = blocks.filter(
      (block) =>
        block.language === '' && !answersChecked.has(block) && (hasHledger || block !== hledgerAnswer),
    );
    expect(unchecked.map((block) => block.lines.join('\n'))).toEqual([]);
  });
});
