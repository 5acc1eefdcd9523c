import { afterAll, describe, expect, it } from 'vitest';
import {
  CONFIGURATION_WORKER_THRESHOLD_BYTES,
  configurationReader,
} from '../../src/composition/configuration-reader.js';
import { AppError } from '../../src/lib/errors.js';
import {
  JSON_BODY_EMPTY_DETAIL,
  JSON_BODY_MALFORMED_DETAIL,
  JSON_BODY_NESTING_DEPTH_MAX,
} from '../../src/lib/json-body.js';
import { largeConfiguration } from '../helpers/large-configuration.js';

/**
 * The reader of configuration uploads answers alike whether it reads a body on its worker thread
 * (at or above CONFIGURATION_WORKER_THRESHOLD_BYTES) or on the calling thread: each body is sent
 * as it is (small) and padded with trailing blanks, which JSON ignores, past the threshold.
 */
describe('configurationReader', () => {
  const reader = configurationReader();
  afterAll(() => reader.close());

  /** The reader's answer, or the error it threw as plain data. */
  async function answerOf(body: unknown): Promise<unknown> {
    try {
      return await reader.validate(body);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return { thrown: error.code, detail: error.message, extensions: error.extensions };
    }
  }

  /** The answers to `text` read on the calling thread and on the worker; the test expects them equal. */
  async function bothWays(text: string): Promise<[unknown, unknown]> {
    expect(Buffer.byteLength(text)).toBeLessThan(CONFIGURATION_WORKER_THRESHOLD_BYTES);
    const padded = `${text}${' '.repeat(CONFIGURATION_WORKER_THRESHOLD_BYTES)}`;
    return [await answerOf(Buffer.from(text)), await answerOf(Buffer.from(padded))];
  }

  const small = () => largeConfiguration(0);

  it('gives a valid document, every section present, the same either way', async () => {
    const [inline, threaded] = await bothWays(JSON.stringify(small()));
    expect(threaded).toEqual(inline);
    expect(inline).toMatchObject({ kind: 'valid', version: 'v20230211' });
    const { configuration } = inline as { configuration: Record<string, unknown> };
    expect(configuration.entities).toEqual(small().configuration.entities);
    // A byte order mark is skipped, as the application's parser skips it.
    expect(await answerOf(Buffer.from(`\ufeff${JSON.stringify(small())}`))).toEqual(inline);
  });

  it('lists the same problems either way', async () => {
    const document = small();
    document.configuration.entities?.push(document.configuration.entities[0], { name: 7 });
    const [inline, threaded] = await bothWays(JSON.stringify(document));
    expect(threaded).toEqual(inline);
    expect(inline).toMatchObject({ kind: 'invalid' });
    expect((inline as { errors: unknown[] }).errors.length).toBeGreaterThan(1);
  });

  it.each([
    ['not JSON', '{"version": "v20230211", "configuration": {', JSON_BODY_MALFORMED_DETAIL],
    [
      'an own __proto__',
      '{"version": "v20230211", "__proto__": {"polluted": true}}',
      JSON_BODY_MALFORMED_DETAIL,
    ],
    ['an escaped __proto__', '{"a": [{"\\u005f_proto__": {}}]}', JSON_BODY_MALFORMED_DETAIL],
    ['a constructor prototype', '{"a": {"constructor": {"prototype": {}}}}', JSON_BODY_MALFORMED_DETAIL],
  ])('refuses a body with %s as malformed JSON, either way', async (_name, text, detail) => {
    const [inline, threaded] = await bothWays(text);
    expect(threaded).toEqual(inline);
    expect(inline).toEqual({ thrown: 'malformed-json', detail, extensions: {} });
  });

  it('refuses an empty body, a body nested too deep and unstorable text as requests are refused', async () => {
    expect(await answerOf(Buffer.alloc(0))).toEqual({
      thrown: 'malformed-json',
      detail: JSON_BODY_EMPTY_DETAIL,
      extensions: {},
    });
    const levels = JSON_BODY_NESTING_DEPTH_MAX + 1;
    const [deepInline, deepThreaded] = await bothWays(`{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`);
    expect(deepThreaded).toEqual(deepInline);
    expect(deepInline).toMatchObject({ thrown: 'validation-failed', extensions: { errors: [{ path: '' }] } });
    const document = small();
    (document.configuration.entities?.[0] as { description: string }).description = 'a\u0000b';
    const [nulInline, nulThreaded] = await bothWays(JSON.stringify(document));
    expect(nulThreaded).toEqual(nulInline);
    expect(nulInline).toMatchObject({
      thrown: 'validation-failed',
      extensions: { errors: [{ path: '/configuration/entities/0/description' }] },
    });
  });

  it('checks a value its caller parsed as a document, without the request checks', async () => {
    const document = small();
    expect(await answerOf(document)).toEqual(await answerOf(Buffer.from(JSON.stringify(document))));
    const large = largeConfiguration(100);
    expect(Buffer.byteLength(JSON.stringify(large))).toBeGreaterThan(CONFIGURATION_WORKER_THRESHOLD_BYTES);
    expect(await answerOf(large)).toMatchObject({ kind: 'valid' });
  });
});
