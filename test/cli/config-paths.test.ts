import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_REFUSED } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { valueAt } from '../../src/modules/configuration/configuration-errors.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

const BULK = '/api/v1/configuration/bulk';

type Document = ReturnType<typeof realisticConfiguration>;
type Attribute = { name: string; type: unknown };

/** The realistic configuration with the type of the loans' `amount` attribute replaced. */
function withAmountType(type: unknown): { document: Document; index: number } {
  const document = realisticConfiguration();
  const attributes = (document.configuration.entities[0]?.attributes ?? []) as Attribute[];
  const index = attributes.findIndex((a) => a.name === 'amount');
  const amount = attributes[index];
  if (amount === undefined) throw new Error('the fixture has no amount attribute');
  amount.type = type;
  return { document, index };
}

/**
 * An upload that keeps the processing data names a member of the document the same way whether
 * it is refused as invalid (400 `configuration-invalid`, `errors[].path`) or as unsafe for the
 * stored data (409 `configuration-change-unsafe`, `blocking[].path`, and the dry runs that say
 * so): as a JSON Pointer into the uploaded document, `/configuration/…`. `config push
 * --keep-data` prints both refusals in the same form, `PATH: WHY` under the answer's first line.
 */
describe('the 400 and the 409 of a keep-data upload name a member alike', () => {
  let service: RunningService;
  let connection: string[];
  let token: string;
  let dir: string;
  beforeAll(async () => {
    service = await startService();
    connection = await service.connectionArgs();
    token = await service.tokenFor(['bulk-operator']);
    dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-config-paths-'));
  });
  afterAll(async () => {
    await service?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const put = (query: string, document: unknown) =>
    service.call(token, { method: 'PUT', url: `${BULK}?${query}`, payload: document as object });

  async function push(name: string, document: unknown): Promise<{ status: number; lines: string[] }> {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify(document));
    const io = captureIo();
    const status = await runCli(['config', 'push', file, '--keep-data', ...connection], io);
    return { status, lines: io.stderr().split('\n') };
  }

  it('names the retyped attribute /configuration/entities/0/attributes/N/type in both answers and both printouts', async () => {
    expect((await put('', realisticConfiguration())).statusCode).toBe(200);
    const session = await service.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction' },
    });
    const chunk = await service.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${session.json().ingestionId}`,
      payload: { data: [loanRecord(1)] },
    });
    expect(chunk.statusCode, chunk.body).toBe(201);

    // A type written in a form the model does not know: the document is invalid (400).
    const invalid = withAmountType('INTEGER');
    // A valid type, but stored records have decimal amounts: the stored data forbids it (409).
    const retyped = withAmountType({ typeName: 'PrimitiveType', primitive: 'INTEGER' });
    expect(retyped.index).toBe(invalid.index);
    const path = `/configuration/entities/0/attributes/${invalid.index}/type`;
    // The path points at the member in each uploaded document.
    expect(valueAt(invalid.document, path)).toBe('INTEGER');
    expect(valueAt(retyped.document, path)).toEqual({ typeName: 'PrimitiveType', primitive: 'INTEGER' });
    const reason =
      'attribute amount of loans/loanTransaction changes type from DECIMAL to INTEGER while stored records have values for it';

    const refusedInvalid = await put('keep=processing-data', invalid.document);
    expect(refusedInvalid.statusCode, refusedInvalid.body).toBe(400);
    expect(refusedInvalid.json().errors).toEqual([{ path, message: 'must be an object' }]);
    for (const query of ['keep=processing-data', 'keep=processing-data&dryRun=true']) {
      const refusedUnsafe = await put(query, retyped.document);
      expect(refusedUnsafe.statusCode, refusedUnsafe.body).toBe(409);
      expect(refusedUnsafe.json().blocking).toEqual([{ path, reason }]);
      expect(refusedUnsafe.json().detail).toContain(`first: ${path} `);
    }
    // The dry run of a plain upload, which says whether keeping would be possible, names it alike.
    const plainDry = await put('dryRun=true', retyped.document);
    expect(plainDry.statusCode, plainDry.body).toBe(200);
    expect(plainDry.json().keepProcessingData).toEqual({ possible: false, blocking: [{ path, reason }] });

    const printedInvalid = await push('invalid.json', invalid.document);
    const printedUnsafe = await push('retyped.json', retyped.document);
    expect(printedInvalid.status).toBe(EXIT_REFUSED);
    expect(printedUnsafe.status).toBe(EXIT_REFUSED);
    expect(printedInvalid.lines).toEqual([
      expect.stringMatching(
        new RegExp(`^ledgerflow: PUT /api/v1/configuration/bulk: 400 .*; first: ${path} must be an object$`),
      ),
      `${path}: must be an object`,
    ]);
    expect(printedUnsafe.lines).toEqual([
      expect.stringMatching(
        new RegExp(`^ledgerflow: PUT /api/v1/configuration/bulk: 409 .*; first: ${path} ${reason}$`),
      ),
      `${path}: ${reason}`,
    ]);
  });
});
