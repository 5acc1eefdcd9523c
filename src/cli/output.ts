import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';

/** Exit statuses of the command line: success, refused request or failed records, bad usage. */
export const EXIT_OK = 0;
export const EXIT_REFUSED = 1;
export const EXIT_USAGE = 2;

/** A command-line failure with the exit status it maps to. */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A CliError with exit status 2 (bad usage). */
export function usageError(message: string): CliError {
  return new CliError(message, EXIT_USAGE);
}

/** Where a command writes; tests capture it. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** True when standard error is a terminal, so progress bars make sense. */
  interactive: boolean;
  /** True when standard input is a terminal, so a question can be asked. */
  inputInteractive: boolean;
  /** Asks a yes/no question on the terminal; true only for an answer of y or yes. */
  confirm(question: string): Promise<boolean>;
  /** Asks for a secret on the terminal without showing what is typed; the answer as typed. */
  askSecret(question: string): Promise<string>;
  /**
   * All of standard input as text. Throws a CliError (exit 2) once it holds more than
   * `bytesMax` bytes.
   */
  readInput(bytesMax: number): Promise<string>;
}

/** True for an answer that means yes. */
export function isYes(answer: string): boolean {
  return /^\s*y(es)?\s*$/i.test(answer);
}

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const BACKSPACES = new Set(['\u007f', '\b']);

/** What was typed (or pasted) after the end of the last hidden line, kept for the next one. */
let typedAhead = '';

/**
 * Reads one line from the terminal in raw mode, so nothing typed is echoed: Enter or Ctrl-D ends
 * it, Backspace takes the last character back, Ctrl-C gives up (exit 1). Characters that came
 * after the line's end (two lines pasted at once) are kept for the next question.
 */
function readHiddenLine(question: string): Promise<string> {
  const input = process.stdin;
  process.stderr.write(question);
  return new Promise((resolvePromise, reject) => {
    let typed: string[] = [];
    const finish = (rest: string[], failure?: CliError) => {
      typedAhead = (rest[0] === '\n' ? rest.slice(1) : rest).join('');
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      process.stderr.write('\n');
      if (failure === undefined) resolvePromise(typed.join(''));
      else reject(failure);
    };
    const onData = (chunk: string) => {
      const chars = [...chunk];
      for (const [index, char] of chars.entries()) {
        const rest = chars.slice(index + 1);
        if (char === '\r' || char === '\n' || char === CTRL_D) return finish(rest);
        if (char === CTRL_C)
          return finish([], new CliError('interrupted: nothing was changed', EXIT_REFUSED));
        typed = BACKSPACES.has(char) ? typed.slice(0, -1) : [...typed, char];
      }
    };
    input.setEncoding('utf8');
    input.setRawMode(true);
    input.on('data', onData);
    const ahead = typedAhead;
    typedAhead = '';
    if (ahead !== '') onData(ahead);
    if (input.listeners('data').includes(onData)) input.resume();
  });
}

export const processIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  interactive: process.stderr.isTTY === true,
  inputInteractive: process.stdin.isTTY === true,
  async confirm(question) {
    const terminal = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return isYes(await terminal.question(`${question} [y/N] `));
    } finally {
      terminal.close();
    }
  },
  askSecret: readHiddenLine,
  async readInput(bytesMax) {
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of process.stdin) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      bytes += buffer.length;
      if (bytes > bytesMax) throw usageError(`standard input holds more than ${bytesMax} bytes`);
      chunks.push(buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  },
};

/**
 * Checks that FILE can be created: its folder exists and is a folder. Throws a usage error
 * (exit 2) naming the folder otherwise, so a typo costs one clear line instead of a stack trace
 * after the download.
 */
export async function checkOutputFile(file: string): Promise<void> {
  const folder = dirname(resolve(file));
  let info: Stats;
  try {
    info = await stat(folder);
  } catch {
    throw usageError(`cannot write ${file}: the folder ${folder} does not exist`);
  }
  if (!info.isDirectory()) throw usageError(`cannot write ${file}: ${folder} is not a folder`);
}

/** True when an --output or FILE argument means standard output. */
export function isStandardOutput(file: string | undefined): boolean {
  return file === undefined || file === '-';
}

/** The counts of a `{ name: number }` object as aligned `  name  count` lines. */
export function countLines(counts: Record<string, unknown>): string[] {
  const names = Object.keys(counts);
  const width = Math.max(0, ...names.map((name) => name.length));
  return names.map((name) => `  ${name.padEnd(width)}  ${String(counts[name])}`);
}
