import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Static } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { changeCell, changeDetailLines, changeHeadline } from '../../src/cli/remote/approvals-command.js';
import { runCli } from '../../src/cli/run.js';
import type { ApprovalRequest } from '../../src/http/api/approval-answers.js';
import { testClock } from '../helpers/clock.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

type Request = Static<typeof ApprovalRequest>;

/** `ledgerflow approvals` and the commands whose actions wait for approval. */
describe('ledgerflow approvals', () => {
  let service: RunningService;
  let maker: string[];
  let approver: string[];
  let ingestionId: string;
  beforeAll(async () => {
    service = await startService(
      { approvalRequired: ['configuration.upload', 'configuration.delete', 'reversal', 'period.reopen'] },
      { clock: testClock() },
    );
    await service.services.configuration.upload(realisticConfiguration(), { user: 'setup@example.test' });
    maker = await service.connectionArgs(['bulk-operator']);
    approver = await service.connectionArgs(['admin']);
    const token = await service.tokenFor(['bulk-operator']);
    ingestionId = await ingestClosedSession(service, token, 'businessEvent', [
      businessEvent({ effectiveDate: '2026-11-18' }),
    ]);
    await service.services.processor.drain();
  });
  afterAll(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-approvals-'));

  async function cli(connection: string[], ...argv: string[]) {
    const io = captureIo();
    return { status: await runCli([...argv, ...connection], io), io };
  }

  function requestIdOf(output: string): string {
    const id = /request ([0-9a-f-]{36})/.exec(output)?.[1];
    if (id === undefined) throw new Error(`no request id in: ${output}`);
    return id;
  }

  /** The request as the service answers it, read with `approvals show ID --json`. */
  async function answered(id: string): Promise<Request> {
    const shown = await cli(approver, 'approvals', 'show', id, '--json');
    return JSON.parse(shown.io.stdout()) as Request;
  }

  /** The line of `approvals list` that names the request. */
  async function listedLine(id: string): Promise<string> {
    const listed = await cli(approver, 'approvals', 'list');
    expect(listed.status, listed.io.stderr()).toBe(EXIT_OK);
    expect(listed.io.lines.out[0]).toMatch(/^REQUEST +MADE +KIND +BY +STATUS +CHANGE +DRY RUN$/);
    const line = listed.io.lines.out.find((l) => l.startsWith(id));
    if (line === undefined) throw new Error(`request ${id} not listed: ${listed.io.stdout()}`);
    return line;
  }

  it('a configuration upload lists the paths it changes; show and approve name the maker and every change', async () => {
    const document = realisticConfiguration();
    const entity = document.configuration.entities[0];
    if (entity === undefined) throw new Error('no entity');
    entity.attributes.push(
      ...['approvalNote', 'approvalTicket'].map((name) => ({
        name,
        label: name,
        mandatory: false,
        source: 'input',
        type: { typeName: 'PrimitiveType', primitive: 'TEXT' },
      })),
    );
    const file = join(dir, 'configuration.json');
    writeFileSync(file, JSON.stringify(document));
    const made = await cli(maker, 'config', 'push', file, '--keep-data');
    expect(made.status, made.io.stderr()).toBe(EXIT_OK);
    const id = requestIdOf(made.io.stdout());
    const { summary, makerEmail } = await answered(id);
    const paths = (summary.changes as { path: string; kind: string }[]).map((c) => c.path);
    expect(paths).toHaveLength(2);

    const line = await listedLine(id);
    expect(line).toContain(`configuration.upload  ${makerEmail}`);
    expect(line).toContain(`+ ${paths[0]}, + ${paths[1]}`);

    const shown = await cli(approver, 'approvals', 'show', id);
    const text = shown.io.stdout();
    expect(text).toContain(`made by   ${makerEmail}`);
    expect(text).toContain(
      `change    upload of configuration ${document.version}, keeping the processing data: 2 added, 0 removed, 0 changed`,
    );
    for (const path of paths) expect(text).toContain(`\n            + ${path}\n`);

    const approved = await cli(approver, 'approvals', 'approve', id);
    expect(approved.status, approved.io.stderr()).toBe(EXIT_OK);
    expect(approved.io.lines.out[0]).toBe(
      `approved the request of ${makerEmail}: upload of configuration ${document.version}, keeping the processing data: 2 added, 0 removed, 0 changed`,
    );
    expect(approved.io.stdout()).toContain(`+ ${paths[1]}`);
    expect(approved.io.stdout()).toContain('status    approved');
  });

  it('a reversal waits; the maker cannot approve it; another user lists, shows and approves it', async () => {
    const made = await cli(maker, 'journals', 'reverse', '--ingestion', ingestionId, '--reason', 'twice');
    expect(made.status, made.io.stderr()).toBe(EXIT_OK);
    expect(made.io.stdout()).toContain('waits for approval by another user');
    const id = requestIdOf(made.io.stdout());

    // The service's answer carries the selection and reason of a reversal in its summary, or
    // (before it does) the command says that they are not given, rather than show nothing.
    const { summary } = await answered(id);
    const change =
      'selection' in summary
        ? `reversal of --ingestion ${ingestionId}; reason: twice`
        : 'reversal; its selection and reason are not given by the service: ask the maker before deciding';
    const line = await listedLine(id);
    expect(line).toMatch(/ reversal +\S+ +pending-approval /);
    expect(line).toContain(change);
    expect(line).toMatch(/reverses journals \d+/);

    const shown = await cli(approver, 'approvals', 'show', id);
    expect(shown.io.stdout()).toContain('status    pending-approval');
    expect(shown.io.stdout()).toContain(`change    ${change}`);
    expect(shown.io.stdout()).toMatch(/made by {3}\S+@\S+ \(lfc_/);
    expect(shown.io.stdout()).toMatch(/document {2}sha256 [0-9a-f]{64}/);

    const own = await cli(maker, 'approvals', 'approve', id);
    expect(own.status).toBe(EXIT_REFUSED);
    expect(own.io.stderr()).toContain('403');

    const approved = await cli(approver, 'approvals', 'approve', id);
    expect(approved.status, approved.io.stderr()).toBe(EXIT_OK);
    expect(approved.io.lines.out[0]).toMatch(/^approved the request of \S+@\S+: /);
    expect(approved.io.lines.out[0]).toContain(change);
    expect(approved.io.stdout()).toContain('status    approved');
    expect(approved.io.stdout()).toContain('reversalId');
  });

  it('a wipe waits and is rejected with a reason; reject needs one', async () => {
    const made = await cli(maker, 'config', 'wipe', '--yes');
    expect(made.status, made.io.stderr()).toBe(EXIT_OK);
    const id = requestIdOf(made.io.stdout());
    const noReason = await cli(approver, 'approvals', 'reject', id);
    expect(noReason.status).toBe(EXIT_USAGE);
    const rejected = await cli(approver, 'approvals', 'reject', id, '--reason', 'not now');
    expect(rejected.status, rejected.io.stderr()).toBe(EXIT_OK);
    expect(rejected.io.lines.out[0]).toMatch(
      /^rejected the request of \S+@\S+: deletion of the configuration and of the processing data$/,
    );
    expect(rejected.io.stdout()).toContain('reason    not now');
    const listed = await cli(approver, 'approvals', 'list', '--status', 'rejected', '--json');
    expect(JSON.parse(listed.io.stdout().trim().split('\n')[0] ?? '{}')).toMatchObject({
      requestId: id,
      status: 'rejected',
    });
    expect((await service.services.configuration.wipeDryRun()).wouldDelete.ingestions).toBe(1);
  });
  it('a period reopening waits, shows its period and reason, and reopens once approved', async () => {
    const controller = await service.connectionArgs(['admin']);
    const period = [
      '--accounting-config',
      'LOCAL_GAAP',
      '--node',
      'legalEntity=LF_NL',
      '--node',
      'branch=AMS',
    ];
    const made = await cli(
      controller,
      'periods',
      'reopen',
      ...period,
      '--period',
      '2026-09-01',
      '--reason',
      'late invoice',
    );
    expect(made.status, made.io.stderr()).toBe(EXIT_OK);
    expect(made.io.stdout()).toContain('waits for approval by another user');
    const id = requestIdOf(made.io.stdout());
    const change =
      'reopening of LOCAL_GAAP legalEntity=LF_NL,branch=AMS 2026-09-01 to 2026-09-30; reason: late invoice';
    const line = await listedLine(id);
    expect(line).toMatch(/ period\.reopen +\S+ +pending-approval /);
    expect(line).toContain(`${change}  closed (calendar) now`);
    const shown = await cli(approver, 'approvals', 'show', id);
    expect(shown.io.stdout()).toContain(`change    ${change}`);
    const approved = await cli(approver, 'approvals', 'approve', id);
    expect(approved.status, approved.io.stderr()).toBe(EXIT_OK);
    expect(approved.io.lines.out[0]).toMatch(new RegExp(`^approved the request of \\S+@\\S+: ${change}$`));
    expect(approved.io.stdout()).toContain('status    approved');
    const now = await cli(
      approver,
      'periods',
      'list',
      ...period,
      '--from',
      '2026-09-01',
      '--to',
      '2026-09-30',
    );
    expect(now.io.stdout()).toContain('reopened');
  });
});

/** A request as the service answers it, of `kind`, with this dry run and summary. */
function requestOf(
  kind: Request['kind'],
  dryRun: Record<string, unknown>,
  summary: Record<string, unknown>,
): Request {
  return {
    requestId: '00000000-0000-4000-8000-000000000001',
    kind,
    status: 'pending-approval',
    makerEmail: 'maker@example.test',
    makerClientId: 'lfc_maker',
    createdAt: '2026-11-20T10:00:00.000Z',
    documentSha256: '0'.repeat(64),
    revision: 3,
    dryRun,
    summary,
    decidedBy: null,
    decidedByClientId: null,
    decidedAt: null,
    reason: null,
    finishedAt: null,
    outcome: null,
    problem: null,
  };
}

/** What each kind of request says it would change, from the summary the service gives. */
describe('what an approval request would change, in words', () => {
  const wouldDelete = { ingestions: 0, records: 0, journals: 0, journalLines: 0, processingErrors: 0 };

  it('an upload: its first paths in the list, with how many more; every listed path in show', () => {
    const changes = [
      { path: '/entities/trade/attributes/note', kind: 'added' },
      { path: '/accounts/1300', kind: 'removed' },
      { path: '/nodes/AMS/label', kind: 'changed' },
      { path: '/accounts/1400', kind: 'added' },
    ];
    const upload = requestOf(
      'configuration.upload',
      { version: 'v7', sections: {}, keepProcessingData: false, wouldDelete },
      { added: 2, removed: 1, changed: 1, truncated: false, changes },
    );
    expect(changeHeadline(upload)).toBe('upload of configuration v7: 2 added, 1 removed, 1 changed');
    expect(changeCell(upload)).toBe(
      '+ /entities/trade/attributes/note, - /accounts/1300, ~ /nodes/AMS/label (+1)',
    );
    expect(changeDetailLines(upload)).toEqual([
      '+ /entities/trade/attributes/note',
      '- /accounts/1300',
      '~ /nodes/AMS/label',
      '+ /accounts/1400',
    ]);
    // The service lists the first changes only: show says how many it left out.
    const many = requestOf(
      'configuration.upload',
      { version: 'v7', sections: {}, keepProcessingData: true, wouldDelete },
      { added: 60, removed: 0, changed: 0, truncated: false, changes: changes.slice(0, 1) },
    );
    expect(changeHeadline(many)).toBe(
      'upload of configuration v7, keeping the processing data: 60 added, 0 removed, 0 changed',
    );
    expect(changeCell(many)).toBe('+ /entities/trade/attributes/note (+59)');
    expect(changeDetailLines(many).at(-1)).toBe('(and 59 more changes, not listed by the service)');
    const none = requestOf(
      'configuration.upload',
      { version: 'v7', sections: {}, keepProcessingData: false, wouldDelete },
      { added: 0, removed: 0, changed: 0, truncated: false, changes: [] },
    );
    expect(changeCell(none)).toBe('configuration v7: no change');
  });

  it('a reversal: its selection as journals reverse takes it, and its reason', () => {
    const counts = { journals: 2, lines: 4, alreadyReversed: 0, notReversible: 0 };
    const selections: [Record<string, unknown>, string][] = [
      [{ ingestionId: 'in_1' }, '--ingestion in_1'],
      [{ originJournalId: 'J-9' }, '--origin-journal J-9'],
      [
        { accountingConfig: 'IFRS', from: '2026-10-01', to: '2026-10-31' },
        '--accounting-config IFRS --from 2026-10-01 --to 2026-10-31',
      ],
      [
        { journalIds: ['j1', 'j2', 'j3', 'j4', 'j5'] },
        '--journal j1 --journal j2 --journal j3 (and 2 more journals)',
      ],
    ];
    for (const [selection, text] of selections) {
      const reversal = requestOf('reversal', counts, { selection, reason: 'sent twice', postingDate: null });
      expect(changeHeadline(reversal)).toBe(`reversal of ${text}; reason: sent twice`);
      expect(changeCell(reversal)).toBe(changeHeadline(reversal));
    }
    const dated = requestOf('reversal', counts, {
      selection: { journalIds: ['j1', 'j2', 'j3', 'j4'] },
      reason: 'wrong rate',
      postingDate: '2026-11-01',
    });
    expect(changeDetailLines(dated)).toEqual([
      'selection --journal j1 --journal j2 --journal j3 --journal j4',
      'posting date 2026-11-01',
    ]);
    const few = requestOf('reversal', counts, { selection: { ingestionId: 'in_1' }, reason: 'twice' });
    expect(changeDetailLines(few)).toEqual([]);
    // An answer without them says so, so that an approver never decides on counts alone.
    expect(changeHeadline(requestOf('reversal', counts, {}))).toBe(
      'reversal; its selection and reason are not given by the service: ask the maker before deciding',
    );
  });

  it('a deletion and a reopening', () => {
    expect(changeHeadline(requestOf('configuration.delete', { wouldDelete }, {}))).toBe(
      'deletion of the configuration and of the processing data',
    );
    const reopen = requestOf(
      'period.reopen',
      { state: 'closed', basis: 'calendar', actedBy: null, actedAt: null },
      {
        accountingConfig: 'IFRS',
        node: { legalEntity: 'LF_NL', branch: 'AMS' },
        firstDay: '2026-03-01',
        lastDay: '2026-03-31',
        reason: 'late invoice',
      },
    );
    expect(changeHeadline(requestOf('period.reopen', reopen.dryRun, {}))).toBe(
      'reopening of a period; the period and reason are not given by the service: ask the maker before deciding',
    );
    expect(changeCell(reopen)).toBe(
      'reopening of IFRS legalEntity=LF_NL,branch=AMS 2026-03-01 to 2026-03-31; reason: late invoice',
    );
  });
});
