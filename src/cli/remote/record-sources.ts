import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { type Info, parse } from 'csv-parse';
import { usageError } from '../output.js';

/** Input file formats of `ledgerflow ingest`. */
export type InputFormat = 'json' | 'ndjson' | 'csv';

/** Characters of a top-level JSON member name kept while looking for `data`. */
const MEMBER_NAME_CHARS_MAX = 64;

/**
 * Where a record is in its file: `where` as it is printed (`line 12` of NDJSON or CSV, counted
 * from 1 with the CSV header as line 1; `index 7` of a JSON array, from 0), and `at`, the line
 * number or index alone, which orders the records of one file.
 */
export interface Place {
  where: string;
  at: number;
}

/** The place of line `n` (from 1) of an NDJSON or CSV file. */
export function linePlace(n: number): Place {
  return { where: `line ${n}`, at: n };
}

/** The place of the record at `index` (from 0) of a JSON array. */
export function indexPlace(index: number): Place {
  return { where: `index ${index}`, at: index };
}

/**
 * One item read from an input file: a record as the JSON text to send (its numbers exactly as
 * written, so a decimal is never rounded through a float), or a piece of input that cannot be
 * sent, each with its place in the file.
 */
export type SourceItem =
  | { kind: 'record'; text: string; place: Place }
  | { kind: 'invalid'; place: Place; message: string };

/**
 * The format named by `--format`, or else by the file extension (`.json`, `.ndjson`/`.jsonl`,
 * `.csv`). Throws a usage error when neither names one.
 */
export function inputFormatOf(file: string, explicit: string | undefined): InputFormat {
  const name = (explicit ?? file.slice(file.lastIndexOf('.') + 1)).toLowerCase();
  if (name === 'json') return 'json';
  if (name === 'ndjson' || name === 'jsonl') return 'ndjson';
  if (name === 'csv') return 'csv';
  throw usageError(
    explicit === undefined
      ? `cannot tell the format of ${file} from its extension; use --format json|ndjson|csv`
      : `--format must be json, ndjson or csv, got ${explicit}`,
  );
}

