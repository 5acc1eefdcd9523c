import { EnvError } from '../env.js';
import { auditCommand } from './audit-commands.js';
import { CliError, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, type Io, processIo } from './output.js';
import { approvalsCommand } from './remote/approvals-command.js';
import { configCommand } from './remote/config-commands.js';
import { correctCommand } from './remote/correct-command.js';
import { errorsCommand } from './remote/errors-command.js';
import { extractCommand } from './remote/extract-command.js';
import { ingestCommand } from './remote/ingest-command.js';
import { ingestionsCommand } from './remote/ingestions-command.js';
import { journalsCommand } from './remote/journals-command.js';
import { periodsCommand } from './remote/periods-command.js';
import { balancesCommand, processingErrorsCommand } from './remote/report-commands.js';
import { webhooksCommand } from './remote/webhooks-command.js';
import { credentialsCommand, usersCommand } from './store-commands.js';
import {
  APPROVALS_USAGE,
  AUDIT_USAGE,
  BALANCES_USAGE,
  CONFIG_USAGE,
  CORRECT_USAGE,
  CREDENTIALS_USAGE,
  ERRORS_USAGE,
  EXTRACT_USAGE,
  INGEST_USAGE,
  INGESTIONS_USAGE,
  JOURNALS_USAGE,
  PERIODS_USAGE,
  PROCESSING_ERRORS_USAGE,
  USAGE,
  USERS_USAGE,
  WEBHOOKS_USAGE,
} from './usage.js';

type Command = (args: string[], io: Io) => Promise<void>;

const COMMANDS: Record<string, { run: Command; usage: string }> = {
  users: { run: usersCommand, usage: USERS_USAGE },
  credentials: { run: credentialsCommand, usage: CREDENTIALS_USAGE },
  audit: { run: auditCommand, usage: AUDIT_USAGE },
  config: { run: configCommand, usage: CONFIG_USAGE },
  ingest: { run: ingestCommand, usage: INGEST_USAGE },
  ingestions: { run: ingestionsCommand, usage: INGESTIONS_USAGE },
  correct: { run: correctCommand, usage: CORRECT_USAGE },
  journals: { run: journalsCommand, usage: JOURNALS_USAGE },
  balances: { run: balancesCommand, usage: BALANCES_USAGE },
  'processing-errors': { run: processingErrorsCommand, usage: PROCESSING_ERRORS_USAGE },
  errors: { run: errorsCommand, usage: ERRORS_USAGE },
  extract: { run: extractCommand, usage: EXTRACT_USAGE },
  webhooks: { run: webhooksCommand, usage: WEBHOOKS_USAGE },
  approvals: { run: approvalsCommand, usage: APPROVALS_USAGE },
  periods: { run: periodsCommand, usage: PERIODS_USAGE },
};

const HELP_FLAGS = new Set(['--help', '-h']);

/** An option name with its dashes and case left out, to match a misspelt one (`--asof`). */
function optionKey(option: string): string {
  return option.replaceAll('-', '').toLowerCase();
}

/**
 * For an unknown option, one line naming it and the option of the command's usage it most
 * likely meant (`--asof`: did you mean `--as-of`?), or where the options are listed; undefined
 * for other parse errors, whose own message is clear.
 */
function unknownOptionMessage(
  error: TypeError & { code: unknown },
  name: string,
  usage: string,
): string | undefined {
  if (error.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return undefined;
  const given = /'(-[^']*)'/.exec(error.message)?.[1];
  if (given === undefined) return undefined;
  const known = new Set(usage.match(/--[a-z][a-z-]*/g) ?? []);
  const meant = [...known].find((option) => optionKey(option) === optionKey(given.split('=')[0] ?? given));
  return meant === undefined
    ? `unknown option ${given}; ledgerflow ${name} --help lists the options`
    : `unknown option ${given}; did you mean ${meant}?`;
}

/**
 * Runs one command line and returns its exit status: 0 success, 1 refused request or failed
 * records, 2 bad usage. `--help` or `-h` anywhere after a command (or `help COMMAND`) prints
 * that command's usage and exits 0.
 */
export async function runCli(argv: string[], io: Io = processIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || HELP_FLAGS.has(first) || (first === 'help' && rest.length === 0)) {
    io.out(USAGE);
    return first === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const name = first === 'help' ? (rest[0] ?? '') : first;
  const args = first === 'help' ? [] : rest;
  const command = COMMANDS[name];
  if (command === undefined) {
    io.err(`ledgerflow: unknown command ${name}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (first === 'help' || args.some((arg) => HELP_FLAGS.has(arg))) {
    io.out(command.usage);
    return EXIT_OK;
  }
  try {
    await command.run(args, io);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`ledgerflow: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof EnvError) {
      io.err(`ledgerflow: ${error.message}`);
      return EXIT_USAGE;
    }
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
      io.err(`ledgerflow: ${unknownOptionMessage(error, name, command.usage) ?? error.message}`);
      return EXIT_USAGE;
    }
    io.err(`ledgerflow: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT_REFUSED;
  }
}
