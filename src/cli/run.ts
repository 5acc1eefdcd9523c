import { EnvError } from '../env.js';
import { CliError, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, type Io, processIo } from './output.js';
import { credentialsCommand, usersCommand } from './store-commands.js';

const USAGE = `usage: ledgerflow <command>

On the store (DATABASE_URL):
  users create --email E --role R [--role R2] [--name N]
  credentials create --owner EMAIL [--name N] [--expires-in-days N]
  credentials list
  credentials revoke CLIENT_ID

Against a running service (--url, --client-id, --client-secret or LEDGERFLOW_URL,
LEDGERFLOW_CLIENT_ID, LEDGERFLOW_CLIENT_SECRET):
  config pull FILE | config push FILE | config wipe
  ingest FILE --namespace NS --entity E
  journals export --format csv|jsonl|ledger [--output FILE]`;

type Command = (args: string[], io: Io) => Promise<void>;

const COMMANDS: Record<string, Command> = {
  users: usersCommand,
  credentials: credentialsCommand,
};

/** Runs one command line and returns its exit status (contract section 7). */
export async function runCli(argv: string[], io: Io = processIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    io.err(`ledgerflow: unknown command ${name}\n${USAGE}`);
    return EXIT_USAGE;
  }
  try {
    await command(args, io);
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
      io.err(`ledgerflow: ${error.message}`);
      return EXIT_USAGE;
    }
    io.err(`ledgerflow: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT_REFUSED;
  }
}