/** A record text checked to be one JSON object, or the reason it cannot be sent. */
function recordItem(text: string, place: Place): SourceItem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'invalid', place, message: `not valid JSON (${(error as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { kind: 'invalid', place, message: 'is not a JSON object' };
  return { kind: 'record', text, place };
}

/**
 * NDJSON (one record per line, blank lines skipped), read line by line so that a file of any
 * size takes the memory of one line.
 */
export async function* ndjsonRecords(input: Readable): AsyncGenerator<SourceItem> {
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let lineNo = 0;
  for await (const line of lines) {
    lineNo += 1;
    const text = line.trim();
    if (text !== '') yield recordItem(text, linePlace(lineNo));
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** A record's text as the scanner completes it, with its index in the records array (from 0). */
interface ScannedRecord {
  text: string;
  index: number;
}

/**
 * Splits a JSON document that is an array of records, or an object with a `data` array of
 * records, into the raw text of each record, as the text arrives. It tracks only strings and
 * nesting; each record's text is checked by JSON.parse afterwards, and a structural error of the
 * document as a whole (unclosed, no `data`) is reported by `end`. Memory: one record.
 */
export class JsonRecordsScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private state: 'start' | 'object' | 'records' | 'after' = 'start';
  /** Nesting depth of the elements of the records array. */
  private recordsDepth = 0;
  private memberName = '';
  private pendingMember: string | undefined;
  private inRecord = false;
  private recordParts: string[] = [];
  private recordIndex = 0;
  /** Where the record being read starts in the piece being pushed; -1 when none is. */
  private recordStart = -1;

  /**
   * Feeds the next piece of the document; returns the record texts completed by it, each with
   * its index in the records array (from 0).
   */
  push(piece: string): ScannedRecord[] {
    const done: ScannedRecord[] = [];
    this.recordStart = this.inRecord ? 0 : -1;
    for (let index = 0; index < piece.length; index += 1) {
      const code = piece.charCodeAt(index);
      if (this.inString) this.readStringChar(piece, index, code);
      else if (isJsonSpace(code)) continue;
      else if (this.state === 'start') this.readDocumentStart(code);
      else this.readStructureChar(piece, index, code, done);
    }
    if (this.inRecord) this.recordParts.push(piece.slice(this.recordStart));
    return done;
  }

  /** A character inside a string: an escape, its end, or part of a top-level member name. */
  private readStringChar(piece: string, index: number, code: number): void {
    if (this.escaped) this.escaped = false;
    else if (code === BACKSLASH) this.escaped = true;
    else if (code === QUOTE) this.inString = false;
    else if (this.state === 'object' && this.depth === 1 && this.memberName.length < MEMBER_NAME_CHARS_MAX)
      this.memberName += piece[index];
  }

  /** The document's first character: an array of records or an object to find `data` in. */
  private readDocumentStart(code: number): void {
    if (code === OPEN_BRACKET) {
      this.state = 'records';
      this.recordsDepth = 1;
    } else if (code === OPEN_BRACE) {
      this.state = 'object';
    } else {
      throw usageError('the JSON file must hold an array of records or an object with a "data" array');
    }
    this.depth = 1;
  }

  /**
   * A character outside strings after the document's start: it may open a string, a record or
   * the `data` array, close a record or the records array, or separate records or members.
   */
  private readStructureChar(piece: string, index: number, code: number, done: ScannedRecord[]): void {
    if (code === QUOTE) {
      this.beginRecordIfDue(index);
      this.inString = true;
      if (this.state === 'object' && this.depth === 1) this.memberName = '';
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      this.beginRecordIfDue(index);
      if (
        this.state === 'object' &&
        this.depth === 1 &&
        code === OPEN_BRACKET &&
        this.pendingMember === 'data'
      ) {
        this.state = 'records';
        this.recordsDepth = 2;
      }
      this.depth += 1;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      this.depth -= 1;
      if (this.state === 'records' && this.depth === this.recordsDepth - 1) {
        if (this.inRecord) this.finishRecord(piece, index, done);
        this.state = 'after';
      }
    } else if (code === COMMA) {
      if (this.state === 'records' && this.depth === this.recordsDepth && this.inRecord)
        this.finishRecord(piece, index, done);
      if (this.state === 'object' && this.depth === 1) this.pendingMember = undefined;
    } else if (code === COLON) {
      if (this.state === 'object' && this.depth === 1) this.pendingMember = this.memberName;
    } else {
      this.beginRecordIfDue(index);
    }
  }

  /** Starts a record at `index` of the piece when a value begins at the records' depth. */
  private beginRecordIfDue(index: number): void {
    if (this.state === 'records' && !this.inRecord && this.depth === this.recordsDepth) {
      this.inRecord = true;
      this.recordStart = index;
    }
  }

  /** Ends the record being read before `end` of the piece and adds its text to `done`. */
  private finishRecord(piece: string, end: number, done: ScannedRecord[]): void {
    this.recordParts.push(piece.slice(this.recordStart, end));
    done.push({ text: this.recordParts.join('').trim(), index: this.recordIndex });
    this.recordIndex += 1;
    this.recordParts = [];
    this.inRecord = false;
    this.recordStart = -1;
  }

  /** Checks that the document was complete; throws a usage error when it was not. */
  end(): void {
    if (this.state === 'start') throw usageError('the JSON file is empty');
    if (this.state === 'object') throw usageError('the JSON file is an object without a "data" array');
    if (this.state === 'records' || this.depth !== 0 || this.inString)
      throw usageError('the JSON file ends in the middle of the document');
  }
}

/** A JSON file (array of records or `{ "data": [...] }`), streamed through JsonRecordsScanner. */
export async function* jsonRecords(input: Readable): AsyncGenerator<SourceItem> {
  input.setEncoding('utf8');
  const scanner = new JsonRecordsScanner();
  for await (const piece of input) {
    for (const { text, index } of scanner.push(String(piece))) yield recordItem(text, indexPlace(index));
  }
  scanner.end();
}

/** What CSV typing needs to know of an entity attribute (GET .../entities/{entity}). */
export interface AttributeType {
  name: string;
  type: string;
  elementType?: string | undefined;
}

/**
 * A CSV cell as a JSON value of the attribute's type: INTEGER as a number (when it is a safe
 * integer), BOOLEAN as true/false, DECIMAL and AMOUNT kept as the exact string, LIST as a JSON
 * array written as JSON text or `;`-separated elements (typed by `elementType`), everything else
 * as text. A cell that does not convert is sent as written, so the service names the error.
 */
export function typedCell(cell: string, type: string | undefined, elementType?: string): unknown {
  const kind = (type ?? 'TEXT').toUpperCase();
  const trimmed = cell.trim();
  switch (kind) {
    case 'INTEGER': {
      const value = Number(trimmed);
      return /^[+-]?\d+$/.test(trimmed) && Number.isSafeInteger(value) ? value : cell;
    }
    case 'BOOLEAN': {
      const lower = trimmed.toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : cell;
    }
    case 'DECIMAL':
    case 'AMOUNT':
    case 'DATE':
    case 'DATETIME':
    case 'UUID':
      return trimmed;
    case 'LIST':
    case 'LISTTYPE': {
      if (trimmed.startsWith('[')) {
        try {
          const parsed: unknown = JSON.parse(trimmed);
          if (Array.isArray(parsed)) return parsed;
        } catch {
          // Not JSON after all: read as a ;-separated list.
        }
      }
      return trimmed.split(';').map((element) => typedCell(element.trim(), elementType ?? 'TEXT'));
    }
    default:
      return cell;
  }
}

/**
 * One CSV row as a record keyed by the header: an empty cell leaves the field out, a column
 * that is not an attribute is sent as text (the service reports it as unknown).
 */
export function csvRecordOf(
  header: readonly string[],
  cells: readonly string[],
  attributes: ReadonlyMap<string, AttributeType>,
): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  header.forEach((name, index) => {
    const cell = cells[index];
    if (cell === undefined || cell === '') return;
    const attribute = attributes.get(name);
    record[name] = typedCell(cell, attribute?.type, attribute?.elementType);
  });
  return record;
}

/**
 * A CSV file with a header row, streamed through csv-parse; values are typed by the entity's
 * attributes (csvRecordOf). A row whose field count differs from the header's cannot be sent.
 * Throws a usage error for a missing, empty or repeated column name, and csv-parse's error
 * (with its line) for a file that is not CSV. Records are placed by the line they start on,
 * the header being line 1.
 */
export async function* csvRecords(
  input: Readable,
  attributes: ReadonlyMap<string, AttributeType>,
): AsyncGenerator<SourceItem> {
  const parser = input.pipe(
    parse({ bom: true, skip_empty_lines: true, relax_column_count: true, info: true }),
  );
  let header: string[] | undefined;
  // With `info`, csv-parse gives each record with where it was read.
  for await (const row of parser as AsyncIterable<{ record: string[]; info: Info }>) {
    const cells = row.record.map(String);
    // csv-parse counts the lines up to the end of the record; a quoted cell may span lines, and
    // a record is placed at the line it starts on.
    const spannedLines = cells.reduce((sum, cell) => sum + (cell.match(/\n/g)?.length ?? 0), 0);
    const place = linePlace(row.info.lines - spannedLines);
    if (header === undefined) {
      header = cells.map((name) => name.trim());
      const seen = new Set<string>();
      for (const name of header) {
        if (name === '') throw usageError('the CSV header has an empty column name');
        if (seen.has(name)) throw usageError(`the CSV header names ${name} twice`);
        seen.add(name);
      }
      continue;
    }
    if (cells.length !== header.length) {
      yield { kind: 'invalid', place, message: `has ${cells.length} fields, the header ${header.length}` };
      continue;
    }
    yield { kind: 'record', text: JSON.stringify(csvRecordOf(header, cells, attributes)), place };
  }
}
