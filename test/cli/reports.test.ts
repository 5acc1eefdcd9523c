import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

/** Processing errors made, more than one page of the service. */
const UNKNOWN_EVENTS = 1001;

/**
 * Issue "A user's first day", point 10: a session's state and errors, balances, processing
 * errors and a date range of the journal export from the command line; and point 6: processing
 * error lines have no empty field, `--output -` is standard output, a missing folder is one line.
 */
describe('ledgerflow ingestions, balances, processing-errors, journals export --from/--to', () => {
  let service: RunningService;
  let connection: string[];
  let token: string;
  let ingestionId: string;
  let dir: string;
  beforeAll(async () => {
    service = await startService({ businessDate: '2026-11-20' });
    connection = await service.connectionArgs(['bulk-operator']);
    token = await service.tokenFor(['bulk-operator']);
    dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-reports-'));
    const put = await service.call(token, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode).toBe(200);
    const session = await service.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'ledger', entity: 'businessEvent', ingestionName: 'first day' },
    });
    ingestionId = session.json().ingestionId;
    const data = [
      businessEvent({ amount: '123456789012345.67' }),
      businessEvent({ eventType: 'INTEREST_ACCRUAL', amount: '3.33', effectiveDate: '2026-11-19' }),
      businessEvent({ legalEntity: 'LF_XX' }),
      businessEvent({ amount: 'ten' }),
      ...Array.from({ length: UNKNOWN_EVENTS }, () => businessEvent({ eventType: 'NOT_CONFIGURED' })),
    ];
    const chunk = await service.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}?partial=true`,
      payload: { data },
    });
    expect(chunk.statusCode).toBe(201);
    await service.services.processor.drain();
  });
  afterAll(async () => {
    await service?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const run = async (...argv: string[]) => {
    const io = captureIo();
    return { status: await runCli([...argv, ...connection], io), io };
  };

  it('ingestions show prints the state, counters and first errors, each with its field or none', async () => {
    const { status, io } = await run('ingestions', 'show', ingestionId);
    expect(status, io.stderr()).toBe(EXIT_OK);
    const out = io.lines.out;
    expect(out.slice(0, 4)).toEqual([
      `ingestion ${ingestionId}`,
      '  name         first day',
      '  entity       ledger/businessEvent',
      '  state        pending',
    ]);
    expect(out).toContain(`  totalRows    ${4 + UNKNOWN_EVENTS}`);
    expect(out).toContain('  failedRows   1');
    expect(out).toContain(
      `errors (first 10 of ${2 + UNKNOWN_EVENTS}; ledgerflow ingestions errors ${ingestionId} lists them all):`,
    );
    expect(out).toContainEqual(
      expect.stringMatching(/^ {2}chunk 1, index 3 \(validation\): amount: .+ -- \{/),
    );
    expect(out).toContainEqual(
      expect.stringMatching(
        /^ {2}chunk 1, index 2 \(processing\): no nodes entry .+\(unknown-node\) -- \{"eventType"/,
      ),
    );
    expect(io.stdout()).not.toMatch(/: :/);
  });

  it('ingestions errors lists every failed record, page by page', async () => {
    const { status, io } = await run('ingestions', 'errors', ingestionId);
    expect(status, io.stderr()).toBe(EXIT_OK);
    expect(io.lines.out).toHaveLength(2 + UNKNOWN_EVENTS);
    expect(io.stderr()).toBe(`${2 + UNKNOWN_EVENTS} failed records`);
  });

  it('processing-errors shows 100 by default, says how many more, and counts them by code', async () => {
    const total = 1 + UNKNOWN_EVENTS;
    const byCode = ['by code:', `  unknown-event-type  ${UNKNOWN_EVENTS}`, '  unknown-node        1'];
    const first = await run('processing-errors', '--ingestion', ingestionId);
    expect(first.status, first.io.stderr()).toBe(EXIT_OK);
    expect(first.io.lines.out).toHaveLength(100);
    expect(first.io.lines.out[0]).toMatch(
      new RegExp(`^${ingestionId} ledger/businessEvent unknown-(event-type|node): .+ -- \\{"eventType"`),
    );
    expect(first.io.lines.err).toEqual([
      `${total} processing errors, 100 shown; ${total - 100} more: use --limit N or --all to see them`,
      ...byCode,
    ]);

    const all = await run('processing-errors', '--ingestion', ingestionId, '--all');
    expect(all.io.lines.out).toHaveLength(total);
    expect(all.io.lines.err).toEqual([`${total} processing errors`, ...byCode]);
    const some = await run('processing-errors', '--ingestion', ingestionId, '--limit', '1001');
    expect(some.io.lines.out).toHaveLength(1001);
    expect(some.io.lines.err[0]).toBe(
      `${total} processing errors, 1001 shown; 1 more: use --limit N or --all to see them`,
    );

    const nodes = await run('processing-errors', '--ingestion', ingestionId, '--code', 'unknown-node');
    expect(nodes.io.lines.out).toHaveLength(1);
    expect(nodes.io.lines.out[0]).toContain(' unknown-node: ');
    expect(nodes.io.lines.err).toEqual(['1 processing errors', 'by code:', '  unknown-node  1']);
    const none = await run('processing-errors', '--ingestion', ingestionId, '--code', 'closed-period');
    expect(none.io.lines).toEqual({ out: [], err: ['0 processing errors'] });

    for (const wrong of [
      ['--limit', '0'],
      ['--limit', 'ten'],
      ['--limit', '5', '--all'],
    ]) {
      const refused = await run('processing-errors', ...wrong);
      expect(refused.status).toBe(EXIT_USAGE);
      expect(refused.io.lines.err).toHaveLength(1);
    }
  });

  it('balances prints a table with the exact amounts of the API', async () => {
    const { status, io } = await run('balances', '--accounting-config', 'IFRS');
    expect(status, io.stderr()).toBe(EXIT_OK);
    const api = (
      await service.call(token, { method: 'GET', url: '/api/v1/balances?accountingConfig=IFRS' })
    ).json().data as { account: string; currency: string; balance: string }[];
    expect(api.length).toBeGreaterThan(0);
    const [header, ...rows] = io.lines.out;
    expect(header).toMatch(/^accountingConfig {2}node +account +currency +balance$/);
    expect(rows).toHaveLength(api.length);
    for (const row of api) {
      expect(rows).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^IFRS +branch=AMS,legalEntity=LF_NL +${row.account} +${row.currency} +${row.balance.replace('.', '\\.')}$`,
          ),
        ),
      );
    }
    expect(io.stdout()).toContain('123456789012345.67');
    const none = await run('balances', '--accounting-config', 'IFRS', '--as-of', '2000-01-01');
    expect(none.status).toBe(EXIT_OK);
    expect(none.io.lines.out).toEqual([]);
    for (const date of ['20.11.2026', '2026-02-30']) {
      const refused = await run('balances', '--as-of', date);
      expect(refused.status).toBe(EXIT_USAGE);
      expect(refused.io.lines.err).toEqual([
        `ledgerflow: --as-of must be a date like 2026-11-25 (YYYY-MM-DD), got ${date}`,
      ]);
    }
    // A misspelt option is named with the one meant, not only as unknown.
    const misspelt = await run('balances', '--asof', '2026-11-20');
    expect(misspelt.status).toBe(EXIT_USAGE);
    expect(misspelt.io.lines.err).toEqual(['ledgerflow: unknown option --asof; did you mean --as-of?']);
    const unknown = await run('balances', '--frobnicate');
    expect(unknown.io.lines.err).toEqual([
      'ledgerflow: unknown option --frobnicate; ledgerflow balances --help lists the options',
    ]);
  });

  it('journals export --from includes its core date and --to excludes its own, as the API; --output - is standard output', async () => {
    const coreDatesOf = (lines: string[]) => new Set(lines.map((line) => JSON.parse(line).coreDate));
    const everything = await run('journals', 'export', '--format', 'jsonl', '--output', '-');
    expect(everything.status, everything.io.stderr()).toBe(EXIT_OK);
    expect(coreDatesOf(everything.io.lines.out)).toEqual(new Set(['2026-11-19', '2026-11-20']));
    expect(existsSync('-')).toBe(false);

    const day = await run(
      'journals',
      'export',
      '--format',
      'jsonl',
      '--from',
      '2026-11-19',
      '--to',
      '2026-11-20',
    );
    expect(day.status, day.io.stderr()).toBe(EXIT_OK);
    expect(coreDatesOf(day.io.lines.out)).toEqual(new Set(['2026-11-19']));
    // The same range as GET /api/v1/journals?from=&to= answers.
    const api = await service.call(token, {
      method: 'GET',
      url: '/api/v1/journals?from=2026-11-19&to=2026-11-20&limit=1000',
    });
    expect(day.io.lines.out).toHaveLength(api.json().totalSize);
    const from = await run('journals', 'export', '--format', 'jsonl', '--from', '2026-11-20');
    expect(coreDatesOf(from.io.lines.out)).toEqual(new Set(['2026-11-20']));
    const empty = await run(
      'journals',
      'export',
      '--format',
      'jsonl',
      '--from',
      '2026-11-20',
      '--to',
      '2026-11-20',
    );
    expect(empty.status).toBe(EXIT_USAGE);
    expect(empty.io.lines.err).toEqual([
      'ledgerflow: --to 2026-11-20 must be after --from 2026-11-20: --to is the first core date left out',
    ]);
    const bad = await run('journals', 'export', '--format', 'jsonl', '--from', '2026-02-30');
    expect(bad.status).toBe(EXIT_USAGE);
    expect(bad.io.lines.err).toEqual([
      'ledgerflow: --from must be a date like 2026-11-25 (YYYY-MM-DD), got 2026-02-30',
    ]);
  });

  it('journals export and config pull to a missing folder: one line, exit 2, nothing asked of the service', async () => {
    const missing = join(dir, 'missing', 'books.csv');
    const exported = await run('journals', 'export', '--format', 'csv', '--output', missing);
    expect(exported.status).toBe(EXIT_USAGE);
    expect(exported.io.lines.err).toEqual([
      `ledgerflow: cannot write ${missing}: the folder ${join(dir, 'missing')} does not exist`,
    ]);
    const pulled = await run('config', 'pull', missing);
    expect(pulled.status).toBe(EXIT_USAGE);
    expect(pulled.io.lines.err).toHaveLength(1);
  });

  it('ingestions close closes an open session; an unknown one is refused with the detail', async () => {
    const closed = await run('ingestions', 'close', ingestionId);
    expect(closed.status, closed.io.stderr()).toBe(EXIT_OK);
    expect(closed.io.stdout()).toBe(`ingestion ${ingestionId} closed`);
    const shown = await run('ingestions', 'show', ingestionId);
    expect(shown.io.stdout()).toContain('  state        closed (manual)');
    const unknown = await run('ingestions', 'show', 'in_00000000000000000000000000000000');
    expect(unknown.status).toBe(EXIT_REFUSED);
    expect(unknown.io.stderr()).toMatch(/404 .+: .*in_00000000000000000000000000000000/);
  });

  it('prints the detail of a 404 for an unknown entity in full', async () => {
    const answer = await service.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'ledger', entity: 'businessEvnt' },
    });
    expect(answer.statusCode).toBe(404);
    const detail = answer.json().detail as string;
    const file = join(dir, 'one.ndjson');
    writeFileSync(file, JSON.stringify(businessEvent()));
    const { status, io } = await run('ingest', file, '--namespace', 'ledger', '--entity', 'businessEvnt');
    expect(status).toBe(EXIT_REFUSED);
    expect(io.stderr()).toContain(`: ${detail}`);
  });
});
