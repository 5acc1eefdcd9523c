import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
/** Most lines of a file, unless its header says why it must be longer. */
const FILE_LINES_MAX = 500;
/** Most lines of a function, unless a comment above it says why it must be one piece. */
const FUNCTION_LINES_MAX = 70;

/** Every TypeScript file under src but the migrations, relative to it. */
function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .map((path) => path.split('\\').join('/'))
    .filter((path) => path.endsWith('.ts') && !path.startsWith('storage/migrations/'));
}

/** The node a function's leading comments are written above: its statement, member or property. */
function commentAnchor(node: ts.Node): ts.Node {
  let anchor = node;
  while (
    anchor.parent !== undefined &&
    !ts.isSourceFile(anchor.parent) &&
    !ts.isClassDeclaration(anchor.parent) &&
    !ts.isBlock(anchor.parent) &&
    !ts.isObjectLiteralExpression(anchor.parent)
  )
    anchor = anchor.parent;
  return anchor;
}

/** The functions of `path` longer than FUNCTION_LINES_MAX with no comment saying why, as `path:line`. */
function longFunctionsWithoutReason(path: string): string[] {
  const text = readFileSync(join(SRC, path), 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      if (last - first + 1 > FUNCTION_LINES_MAX) {
        const anchor = commentAnchor(node);
        const comments = (ts.getLeadingCommentRanges(text, anchor.getFullStart()) ?? [])
          .map((range) => text.slice(range.pos, range.end))
          .join('\n');
        if (!/one piece/i.test(comments)) found.push(`${path}:${first + 1} (${last - first + 1} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The size rules of docs/architecture.md, kept true: no file over 500 lines unless its header
 * says why (`Over 500 lines because …`), no function over 70 lines unless a comment above it says
 * why it must be one piece. Migrations are a history, written once, and are left out.
 */
describe('sizes of src', () => {
  it(`keeps every file at ${FILE_LINES_MAX} lines or fewer, or says why`, () => {
    const over = sourceFiles().filter((path) => {
      const text = readFileSync(join(SRC, path), 'utf8');
      return (
        text.split('\n').length > FILE_LINES_MAX &&
        !/Over 500\s+(?:\*\s+)?lines because/.test(text.slice(0, 2_000))
      );
    });
    expect(over).toEqual([]);
  });

  it(`keeps every function at ${FUNCTION_LINES_MAX} lines or fewer, or says why it is one piece`, () => {
    expect(sourceFiles().flatMap(longFunctionsWithoutReason)).toEqual([]);
  });
});
