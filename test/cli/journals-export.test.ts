import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { PAGE_LIMIT as JOURNALS_PAGE_LIMIT } from '../../src/cli/remote/paging.js';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { captureIo } from './helpers.js';

/** A journal as the journals endpoint gives it, with two balanced lines. */
function journal(n: number): Record<string, unknown> {
  const journalId = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const amount = `${n}.10`;
  const line = (account: string, signed: string) => ({
    journalId,
    coreDate: '2026-11-20',
    account,
    transactionAmount: signed,
    transactionCurrency: 'EUR',
    branch: 'AMS',
    drCr: signed.startsWith('-') ? 'CR' : 'DR',
  });
  return {
    journalId,
    status: n % 2 === 0 ? 'posted' : 'unposted',
    coreDate: '2026-11-20',
    journalType: 'PERMANENT',
    accountingConfig: 'IFRS',
    ingestionId: 'in_1',
    reverses: null,
    reversedBy: null,
    lines: [line('1100 Loans', amount), line('2000 Deposits', `-${amount}`)],
  };
}

/**
 * The end-to-end export against the real journals endpoint belongs with the accounting tests;
 * this fake service checks the paging, the query and the files of the command itself.
 */
describe('ledgerflow journals export', () => {
  const total = JOURNALS_PAGE_LIMIT + 5;
  const queries: URLSearchParams[] = [];
  let server: Server;
  let connection: string[];
  let dir: string;
  let broken = false;
  beforeAll(async () => {
    server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://x');
      const send = (status: number, body: unknown) => {
        response.writeHead(status, {
          'content-type': status >= 400 ? 'application/problem+json' : 'application/json',
        });
        response.end(JSON.stringify(body));
      };
      if (url.pathname === '/auth/token')
        return send(200, {
          access_token: 'a',
          token_type: 'Bearer',
          expires_in: 300,
          refresh_token: 'r',
          refresh_expires_in: 1800,
        });
      if (url.pathname === '/api/v1/configuration/bulk') return send(200, realisticConfiguration());
      if (url.pathname === '/api/v1/journals') {
        // A cursor service: the cursor is the position of the next journal (opaque to the CLI).
        queries.push(url.searchParams);
        const after = url.searchParams.get('after');
        const from = after === null ? 0 : Number(Buffer.from(after, 'base64url').toString());
        const limit = Number(url.searchParams.get('limit'));
        if (broken && after !== null)
          return send(500, { title: 'Internal error', status: 500, detail: 'boom' });
        const all = Array.from({ length: total }, (_, n) => journal(n));
        const next = from + limit < total ? Buffer.from(String(from + limit)).toString('base64url') : null;
        return send(200, { data: all.slice(from, from + limit), limit, next });
      }
      return send(404, { title: 'Not found', status: 404 });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    connection = ['--url', `http://127.0.0.1:${port}`, '--client-id', 'c', '--client-secret', 's'];
    dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-export-'));
  });
  afterAll(async () => {
    server?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const run = async (...argv: string[]) => {
    const io = captureIo();
    return { status: await runCli(argv, io), io };
  };

  it('pages through every journal and writes one JSON line each to standard output', async () => {
    queries.length = 0;
    const { status, io } = await run('journals', 'export', '--format', 'jsonl', ...connection);
    expect(status, io.stderr()).toBe(EXIT_OK);
    expect(io.lines.out).toHaveLength(total);
    expect(JSON.parse(io.lines.out[total - 1] ?? '')).toEqual(journal(total - 1));
    // Walked by `next`: the first page from the start, the second after the cursor of the first.
    expect(queries.map((query) => [query.get('after'), query.get('page'), query.get('limit')])).toEqual([
      [null, null, String(JOURNALS_PAGE_LIMIT)],
      [Buffer.from(String(JOURNALS_PAGE_LIMIT)).toString('base64url'), null, String(JOURNALS_PAGE_LIMIT)],
    ]);
    expect(io.stderr()).toBe(`exported ${total} journals (${2 * total} lines) as jsonl`);
  });

  it('passes --status and --accounting-config on and writes CSV to --output', async () => {
    queries.length = 0;
    const file = join(dir, 'journals.csv');
    const { status, io } = await run(
      'journals',
      'export',
      '--format',
      'csv',
      '--output',
      file,
      '--status',
      'posted',
      '--accounting-config',
      'IFRS',
      ...connection,
    );
    expect(status, io.stderr()).toBe(EXIT_OK);
    expect(queries[0]?.get('status')).toBe('posted');
    expect(queries[0]?.get('accountingConfig')).toBe('IFRS');
    const rows = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(
      rows[0]?.startsWith(
        'journalId,status,coreDate,journalType,accountingConfig,ingestionId,reverses,reversedBy,',
      ),
    ).toBe(true);
    expect(rows).toHaveLength(1 + 2 * total);
    expect(io.stdout()).toBe(`exported ${total} journals (${2 * total} lines) as csv to ${file}`);
  });

  it('writes a ledger file', async () => {
    const file = join(dir, 'journals.ledger');
    const { status } = await run('journals', 'export', '--format', 'ledger', '--output', file, ...connection);
    expect(status).toBe(EXIT_OK);
    const text = readFileSync(file, 'utf8');
    expect(
      text.startsWith(
        '2026-11-20 * PERMANENT 00000000-0000-4000-8000-000000000000\n    ; accountingConfig:IFRS, status:posted, ingestionId:in_1\n    IFRS:1100 Loans  0.10 EUR\n    IFRS:2000 Deposits  -0.10 EUR\n\n',
      ),
    ).toBe(true);
  });

  it('leaves no file behind when a page is refused', async () => {
    broken = true;
    try {
      const file = join(dir, 'failed.jsonl');
      const { status, io } = await run(
        'journals',
        'export',
        '--format',
        'jsonl',
        '--output',
        file,
        ...connection,
      );
      expect(status).toBe(EXIT_REFUSED);
      expect(io.stderr()).toContain('GET /api/v1/journals: 500 Internal error: boom');
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.partial`)).toBe(false);
    } finally {
      broken = false;
    }
  }, 60_000);

  it('is a usage error without a known --format or --status', async () => {
    expect((await run('journals', 'export', ...connection)).status).toBe(EXIT_USAGE);
    expect((await run('journals', 'export', '--format', 'xml', ...connection)).status).toBe(EXIT_USAGE);
    expect(
      (await run('journals', 'export', '--format', 'csv', '--status', 'draft', ...connection)).status,
    ).toBe(EXIT_USAGE);
    expect((await run('journals', 'list', ...connection)).status).toBe(EXIT_USAGE);
  });
});
