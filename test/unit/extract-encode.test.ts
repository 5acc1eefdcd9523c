import { describe, expect, it } from 'vitest';
import { headerOf, lineOf, projected } from '../../src/modules/extracts/encode.js';

/** How extract rows are written (issue 25): JSON Lines, and CSV as RFC 4180 says. */
describe('extract rows as JSON Lines and CSV', () => {
  const row = { a: 'plain', b: 'with, comma', c: 'say "hi"', d: 'two\nlines', e: null, f: { x: 1 }, g: 12.5 };
  const fields = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

  it('quotes what needs it, doubles quotes, writes objects as JSON and null as empty', () => {
    expect(headerOf('csv', fields)).toBe('a,b,c,d,e,f,g\r\n');
    expect(lineOf('csv', row, fields)).toBe(
      'plain,"with, comma","say ""hi""","two\nlines",,"{""x"":1}",12.5\r\n',
    );
  });

  it('writes one JSON object per line, and JSON Lines has no header', () => {
    expect(headerOf('jsonl', fields)).toBe('');
    const line = lineOf('jsonl', row, fields);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(line)).toEqual(row);
  });

  it('keeps the configured fields in their order, null for a field the row lacks', () => {
    expect(Object.entries(projected(row, ['g', 'a', 'missing']))).toEqual([
      ['g', 12.5],
      ['a', 'plain'],
      ['missing', null],
    ]);
    expect(projected(row, null)).toBe(row);
  });
});
