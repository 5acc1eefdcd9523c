import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { captureIo } from './helpers.js';

type Counts = Record<'ingestions' | 'records' | 'journals' | 'journalLines' | 'processingErrors', number>;

const NOTHING: Counts = { ingestions: 0, records: 0, journals: 0, journalLines: 0, processingErrors: 0 };

/**
 * Issue "A user's first day", point 2: `config push` and `config wipe` show what they would
 * delete, ask on a terminal, need --yes elsewhere, and print what was deleted. A fake service
 * answers the dry runs, so that every path of the command is seen; config.test.ts runs the
 * same commands against the real service.
 */
describe('config push and wipe confirm what they delete', () => {
  let server: Server;
  let connection: string[];
  let dir: string;
  let file: string;
  let processingData: Counts;
  /** What the keep-data dry run answers as `whatIf` (none when undefined). */
  let whatIf: { wouldPost: number; wouldStillFail: Record<string, number>; examples: [] } | undefined;
  const changes: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://x');
      const dryRun = url.searchParams.get('dryRun') === 'true';
      const send = (status: number, body?: unknown) => {
        response.writeHead(status, {
          'content-type': status >= 400 ? 'application/problem+json' : 'application/json',
        });
        response.end(body === undefined ? undefined : JSON.stringify(body));
      };
      let raw = '';
      request.on('data', (piece) => {
        raw += String(piece);
      });
      request.on('end', () => {
        if (url.pathname === '/auth/token')
          return send(200, { access_token: 'a', token_type: 'Bearer', expires_in: 300 });
        if (url.pathname === '/api/v1/configuration/bulk' && request.method === 'PUT') {
          const document = JSON.parse(raw) as { version?: string };
          if (document.version === undefined)
            return send(400, {
              title: 'The configuration is not valid',
              status: 400,
              detail: '1 problem',
              errors: [{ path: '/version', message: 'is required' }],
            });
          const answer = { version: document.version, sections: { entities: 1, nodes: 2 } };
          if (url.searchParams.get('keep') === 'processing-data') {
            if (dryRun)
              return send(200, {
                ...answer,
                wouldDelete: NOTHING,
                keepProcessingData: { possible: true },
                ...(whatIf === undefined ? {} : { whatIf }),
              });
            changes.push(`PUT ${document.version} keeping the data`);
            return send(200, { ...answer, deleted: NOTHING });
          }
          if (dryRun) return send(200, { ...answer, wouldDelete: processingData });
          changes.push(`PUT ${document.version}`);
          const deleted = processingData;
          processingData = NOTHING;
          return send(200, { ...answer, deleted });
        }
        if (url.pathname === '/api/v1/configuration/bulk' && request.method === 'DELETE') {
          if (dryRun) return send(200, { wouldDelete: processingData });
          changes.push('DELETE');
          audit.unshift({ action: 'configuration.delete', deleted: processingData });
          processingData = NOTHING;
          return send(204);
        }
        if (url.pathname === '/api/v1/audit-log')
          return send(200, { data: audit.slice(0, 1), totalPages: 1 });
        return send(404, { title: 'Not found', status: 404 });
      });
    });
    const audit: Record<string, unknown>[] = [];
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    connection = ['--url', `http://127.0.0.1:${port}`, '--client-id', 'c', '--client-secret', 's'];
    dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-confirm-'));
    file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ version: 'v2', configuration: {} }));
  });
  beforeEach(() => {
    processingData = {
      ingestions: 3,
      records: 282398,
      journals: 282398,
      journalLines: 564796,
      processingErrors: 7,
    };
    whatIf = undefined;
    changes.length = 0;
  });
  afterAll(async () => {
    server?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const run = async (answers: string[] | undefined, ...argv: string[]) => {
    const io = captureIo(answers);
    return { status: await runCli([...argv, ...connection], io), io };
  };

  it('off a terminal, push without --yes shows what it would delete and is refused (exit 2)', async () => {
    const { status, io } = await run(undefined, 'config', 'push', file);
    expect(status).toBe(EXIT_USAGE);
    expect(io.lines.out).toEqual([
      `configuration v2 in ${file} is valid`,
      'would delete this processing data:',
      '  ingestions        3',
      '  records           282398',
      '  journals          282398',
      '  journalLines      564796',
      '  processingErrors  7',
    ]);
    expect(io.stderr()).toBe(
      'ledgerflow: standard input is not a terminal, so nothing can be asked: pass --yes to push configuration v2 and delete this processing data (nothing was changed)',
    );
    expect(changes).toEqual([]);
  });

  it('with --yes pushes and prints what was deleted', async () => {
    const { status, io } = await run(undefined, 'config', 'push', file, '--yes');
    expect(status, io.stderr()).toBe(EXIT_OK);
    expect(changes).toEqual(['PUT v2']);
    const out = io.lines.out;
    expect(out.slice(out.indexOf(`pushed configuration v2 from ${file}`))).toEqual([
      `pushed configuration v2 from ${file}`,
      '  entities  1',
      '  nodes     2',
      'deleted:',
      '  ingestions        3',
      '  records           282398',
      '  journals          282398',
      '  journalLines      564796',
      '  processingErrors  7',
    ]);
  });

  it('on a terminal asks first: no changes nothing (exit 1), yes pushes', async () => {
    const declined = await run(['n'], 'config', 'push', file);
    expect(declined.status).toBe(EXIT_REFUSED);
    expect(declined.io.questions).toEqual(['Push configuration v2 and delete this processing data?']);
    expect(declined.io.stderr()).toBe('ledgerflow: nothing was changed');
    expect(changes).toEqual([]);

    const accepted = await run(['yes'], 'config', 'push', file);
    expect(accepted.status, accepted.io.stderr()).toBe(EXIT_OK);
    expect(changes).toEqual(['PUT v2']);
  });

  it('asks nothing when nothing would be deleted', async () => {
    processingData = NOTHING;
    const { status, io } = await run([], 'config', 'push', file);
    expect(status, io.stderr()).toBe(EXIT_OK);
    expect(io.questions).toEqual([]);
    expect(io.stdout()).toContain('would delete no processing data');
    expect(io.stdout()).toContain('deleted no processing data');
    expect(changes).toEqual(['PUT v2']);
  });

  it('--dry-run only validates and shows what would be deleted', async () => {
    const { status, io } = await run(undefined, 'config', 'push', file, '--dry-run');
    expect(status, io.stderr()).toBe(EXIT_OK);
    expect(io.stdout()).toContain('  records           282398');
    expect(io.lines.out.at(-1)).toBe('dry run: nothing was changed');
    expect(changes).toEqual([]);
  });

  it('prints every problem of an invalid document found by the dry run, and pushes nothing', async () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ configuration: {} }));
    const { status, io } = await run(undefined, 'config', 'push', broken, '--yes');
    expect(status).toBe(EXIT_REFUSED);
    expect(io.stderr().split('\n')).toEqual([
      'ledgerflow: PUT /api/v1/configuration/bulk: 400 The configuration is not valid: 1 problem',
      '/version: is required',
    ]);
    expect(changes).toEqual([]);
  });

  it('push --keep-data prints the what-if of its dry run, each heading only with lines under it', async () => {
    const printed = async (answer: typeof whatIf, ...flags: string[]) => {
      whatIf = answer;
      const { status, io } = await run(undefined, 'config', 'push', file, '--keep-data', ...flags);
      expect(status, io.stderr()).toBe(EXIT_OK);
      return io.lines.out;
    };
    const valid = `configuration v2 in ${file} is valid and keeps the processing data`;
    const pushed = `pushed configuration v2 from ${file}; the processing data was kept`;
    const sections = ['  entities  1', '  nodes     2'];

    // No record failed processing, or the service cannot tell: nothing to say about them.
    expect(await printed({ wouldPost: 0, wouldStillFail: {}, examples: [] })).toEqual([
      valid,
      pushed,
      ...sections,
    ]);
    expect(await printed(undefined)).toEqual([valid, pushed, ...sections]);
    // Every failed record would post: no "still failing" heading with nothing under it.
    expect(await printed({ wouldPost: 4, wouldStillFail: {}, examples: [] }, '--dry-run')).toEqual([
      valid,
      'of the records that failed processing, all 4 would post',
      ...sections,
      'dry run: nothing was changed',
    ]);
    expect(await printed({ wouldPost: 4, wouldStillFail: { 'no-account': 0 }, examples: [] })).toEqual([
      valid,
      'of the records that failed processing, all 4 would post',
      pushed,
      ...sections,
    ]);
    // Some would still fail: the heading, then each code with its count.
    expect(
      await printed({ wouldPost: 1, wouldStillFail: { 'no-account': 2, 'script-timeout': 1 }, examples: [] }),
    ).toEqual([
      valid,
      'of the records that failed processing, 1 would post; still failing:',
      '  no-account      2',
      '  script-timeout  1',
      pushed,
      ...sections,
    ]);
    expect(await printed({ wouldPost: 0, wouldStillFail: { 'no-account': 3 }, examples: [] })).toEqual([
      valid,
      'of the records that failed processing, none would post; still failing:',
      '  no-account  3',
      pushed,
      ...sections,
    ]);
    // Nothing was deleted, so nothing was asked.
    expect(changes).toEqual(Array.from({ length: 5 }, () => 'PUT v2 keeping the data'));
  });

  it('wipe: refused off a terminal without --yes, a dry run changes nothing, --yes wipes and prints what was deleted', async () => {
    const refused = await run(undefined, 'config', 'wipe');
    expect(refused.status).toBe(EXIT_USAGE);
    expect(refused.io.stdout()).toContain('  journals          282398');
    expect(refused.io.stderr()).toContain('pass --yes');

    const dry = await run(undefined, 'config', 'wipe', '--dry-run');
    expect(dry.status).toBe(EXIT_OK);
    expect(dry.io.lines.out.at(-1)).toBe('dry run: nothing was changed');
    expect(changes).toEqual([]);

    const asked = await run(['y'], 'config', 'wipe');
    expect(asked.status, asked.io.stderr()).toBe(EXIT_OK);
    expect(asked.io.questions).toEqual(['Wipe the configuration and delete this processing data?']);
    expect(changes).toEqual(['DELETE']);
    expect(asked.io.lines.out.slice(-7)).toEqual([
      'configuration wiped (users and credentials kept)',
      'deleted:',
      '  ingestions        3',
      '  records           282398',
      '  journals          282398',
      '  journalLines      564796',
      '  processingErrors  7',
    ]);
  });
});
