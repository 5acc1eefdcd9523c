import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openLoanSession, realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';

/**
 * Flows run over the records of the entity they read (docs/reference.md, Flows): the realistic
 * fixture's flow (Input → Script → AccountingEngine → JournalProcessor on loans/loanTransaction)
 * with its script replaced per test. Runs on SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */

const SCRIPT = '5d2e7c4a-8b1f-4e3a-a6c9-7f0e1d2b3c02';
const ENGINE = '9a4f3e2d-1c0b-4a9e-8d7c-6b5a4f3e2d03';
const INPUT = '0b6c1b9e-2f4a-4d7e-9a51-3c1f8e2d4a01';
const PROCESSOR = 'c3d2e1f0-a9b8-4c7d-9e6f-5a4b3c2d1e04';

type Configuration = ReturnType<typeof realisticConfiguration>;
type FlowNodes = Record<string, { step: Record<string, unknown> }>;

function flowOf(document: Configuration): {
  versionStatus: string;
  graph: { edges: unknown; nodes: FlowNodes };
} {
  const flows = document.configuration.flows as {
    versionStatus: string;
    graph: { edges: unknown; nodes: FlowNodes };
  }[];
  const flow = flows[0];
  if (flow === undefined) throw new Error('the fixture has a flow');
  return flow;
}

/** The fixture with the flow's script (and optionally its outputs) replaced. */
function withScript(script: string, outputs?: { name: string; primitive: string }[]): Configuration {
  const document = realisticConfiguration();
  const step = flowOf(document).graph.nodes[SCRIPT]?.step as Record<string, unknown>;
  step.script = script;
  if (outputs !== undefined) {
    step.outputDefinition = outputs.map((o) => ({
      name: o.name,
      type: { type: 'Primitive', primitive: o.primitive },
    }));
  }
  return document;
}

/** The publish call of the fixture's script, for scripts that add something before it. */
const PUBLISH_EVENT_TYPE =
  "publish('eventType', { DISBURSE: 'LOAN_DISBURSEMENT', ACCRUE: 'INTEREST_ACCRUAL', FEE: 'FEE_CHARGED' }[input.transactionType]);";

interface Harness {
  t: TestApp;
  token: string;
  upload(document: Configuration): Promise<void>;
  /** Sends the records in one chunk of a new session, processes everything; returns the session. */
  ingest(records: Record<string, unknown>[]): Promise<string>;
  journals(ingestionId: string): Promise<{ journalId: string; ingestionId: string; lines: unknown[] }[]>;
  errors(ingestionId: string): Promise<{ code: string; message: string; record: Record<string, unknown> }[]>;
  session(ingestionId: string): Promise<Record<string, unknown>>;
}

