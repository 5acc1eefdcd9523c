import { CliError, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, type Io, processIo } from './output.js';
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

/**
 * One command: its usage text and `load`, which imports the module that runs it. The modules are
 * imported only when their command runs: together they pull in the store, its migrations and
 * every service (about a second of imports), which `--help`, a usage error or a remote command
 * has no use for.
 */
interface CommandEntry {
  usage: string;
  load(): Promise<Command>;
}

const COMMANDS: Record<string, CommandEntry> = {
  users: { usage: USERS_USAGE, load: async () => (await import('./store-commands.js')).usersCommand },
  credentials: {
    usage: CREDENTIALS_USAGE,
    load: async () => (await import('./store-commands.js')).credentialsCommand,
  },
  audit: { usage: AUDIT_USAGE, load: async () => (await import('./audit-commands.js')).auditCommand },
  config: {
    usage: CONFIG_USAGE,
    load: async () => (await import('./remote/config-commands.js')).configCommand,
  },
  ingest: {
    usage: INGEST_USAGE,
    load: async () => (await import('./remote/ingest-command.js')).ingestCommand,
  },
  ingestions: {
    usage: INGESTIONS_USAGE,
    load: async () => (await import('./remote/ingestions-command.js')).ingestionsCommand,
  },
  correct: {
    usage: CORRECT_USAGE,
    load: async () => (await import('./remote/correct-command.js')).correctCommand,
  },
  journals: {
    usage: JOURNALS_USAGE,
    load: async () => (await import('./remote/journals-command.js')).journalsCommand,
  },
  balances: {
    usage: BALANCES_USAGE,
    load: async () => (await import('./remote/report-commands.js')).balancesCommand,
  },
  'processing-errors': {
    usage: PROCESSING_ERRORS_USAGE,
    load: async () => (await import('./remote/report-commands.js')).processingErrorsCommand,
  },
  errors: {
    usage: ERRORS_USAGE,
    load: async () => (await import('./remote/errors-command.js')).errorsCommand,
  },
  extract: {
    usage: EXTRACT_USAGE,
    load: async () => (await import('./remote/extract-command.js')).extractCommand,
  },
  webhooks: {
    usage: WEBHOOKS_USAGE,
    load: async () => (await import('./remote/webhooks-command.js')).webhooksCommand,
  },
  approvals: {
    usage: APPROVALS_USAGE,
    load: async () => (await import('./remote/approvals-command.js')).approvalsCommand,
  },
  periods: {
    usage: PERIODS_USAGE,
    load: async () => (await import('./remote/periods-command.js')).periodsCommand,
  },
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
    const run = await command.load();
    await run(args, io);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`ledgerflow: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
      io.err(`ledgerflow: ${unknownOptionMessage(error, name, command.usage) ?? error.message}`);
      return EXIT_USAGE;
    }
    io.err(`ledgerflow: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT_REFUSED;
  }
}
