import { EnvError } from '../env.js';
import { CliError, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, type Io, processIo } from './output.js';
import { configCommand } from './remote/config-commands.js';
import { ingestCommand } from './remote/ingest-command.js';
import { journalsCommand } from './remote/journals-command.js';
import { credentialsCommand, usersCommand } from './store-commands.js';

const USAGE = `usage: ledgerflow <command>

On the store (DATABASE_URL):
  users create --email E --role R [--role R2] [--name N]
  credentials create --owner EMAIL [--name N] [--expires-in-days N]
  credentials list
  credentials revoke CLIENT_ID

Against a running service (--url, --client-id, --client-secret or LEDGERFLOW_URL,
LEDGERFLOW_CLIENT_ID, LEDGERFLOW_CLIENT_SECRET):
  config pull FILE            download the configuration as pretty JSON (FILE - for stdout)
  config push FILE            upload it; validation errors are printed as PATH: MESSAGE
  config wipe                 delete the configuration and the processing data
  ingest FILE --namespace NS --entity E [--name N] [--format json|ndjson|csv]
         [--parallel 4] [--timeout PT15M] [--partial]
                              upload a JSON, NDJSON or CSV file in chunks under 1 MiB
  journals export --format csv|jsonl|ledger [--output FILE] [--status posted|unposted]
         [--accounting-config NAME]

Exit status: 0 success, 1 refused request or failed records, 2 bad usage.`;

type Command = (args: string[], io: Io) => Promise<void>;

const COMMANDS: Record<string, Command> = {
  users: usersCommand,
  credentials: credentialsCommand,
  config: configCommand,
  ingest: ingestCommand,
  journals: journalsCommand,
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