async function harness(settings: Parameters<typeof createTestApp>[0] = {}): Promise<Harness> {
  const t = await createTestApp(settings);
  const token = await t.tokenFor(['admin']);
  const get = async (url: string) => {
    const response = await t.call(token, { method: 'GET', url });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  return {
    t,
    token,
    async upload(document) {
      const put = await t.call(token, {
        method: 'PUT',
        url: '/api/v1/configuration/bulk',
        payload: document,
      });
      expect(put.statusCode, put.body).toBe(200);
    },
    async ingest(records) {
      const ingestionId = await openLoanSession(t, token);
      const chunk = await t.call(token, {
        method: 'POST',
        url: `/api/v1/ingestions/${ingestionId}`,
        payload: { data: records },
      });
      expect(chunk.statusCode, chunk.body).toBe(201);
      await t.call(token, {
        method: 'PATCH',
        url: `/api/v1/ingestions/${ingestionId}`,
        payload: { state: 'closed' },
      });
      await t.services.processor.drain();
      return ingestionId;
    },
    async journals(ingestionId) {
      return (await get(`/api/v1/journals?ingestionId=${ingestionId}&limit=1000`)).data;
    },
    async errors(ingestionId) {
      return (await get(`/api/v1/processing-errors?ingestionId=${ingestionId}&limit=1000`)).data;
    },
    async session(ingestionId) {
      return get(`/api/v1/ingestions/${ingestionId}`);
    },
  };
}

describe('flows: the happy paths', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });
  afterAll(async () => {
    await h.t.close();
  });

  it('a Script flow turns each record into the journals of its business event, with its session id', async () => {
    await h.upload(realisticConfiguration());
    const ingestionId = await h.ingest([
      loanRecord(1, { transactionType: 'DISBURSE', amount: '2500.00' }),
      loanRecord(2, { transactionType: 'FEE', amount: '12.50' }),
      loanRecord(3, { transactionType: 'ACCRUE', amount: '3.21' }),
    ]);
    const journals = (await h.journals(ingestionId)) as (Awaited<ReturnType<Harness['journals']>>[number] & {
      reverses: string | null;
    })[];
    // Each event type posts to an IFRS and a local GAAP basis: two journals of two lines each; the
    // accrual's journal type is a reversing one, so its two journals are reversed the next day.
    expect(journals).toHaveLength(8);
    expect(journals.filter((j) => j.reverses !== null)).toHaveLength(2);
    expect(journals.every((j) => j.ingestionId === ingestionId && j.lines.length === 2)).toBe(true);
    expect(await h.errors(ingestionId)).toEqual([]);
    expect(await h.session(ingestionId)).toMatchObject({ processingStatus: 'completed' });
    const amounts = journals
      .filter((j) => j.reverses === null)
      .flatMap((j) => (j.lines as { transactionAmount: string }[]).map((l) => l.transactionAmount))
      .sort();
    expect(amounts).toEqual(
      [
        '-12.50',
        '-12.50',
        '-2500.00',
        '-2500.00',
        '-3.21',
        '-3.21',
        '12.50',
        '12.50',
        '2500.00',
        '2500.00',
        '3.21',
        '3.21',
      ].sort(),
    );
  });

  it('counts flow records in the statistics of their entity and the journal metrics', async () => {
    const processing = await h.t.call(h.token, { method: 'GET', url: '/api/v1/statistics/processing' });
    const loans = (processing.json().data as { namespace: string; entity: string }[]).find(
      (row) => row.namespace === 'loans' && row.entity === 'loanTransaction',
    );
    expect(loans).toEqual({
      namespace: 'loans',
      entity: 'loanTransaction',
      pending: 0,
      processed: 3,
      failed: 0,
    });
    const metrics = await h.t.call(h.token, {
      method: 'GET',
      url: '/api/v1/statistics/operational-dashboard/journal-metrics',
    });
    expect(metrics.json()).toMatchObject({ totalJournalLines: 16, errors: 0 });
  });

  it('a flow with no Script step maps the record straight into the business event', async () => {
    const document = realisticConfiguration();
    const flow = flowOf(document);
    delete flow.graph.nodes[SCRIPT];
    flow.graph.edges = { [INPUT]: [ENGINE], [ENGINE]: [PROCESSOR] };
    // The event type comes from the record itself: here, in its productCode field.
    const engine = flow.graph.nodes[ENGINE]?.step as {
      mapping: { source: { group: string; path: string[] } }[];
    };
    const first = engine.mapping[0];
    if (first === undefined) throw new Error('the fixture maps the event type first');
    first.source = { group: 'INPUT', path: ['productCode'] };
    const mapping = engine.mapping.filter((m) => m.source.path[0] !== 'productCode' || m === first);
    engine.mapping = mapping;
    await h.upload(document);
    const ingestionId = await h.ingest([loanRecord(1, { productCode: 'FEE_CHARGED', amount: '40.00' })]);
    const journals = await h.journals(ingestionId);
    expect(journals).toHaveLength(2);
    expect(await h.errors(ingestionId)).toEqual([]);
  });

  it('a draft flow never runs: its entity counts as processed on arrival', async () => {
    const document = realisticConfiguration();
    flowOf(document).versionStatus = 'Draft';
    await h.upload(document);
    const ingestionId = await h.ingest([loanRecord(1, { transactionType: 'DISBURSE' })]);
    expect(await h.journals(ingestionId)).toEqual([]);
    expect(await h.session(ingestionId)).toMatchObject({ processingStatus: 'completed' });
  });

  it('with the feature flag "flow" off, no flow runs', async () => {
    const document = realisticConfiguration();
    (document.configuration.featureFlags as Record<string, boolean>).flow = false;
    await h.upload(document);
    const ingestionId = await h.ingest([loanRecord(1, { transactionType: 'DISBURSE' })]);
    expect(await h.journals(ingestionId)).toEqual([]);
    expect(await h.session(ingestionId)).toMatchObject({ processingStatus: 'completed' });
  });

  it('an absent feature flag counts as on', async () => {
    const document = realisticConfiguration();
    delete (document.configuration.featureFlags as Record<string, boolean>).flow;
    await h.upload(document);
    const ingestionId = await h.ingest([loanRecord(1, { transactionType: 'DISBURSE' })]);
    expect(await h.journals(ingestionId)).toHaveLength(2);
  });
});

