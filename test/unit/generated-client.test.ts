import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, form, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

/**
 * The OpenAPI document as client generators use it: TypeScript types generated from the
 * document the app serves (`openapi-typescript`, as a client project would), and real answers
 * of the app assigned to them and type-checked (issue 21). An answer with a member the document
 * does not declare, without one it requires, or of another type fails to compile.
 */

/** One answer to check: the type it must have in the generated `paths`, and its body. */
interface Assignment {
  name: string;
  type: string;
  body: unknown;
}

/** The type of an answer's body in the generated types, as a client names it. */
function answerType(path: string, method: string, status: number, mediaType: string): string {
  return `paths[${JSON.stringify(path)}][${JSON.stringify(method)}]['responses'][${status}]['content'][${JSON.stringify(mediaType)}]`;
}

/**
 * The compiler's complaints about each group of assignments, by group name: every group is a
 * file importing the generated types from `schema.ts` in `folder`, and all are checked in one
 * program (a program costs seconds). Object literals are checked exactly: a member the type does
 * not declare is an error too.
 */
function typeErrorsOf(
  folder: string,
  groups: Record<string, readonly Assignment[]>,
): Record<string, string[]> {
  const files = Object.entries(groups).map(([group, assignments]) => {
    const file = join(folder, `${group}.ts`);
    const lines = [
      "import type { paths } from './schema.js';",
      ...assignments.map(
        ({ name, type, body }) => `export const ${name}: ${type} = ${JSON.stringify(body, null, 2)};`,
      ),
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    return { group, file };
  });
  const program = ts.createProgram(
    files.map(({ file }) => file),
    {
      strict: true,
      noEmit: true,
      exactOptionalPropertyTypes: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts'],
      types: [],
      skipLibCheck: true,
    },
  );
  return Object.fromEntries(
    files.map(({ group, file }) => [
      group,
      ts
        .getPreEmitDiagnostics(program, program.getSourceFile(file))
        .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')),
    ]),
  );
}

describe('the OpenAPI document, as a generated TypeScript client reads it', () => {
  let t: TestApp;
  let folder: string;
  const answers: Assignment[] = [];

  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    folder = mkdtempSync(join(tmpdir(), 'ledgerflow-client-'));
    const document = t.app.swagger() as unknown as OpenAPI3;
    writeFileSync(join(folder, 'schema.ts'), astToString(await openapiTS(document)));
    // The generated file is a module of its own, typed without the project's settings.
    writeFileSync(join(folder, 'package.json'), '{ "type": "module" }\n');

    const operator = await t.credentialFor(['bulk-operator']);
    const token = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      ...form({
        grant_type: 'client_credentials',
        client_id: operator.clientId,
        client_secret: operator.clientSecret,
      }),
    });
    expect(token.statusCode, token.body).toBe(200);
    answers.push({
      name: 'token',
      type: answerType('/auth/token', 'post', 200, 'application/json'),
      body: token.json(),
    });
    const bearer = token.json().access_token as string;

    const upload = await t.call(bearer, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(upload.statusCode, upload.body).toBe(200);
    answers.push({
      name: 'upload',
      type: answerType('/api/v1/configuration/bulk', 'put', 200, 'application/json'),
      body: upload.json(),
    });

    const session = await t.call(bearer, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction', ingestionName: 'generated client' },
    });
    expect(session.statusCode, session.body).toBe(201);
    answers.push({
      name: 'session',
      type: answerType('/api/v1/ingestions', 'post', 201, 'application/json'),
      body: session.json(),
    });

    // Journals to list: a business event of the realistic configuration, processed.
    await ingestClosedSession(t, bearer, 'businessEvent', [businessEvent()]);
    expect(await t.services.processor.drain()).toBe(1);
    const journals = await t.call(bearer, { method: 'GET', url: '/api/v1/journals?limit=5' });
    expect(journals.statusCode, journals.body).toBe(200);
    expect(journals.json().data).not.toEqual([]);
    answers.push({
      name: 'journals',
      type: answerType('/api/v1/journals', 'get', 200, 'application/json'),
      body: journals.json(),
    });

    const missing = await t.call(bearer, { method: 'GET', url: '/api/v1/ingestions/in_unknown' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    answers.push({
      name: 'notFound',
      type: answerType('/api/v1/ingestions/{ingestionId}', 'get', 404, 'application/problem+json'),
      body: missing.json(),
    });

    const refused = await t.app.inject({ method: 'GET', url: '/api/v1/journals' });
    expect(refused.statusCode).toBe(401);
    answers.push({
      name: 'unauthorized',
      type: answerType('/api/v1/journals', 'get', 401, 'application/problem+json'),
      body: refused.json(),
    });
  });

  afterAll(async () => {
    await t?.close();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it('types the real answers of the service and refuses answers that do not fit the document', () => {
    const session = answers.find(({ name }) => name === 'session');
    if (session === undefined) throw new Error('no session answer');
    const body = session.body as Record<string, unknown>;
    const unfit = (name: string, changed: Record<string, unknown>): Assignment => ({
      name,
      type: session.type,
      body: { ...body, ...changed },
    });
    const errors = typeErrorsOf(folder, {
      answers,
      extraMember: [unfit('extraMember', { undocumented: true })],
      wrongType: [unfit('wrongType', { chunks: '0' })],
      // JSON has no undefined: the member is left out.
      missingMember: [unfit('missingMember', { ingestionId: undefined })],
    });
    expect(errors.answers).toEqual([]);
    expect(errors.extraMember).toEqual([expect.stringContaining('"undocumented"\' does not exist')]);
    expect(errors.wrongType).toEqual([
      expect.stringContaining("'string' is not assignable to type 'number'"),
    ]);
    expect(errors.missingMember).toEqual([expect.stringContaining("'ingestionId' is missing")]);
  });
});
