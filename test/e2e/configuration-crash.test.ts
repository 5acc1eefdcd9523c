import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecords } from '../helpers/records.js';
import { apiClient, eventually, type ServerProcess, startE2eServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';

type Api = Awaited<ReturnType<typeof apiClient>>;

/** Entities added to the realistic fixture, so that the document is a few MiB. */
const EXTRA_ENTITIES = 1_500;
/**
 * Records stored before each upload. The upload deletes them in its transaction, which keeps
 * the transaction open long enough (hundreds of milliseconds) for the kill to land inside it.
 */
const RECORDS = 60_000;
const RECORDS_PER_CHUNK = 2_000;
/**
 * Milliseconds from the moment the upload's transaction is seen open to the SIGKILL, one
 * attempt each. The first ones land inside the transaction; the later ones may land after the
 * commit, which is fine: either way the outcome must be one whole document.
 */
const KILL_DELAYS_MS = [0, 0, 10, 50, 200];
/** How often the database is probed for the open transaction. */
const PROBE_INTERVAL_MS = 2;

/**
 * A valid configuration of a few MiB: the realistic fixture plus `EXTRA_ENTITIES` entities whose
 * descriptions carry `tag`, so that two documents differ in thousands of places and a mix of
 * them could not pass for either.
 */
function largeConfiguration(tag: string): ReturnType<typeof realisticConfiguration> {
  const document = realisticConfiguration();
  const { entities } = document.configuration;
  const [loan] = entities;
  if (loan === undefined) throw new Error('the fixture has no entity');
  for (let i = 0; i < EXTRA_ENTITIES; i += 1) {
    entities.push(
      Object.assign(structuredClone(loan), {
        namespace: 'crash',
        name: `entity${i}`,
        description: `Entity ${i} of configuration ${tag}`,
      }),
    );
  }
  return document;
}

/** The document as GET answers it, without the fields that change on every download. */
async function storedDocument(api: Api): Promise<unknown> {
  const answer = await api('GET', '/api/v1/configuration/bulk');
  expect(answer.status).toBe(200);
  const { downloadTime: _time, downloadedBy: _by, ...document } = answer.body as Record<string, unknown>;
  return document;
}

/**
 * True when the configuration upload's write transaction is open, seen from outside the
 * service: on SQLite another connection cannot take the write lock (nothing else writes while
 * the test waits); on PostgreSQL the upload holds its EXCLUSIVE lock on `ingestions`, taken
 * inside the transaction just before the wipe.
 */
function transactionProbe(databaseUrl: string): { open(): Promise<boolean>; close(): Promise<void> } {
  if (TEST_DIALECT === 'sqlite') {
    const db = new Database(databaseUrl.slice('sqlite:'.length), { timeout: 0 });
    return {
      async open() {
        try {
          db.exec('BEGIN IMMEDIATE');
        } catch (error) {
          if ((error as { code?: string }).code === 'SQLITE_BUSY') return true;
          throw error;
        }
        db.exec('ROLLBACK');
        return false;
      },
      async close() {
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  const connected = client.connect();
  return {
    async open() {
      await connected;
      const answer = await client.query(
        `select 1 from pg_locks l join pg_class c on c.oid = l.relation
         where c.relname = 'ingestions' and l.mode = 'ExclusiveLock' and l.granted
           and l.database = (select oid from pg_database where datname = current_database())`,
      );
      return answer.rowCount !== null && answer.rowCount > 0;
    },
    async close() {
      await connected;
      await client.end();
    },
  };
}

/**
 * SIGKILL during `PUT /api/v1/configuration/bulk` (docs/reference.md, Configuration Data): the
 * document, the wipe of the processing data and the audit entry are one transaction, so after a
 * restart the service holds exactly the old configuration with all its sessions, or exactly the
 * new one with none, and serves either way.
 *
 * What this proves, and what it does not: the kill is sent when the upload's transaction is seen
 * open from outside (write lock held, or lock on `ingestions` granted), plus a few delays. The
 * test asserts that at least one kill landed inside the transaction (the old document survived
 * although its transaction had started) and that every attempt ends in one whole document. It
 * does not try every instant of the write; a last attempt kills right after the 200 and shows
 * that an acknowledged upload survives.
 */
describe('kill -9 during a configuration upload', () => {
  const urls: string[] = [];
  afterAll(async () => {
    for (const url of urls) await dropTestDatabase(url);
  });

  it('leaves exactly the old or the new configuration, never a mix, and serves after restart', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    const documents = [largeConfiguration('A'), largeConfiguration('B')];
    let server: ServerProcess = await startE2eServer(databaseUrl);
    let api = await apiClient(server.url);
    // Each document once, as the service stores it; then B is current.
    const stored: unknown[] = [];
    for (const document of documents) {
      const put = await api('PUT', '/api/v1/configuration/bulk', document);
      expect(put.status, JSON.stringify(put.body).slice(0, 500)).toBe(200);
      stored.push(await storedDocument(api));
    }
    expect(stored[0]).not.toEqual(stored[1]);
    let current = 1;
    let sessionId = '';
    const auditEntries = async () =>
      ((await api('GET', '/api/v1/audit-log?limit=1')).body as { totalSize: number }).totalSize;

    /** Makes sure the session of `RECORDS` records exists (an upload that committed wiped it). */
    const fill = async () => {
      if (sessionId !== '' && (await api('GET', `/api/v1/ingestions/${sessionId}`)).status === 200) return;
      const opened = await api('POST', '/api/v1/ingestions', {
        namespace: 'loans',
        entity: 'loanTransaction',
      });
      expect(opened.status).toBe(201);
      sessionId = (opened.body as { ingestionId: string }).ingestionId;
      for (let start = 0; start < RECORDS; start += RECORDS_PER_CHUNK) {
        const chunk = await api('POST', `/api/v1/ingestions/${sessionId}`, {
          data: loanRecords(RECORDS_PER_CHUNK, start),
        });
        expect(chunk.status).toBe(201);
      }
    };

    /** Uploads the other document and kills the service as `kill` decides; returns what was seen. */
    const attempt = async (kill: 'after-answer' | number): Promise<{ answered: boolean }> => {
      const next = 1 - current;
      const upload = api('PUT', '/api/v1/configuration/bulk', documents[next]).then(
        (answer) => answer.status,
        () => undefined,
      );
      if (kill === 'after-answer') {
        expect(await upload).toBe(200);
      } else {
        const probe = transactionProbe(databaseUrl);
        try {
          await eventually(async () => ((await probe.open()) ? true : undefined), 60_000, PROBE_INTERVAL_MS);
        } finally {
          await probe.close();
        }
        if (kill > 0) await new Promise((resolve) => setTimeout(resolve, kill));
      }
      await server.kill();
      const answered = (await upload) === 200;
      return { answered };
    };

    /** After a restart: one whole document, and the processing data that belongs to it. */
    const check = async (before: { audit: number; answered: boolean }): Promise<'old' | 'new'> => {
      server = await startE2eServer(databaseUrl);
      api = await apiClient(server.url);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const document = await storedDocument(api);
      const next = 1 - current;
      const outcome = JSON.stringify(document) === JSON.stringify(stored[current]) ? 'old' : 'new';
      if (outcome === 'new') expect(document).toEqual(stored[next]);
      const session = await api('GET', `/api/v1/ingestions/${sessionId}`);
      const sessions = (await api('GET', '/api/v1/ingestions')).body as { totalSize: number };
      if (outcome === 'old') {
        expect(before.answered, 'an acknowledged upload was lost').toBe(false);
        expect(session.status).toBe(200);
        expect(session.body).toMatchObject({ successRows: RECORDS });
        expect(sessions.totalSize).toBe(1);
        expect(await auditEntries()).toBe(before.audit);
      } else {
        expect(session.status).toBe(404);
        expect(sessions.totalSize).toBe(0);
        expect(await auditEntries()).toBe(before.audit + 1);
        current = next;
      }
      return outcome;
    };

    const outcomes: string[] = [];
    try {
      for (const delay of KILL_DELAYS_MS) {
        await fill();
        const audit = await auditEntries();
        const { answered } = await attempt(delay);
        outcomes.push(`${delay} ms: ${await check({ audit, answered })}`);
      }
      // A kill sent the moment the transaction was seen open must have rolled it back.
      expect(outcomes.filter((o) => o.startsWith('0 ms: old')).length, outcomes.join(', ')).toBeGreaterThan(
        0,
      );
      await fill();
      const audit = await auditEntries();
      const last = await attempt('after-answer');
      expect(await check({ audit, answered: last.answered })).toBe('new');
      // And the service still takes an upload.
      expect((await api('PUT', '/api/v1/configuration/bulk', documents[0])).status).toBe(200);
    } finally {
      await server.stop();
    }
  }, 300_000);
});