describe('flows: hostile and faulty scripts are processing errors of their record only', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });
  afterAll(async () => {
    await h.t.close();
  });

  /** Runs `script` over a good record, the record it fails on, and another good one. */
  async function failing(script: string, outputs?: { name: string; primitive: string }[]) {
    await h.upload(withScript(script, outputs));
    const ingestionId = await h.ingest([
      loanRecord(1, { transactionType: 'DISBURSE' }),
      loanRecord(2, { transactionType: 'FEE', installmentNumber: 666 }),
      loanRecord(3, { transactionType: 'DISBURSE' }),
    ]);
    const errors = await h.errors(ingestionId);
    expect(errors, 'one error, of the hostile record').toHaveLength(1);
    expect(errors[0]?.record.installmentNumber).toBe(666);
    expect(await h.journals(ingestionId), 'the other two records post').toHaveLength(4);
    expect(await h.session(ingestionId)).toMatchObject({ processingStatus: 'completed_with_errors' });
    const [error] = errors;
    if (error === undefined) throw new Error('no error');
    return { code: error.code, message: error.message };
  }

  it('a script that throws: script-error with the message and the line', async () => {
    const error = await failing(
      `if (input.installmentNumber === 666) {\n  throw new RangeError('not this one');\n}\n${PUBLISH_EVENT_TYPE}`,
    );
    expect(error).toEqual({
      code: 'script-error',
      message: 'script of step "Classify event" threw RangeError: not this one (line 2, column 9)',
    });
  });

  it('a script that never ends: script-timeout after the time limit', async () => {
    const error = await failing(
      `if (input.installmentNumber === 666) { for (;;) {} }\n${PUBLISH_EVENT_TYPE}`,
    );
    expect(error).toEqual({
      code: 'script-timeout',
      message: 'script of step "Classify event" ran longer than the 50 ms a record may take',
    });
  });

  it.each([
    ['require', "globalThis['req' + 'uire']('fs')"],
    ['process', "globalThis['proc' + 'ess'].exit(1)"],
    ['fetch', "globalThis['fet' + 'ch']('http://127.0.0.1/')"],
    ['setTimeout', "globalThis['setTime' + 'out'](() => 1, 1)"],
    ['eval', "globalThis['ev' + 'al']('1')"],
  ])('a script that reaches for %s finds nothing of the host: script-error', async (_name, call) => {
    const error = await failing(`if (input.installmentNumber === 666) { ${call}; }\n${PUBLISH_EVENT_TYPE}`);
    expect(error.code).toBe('script-error');
    // Either the name is undefined and not a function, or reading a member of it fails.
    expect(error.message).toMatch(/threw TypeError: /);
  });

  it('a script cannot leave state in a global for the next record', async () => {
    const error = await failing(
      `if (input.installmentNumber === 666) { globalThis.seen = true; }\n${PUBLISH_EVENT_TYPE}`,
    );
    expect(error.code).toBe('script-error');
    expect(error.message).toMatch(/Cannot add property seen, object is not extensible/);
  });

  it('a script that reads the clock or draws a random number: script-error saying why', async () => {
    for (const [call, what] of [
      ['Date.now()', 'Date.now()'],
      ['new Date()', 'new Date() without a value (the current time)'],
      ['Math.random()', 'Math.random()'],
    ]) {
      const error = await failing(`if (input.installmentNumber === 666) { ${call}; }\n${PUBLISH_EVENT_TYPE}`);
      expect(error.code).toBe('script-error');
      expect(error.message).toContain(
        `threw TypeError: ${what} does not exist in a flow script: its outputs depend on the record alone, not on the clock or chance`,
      );
    }
  });

  it('a script whose array buffers exhaust memory: script-memory, at the default limits', async () => {
    const error = await failing(
      `if (input.installmentNumber === 666) { const all = []; for (;;) all.push(new ArrayBuffer(1e7)); }\n${PUBLISH_EVENT_TYPE}`,
    );
    expect(error.code).toBe('script-memory');
    // On a loaded machine its 50 ms can run out before the last allocation: script-memory either way.
    expect(error.message).toMatch(
      /^script of step "Classify event" (used more than the 64 MB a script may use|ran out of memory: when its 50 ms ran out it had taken \d+ MB of the 64 MB a script may use)$/,
    );
  });

  it('a script that takes most of its heap and never ends: script-memory, at the default limits', async () => {
    const error = await failing(
      `if (input.installmentNumber === 666) { const kept = new Array(5e6).fill(input.amount); for (;;) {} }\n${PUBLISH_EVENT_TYPE}`,
    );
    expect(error.code).toBe('script-memory');
    expect(error.message).toMatch(
      /^script of step "Classify event" ran out of memory: when its 50 ms ran out it had taken \d+ MB of the 64 MB a script may use$/,
    );
  });

  it('publishing a name the outputDefinition does not declare: script-output', async () => {
    const error = await failing(
      `if (input.installmentNumber === 666) { publish('secret', 'x'); }\n${PUBLISH_EVENT_TYPE}`,
    );
    expect(error).toEqual({
      code: 'script-output',
      message: 'script of step "Classify event" published "secret", which is not in its outputDefinition',
    });
  });

  it('publishing undefined (an unknown transaction type): script-output', async () => {
    const error = await failing(
      `publish('eventType', input.installmentNumber === 666 ? undefined : 'LOAN_DISBURSEMENT');`,
    );
    expect(error).toEqual({
      code: 'script-output',
      message:
        'script of step "Classify event" published "eventType" as undefined: a value is a string, a finite number, a boolean or null',
    });
  });

  it('publishing a value of the wrong type: script-output naming the rule', async () => {
    const outputs = [
      { name: 'eventType', primitive: 'TEXT' },
      { name: 'fee', primitive: 'DECIMAL' },
    ];
    const number = await failing(
      `publish('eventType', input.installmentNumber === 666 ? 42 : 'LOAN_DISBURSEMENT');`,
      outputs,
    );
    expect(number.code).toBe('script-output');
    expect(number.message).toMatch(
      /published a value its outputDefinition does not allow: Field "eventType" must be a JSON string; got 42/,
    );
    const inexact = await failing(
      `publish('eventType', 'LOAN_DISBURSEMENT');\nif (input.installmentNumber === 666) publish('fee', 0.1 + 0.2);`,
      outputs,
    );
    expect(inexact.code).toBe('script-output');
    expect(inexact.message).toMatch(/Field "fee" is a JSON number with more than 15 significant digits/);
    const nan = await failing(
      `publish('eventType', 'LOAN_DISBURSEMENT');\nif (input.installmentNumber === 666) publish('fee', 0 / 0);`,
      outputs,
    );
    expect(nan.message).toMatch(/published "fee" as NaN/);
  });

  it('a business event the mapping cannot complete: invalid-business-event', async () => {
    const error = await failing(`if (input.installmentNumber !== 666) { ${PUBLISH_EVENT_TYPE} }`);
    expect(error).toEqual({
      code: 'invalid-business-event',
      message:
        'the business event built by step "Build business event" is not valid: Field "eventType" is mandatory but missing.',
    });
  });

  it('an event the engine refuses: its rule-named code, prefixed with the step', async () => {
    const error = await failing(
      `publish('eventType', input.installmentNumber === 666 ? 'NOT_CONFIGURED' : 'LOAN_DISBURSEMENT');`,
    );
    expect(error.code).toBe('unknown-event-type');
    expect(error.message).toMatch(/^step "Build business event": /);
  });

  it('lists flow errors among the failed records of the session', async () => {
    await h.upload(
      withScript(`if (input.installmentNumber === 666) throw new Error('no');\n${PUBLISH_EVENT_TYPE}`),
    );
    const ingestionId = await h.ingest([loanRecord(1, { transactionType: 'FEE', installmentNumber: 666 })]);
    const failed = await h.t.call(h.token, {
      method: 'GET',
      url: `/api/v1/ingestions/${ingestionId}/errors`,
    });
    expect(failed.statusCode).toBe(200);
    expect(failed.json().data).toEqual([
      expect.objectContaining({
        kind: 'processing',
        errors: [
          {
            field: '',
            code: 'script-error',
            message: 'script of step "Classify event" threw Error: no (line 1, column 44)',
          },
        ],
      }),
    ]);
  });
});

