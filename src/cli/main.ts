#!/usr/bin/env node
import { runCli } from './run.js';

// The reader of standard output went away (`ledgerflow … | head -1`): there is no one left to
// tell anything, so the command ends quietly, as command-line tools do when their pipe closes.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

runCli(process.argv.slice(2)).then((status) => {
  process.exitCode = status;
});
