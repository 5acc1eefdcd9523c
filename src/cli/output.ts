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
}

/** True for an answer that means yes. */
export function isYes(answer: string): boolean {
  return /^\s*y(es)?\s*$/i.test(answer);
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