describe("flows: a record's journals depend on the record alone", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });
  afterAll(async () => {
    await h.t.close();
  });

  /** Three records in one chunk, then two in the next session's chunk. */
  async function twoChunks(): Promise<string[]> {
    const first = await h.ingest([
      loanRecord(1, { transactionType: 'DISBURSE' }),
      loanRecord(2, { transactionType: 'FEE' }),
      loanRecord(3, { transactionType: 'DISBURSE' }),
    ]);
    const second = await h.ingest([
      loanRecord(4, { transactionType: 'FEE' }),
      loanRecord(5, { transactionType: 'DISBURSE' }),
    ]);
    return [first, second];
  }

  it('a counter kept on Object.prototype counts nothing: every record, in either chunk, has the same outcome', async () => {
    await h.upload(withScript(`Object.prototype.n = (Object.prototype.n ?? 0) + 1;\n${PUBLISH_EVENT_TYPE}`));
    const errors = (await Promise.all((await twoChunks()).map((id) => h.errors(id)))).flat();
    expect(errors.map((e) => [e.code, e.message])).toEqual(
      Array(5).fill([
        'script-error',
        'script of step "Classify event" threw TypeError: Cannot add property n, object is not extensible (line 1, column 20)',
      ]),
    );
  });

  it('a script that shrugs the refusal off sees no count, and every record posts', async () => {
    await h.upload(
      withScript(
        `try { Object.prototype.n = (Object.prototype.n ?? 0) + 1; Math.seen = true; } catch {}\n` +
          `if (Object.prototype.n !== undefined || Math.seen !== undefined) throw new Error('state leaked');\n${PUBLISH_EVENT_TYPE}`,
      ),
    );
    const sessions = await twoChunks();
    for (const id of sessions) expect(await h.errors(id)).toEqual([]);
    const journals = (await Promise.all(sessions.map((id) => h.journals(id)))).flat();
    expect(journals).toHaveLength(10);
  });
});

