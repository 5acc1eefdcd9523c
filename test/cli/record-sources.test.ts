import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CHUNK_BODY_BYTES_MAX, type Chunk, ChunkBuilder } from '../../src/cli/remote/chunker.js';
import {
  type AttributeType,
  csvRecordOf,
  csvRecords,
  inputFormatOf,
  JsonRecordsScanner,
  jsonRecords,
  linePlace,
  ndjsonRecords,
  type SourceItem,
  typedCell,
} from '../../src/cli/remote/record-sources.js';

async function collect(items: AsyncIterable<SourceItem>): Promise<SourceItem[]> {
  const all: SourceItem[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** Feeds `text` to the scanner in pieces of `size` characters. */
function scan(text: string, size: number): string[] {
  const scanner = new JsonRecordsScanner();
  const texts: string[] = [];
  for (let at = 0; at < text.length; at += size) {
    for (const record of scanner.push(text.slice(at, at + size))) texts.push(record.text);
  }
  scanner.end();
  return texts;
}

describe('inputFormatOf', () => {
  it('reads the extension unless --format says otherwise', () => {
    expect(inputFormatOf('a/b.JSON', undefined)).toBe('json');
    expect(inputFormatOf('b.jsonl', undefined)).toBe('ndjson');
    expect(inputFormatOf('b.ndjson', undefined)).toBe('ndjson');
    expect(inputFormatOf('b.csv', undefined)).toBe('csv');
    expect(inputFormatOf('b.txt', 'csv')).toBe('csv');
    expect(() => inputFormatOf('b.txt', undefined)).toThrow(/--format/);
    expect(() => inputFormatOf('b.json', 'xml')).toThrow(/--format/);
  });
});

describe('JsonRecordsScanner', () => {
  // Numbers are kept as written: this text would lose digits through JSON.parse + stringify.
  const arrayText = `[ {"a":1,"amount":12345678901234567.891,"s":"has ] and } and , and \\" inside"},\n {"nested":{"list":[1,[2,3]],"o":{}}} ,{"e":"\\\\\\\\"}]`;

  it('splits a top-level array into the raw text of each record, in any piece size', () => {
    for (const size of [1, 2, 3, 7, 1000]) {
      const texts = scan(arrayText, size);
      expect(texts).toHaveLength(3);
      expect(texts[0]).toContain('12345678901234567.891');
      expect(texts.map((text) => JSON.parse(text))).toEqual(JSON.parse(arrayText));
    }
  });

  it('finds the data array of an object, whatever comes before and after it', () => {
    const text = `{"chunkName":"x","meta":{"data":[9]},"other":["data"],"data":[{"a":1},{"b":[2]}],"after":[{"c":3}]}`;
    for (const size of [1, 5, 1000])
      expect(scan(text, size).map((t) => JSON.parse(t))).toEqual([{ a: 1 }, { b: [2] }]);
  });

  it('accepts an empty array and refuses what is not records', () => {
    expect(scan('[ ]', 1)).toEqual([]);
    expect(scan('{"data":[]}', 2)).toEqual([]);
    expect(() => scan('', 1)).toThrow(/empty/);
    expect(() => scan('"x"', 1)).toThrow(/array of records/);
    expect(() => scan('{"records":[{"a":1}]}', 4)).toThrow(/without a "data" array/);
    expect(() => scan('[{"a":1},{"b"', 4)).toThrow(/ends in the middle/);
  });
});

describe('jsonRecords and ndjsonRecords', () => {
  it('streams a JSON file and marks records that are not objects', async () => {
    const items = await collect(jsonRecords(Readable.from(['[{"a":1}, 2, {"b":', '2}]'])));
    expect(items).toEqual([
      { kind: 'record', text: '{"a":1}', place: { where: 'index 0', at: 0 } },
      { kind: 'invalid', place: { where: 'index 1', at: 1 }, message: 'is not a JSON object' },
      { kind: 'record', text: '{"b":2}', place: { where: 'index 2', at: 2 } },
    ]);
  });

  it('reads NDJSON line by line, skipping blank lines and marking broken ones', async () => {
    const items = await collect(ndjsonRecords(Readable.from(['{"a":1.10}\r\n\n{"b":', '2}\n{oops}\n[1]\n'])));
    expect(items[0]).toEqual({ kind: 'record', text: '{"a":1.10}', place: { where: 'line 1', at: 1 } });
    expect(items[1]).toEqual({ kind: 'record', text: '{"b":2}', place: { where: 'line 3', at: 3 } });
    expect(items[2]).toMatchObject({
      kind: 'invalid',
      place: { where: 'line 4', at: 4 },
      message: expect.stringContaining('not valid JSON'),
    });
    expect(items[3]).toEqual({
      kind: 'invalid',
      place: { where: 'line 5', at: 5 },
      message: 'is not a JSON object',
    });
  });
});

describe('CSV typing', () => {
  const attributes = new Map<string, AttributeType>(
    [
      { name: 'amount', type: 'DECIMAL' },
      { name: 'n', type: 'INTEGER' },
      { name: 'flag', type: 'BOOLEAN' },
      { name: 'tags', type: 'LIST' },
      { name: 'counts', type: 'LIST', elementType: 'INTEGER' },
      { name: 'day', type: 'DATE' },
      { name: 'note', type: 'TEXT' },
    ].map((attribute) => [attribute.name, attribute]),
  );

  it('types each cell by its attribute and leaves out empty cells', () => {
    expect(
      csvRecordOf(
        ['amount', 'n', 'flag', 'tags', 'counts', 'day', 'note', 'extra', 'empty'],
        ['12345678901234567.10', '42', 'TRUE', 'a; b', '[1,2]', '2026-11-20', ' spaced ', 'x', ''],
        attributes,
      ),
    ).toEqual({
      amount: '12345678901234567.10',
      n: 42,
      flag: true,
      tags: ['a', 'b'],
      counts: [1, 2],
      day: '2026-11-20',
      note: ' spaced ',
      extra: 'x',
    });
  });

  it('sends a cell that does not convert as written, for the service to name the error', () => {
    expect(typedCell('12,5', 'INTEGER')).toBe('12,5');
    expect(typedCell('9007199254740993', 'INTEGER')).toBe('9007199254740993');
    expect(typedCell('yes', 'BOOLEAN')).toBe('yes');
    expect(typedCell('1;x', 'LIST', 'INTEGER')).toEqual([1, 'x']);
    expect(typedCell('[not json', 'LIST')).toEqual(['[not json']);
  });

  it('streams a CSV file with quoted fields, placing each record at the line it starts on', async () => {
    const csv = '\ufeffnote,n,amount\n"a, ""quoted""\nvalue",1,1.50\n\nshort\nz,,2\n';
    const items = await collect(csvRecords(Readable.from([csv]), attributes));
    expect(items).toEqual([
      {
        kind: 'record',
        text: JSON.stringify({ note: 'a, "quoted"\nvalue', n: 1, amount: '1.50' }),
        place: { where: 'line 2', at: 2 },
      },
      { kind: 'invalid', place: { where: 'line 5', at: 5 }, message: 'has 1 fields, the header 3' },
      { kind: 'record', text: JSON.stringify({ note: 'z', amount: '2' }), place: { where: 'line 6', at: 6 } },
    ]);
  });

  it('refuses a header with a repeated column', async () => {
    await expect(collect(csvRecords(Readable.from(['a,a\n1,2\n']), attributes))).rejects.toThrow(/twice/);
  });
});

describe('ChunkBuilder', () => {
  it('packs records into bodies under the limit, in order, measuring serialised bytes', () => {
    const builder = new ChunkBuilder('file.ndjson', 200, 1000);
    const chunks = [];
    for (let n = 0; n < 50; n += 1) {
      const chunk = builder.add(JSON.stringify({ n, text: 'é'.repeat(n % 7) }), linePlace(n + 1));
      if (chunk !== undefined) chunks.push(chunk);
    }
    const last = builder.finish();
    if (last !== undefined) chunks.push(last);
    expect(builder.finish()).toBeUndefined();
    const all = chunks.flatMap((chunk) => {
      expect(Buffer.byteLength(chunk.body)).toBe(chunk.bytes);
      expect(chunk.bytes).toBeLessThanOrEqual(200);
      const body = JSON.parse(chunk.body) as { chunkName: string; data: { n: number }[] };
      expect(body.chunkName).toBe(`file.ndjson-${chunk.no}`);
      expect(body.data).toHaveLength(chunk.records);
      expect(chunk.places).toHaveLength(chunk.records);
      return body.data.map((record) => record.n);
    });
    expect(all).toEqual(Array.from({ length: 50 }, (_, n) => n));
    expect(chunks.map((chunk) => chunk.no)).toEqual(chunks.map((_, index) => index + 1));
  });

  it('fills a chunk close to the limit and no further', () => {
    const builder = new ChunkBuilder('x');
    const record = JSON.stringify({ pad: 'x'.repeat(1000) });
    let chunk: Chunk | undefined;
    while (chunk === undefined) chunk = builder.add(record, linePlace(1));
    expect(chunk.bytes).toBeLessThanOrEqual(CHUNK_BODY_BYTES_MAX);
    expect(chunk.bytes).toBeGreaterThan(CHUNK_BODY_BYTES_MAX - record.length - 2);
    expect(CHUNK_BODY_BYTES_MAX).toBeLessThan(1024 * 1024);
  });

  it('caps the records of a chunk', () => {
    const builder = new ChunkBuilder('x', 1_000_000, 3);
    const sizes: number[] = [];
    for (let n = 0; n < 7; n += 1) {
      const chunk = builder.add('{}', linePlace(1));
      if (chunk !== undefined) sizes.push(chunk.records);
    }
    sizes.push(builder.finish()?.records ?? 0);
    expect(sizes).toEqual([3, 3, 1]);
  });

  it('refuses a record that no chunk can carry, and goes on', () => {
    const builder = new ChunkBuilder('x', 100);
    builder.add('{"a":1}', linePlace(1));
    expect(() => builder.add(JSON.stringify({ big: 'y'.repeat(100) }), linePlace(1))).toThrow(RangeError);
    expect(builder.finish()?.records).toBe(1);
  });
});
