/** Exit statuses of contract section 7. */
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

export function usageError(message: string): CliError {
  return new CliError(message, EXIT_USAGE);
}

/** Where a command writes; tests capture it. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** True when standard error is a terminal, so progress bars make sense. */
  interactive: boolean;
}

export const processIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  interactive: process.stderr.isTTY === true,
};