describe('flows: limits hold without stopping the service', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ flowScriptTimeoutMs: 3_000, flowScriptMemoryMb: 16 });
  });
  afterAll(async () => {
    await h.t.close();
  });

  it('a script that eats memory: script-memory, and the next records run in a fresh isolate', async () => {
    await h.upload(
      withScript(
        `if (input.installmentNumber === 666) { const all = []; for (;;) all.push(new Array(1e6).fill(input.amount)); }\n${PUBLISH_EVENT_TYPE}`,
      ),
    );
    const ingestionId = await h.ingest([
      loanRecord(1, { transactionType: 'DISBURSE' }),
      loanRecord(2, { transactionType: 'FEE', installmentNumber: 666 }),
      loanRecord(3, { transactionType: 'DISBURSE' }),
    ]);
    const errors = await h.errors(ingestionId);
    expect(errors.map((e) => [e.code, e.message])).toEqual([
      ['script-memory', 'script of step "Classify event" used more than the 16 MB a script may use'],
    ]);
    expect(await h.journals(ingestionId)).toHaveLength(4);
  });

  it('while a script loops, other requests are answered at once', async () => {
    await h.upload(withScript(`for (;;) {}`));
    const ingestionId = await openLoanSession(h.t, h.token);
    const chunk = await h.t.call(h.token, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}`,
      payload: { data: [loanRecord(1)] },
    });
    expect(chunk.statusCode).toBe(201);
    const processing = h.t.services.processor.drain();
    // Give the loop time to start; the isolate runs it off the event loop.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    const read = await h.t.call(h.token, { method: 'GET', url: `/api/v1/ingestions/${ingestionId}` });
    const elapsedMs = performance.now() - started;
    expect(read.statusCode).toBe(200);
    expect(read.json().processingStatus).toBe('pending');
    // Well under the 3 s the script may run (the loop is stopped twice: in the batch, then alone).
    expect(elapsedMs).toBeLessThan(1_000);
    await processing;
    expect((await h.errors(ingestionId)).map((e) => e.code)).toEqual(['script-timeout']);
  });
});
