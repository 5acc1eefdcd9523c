#!/usr/bin/env node
import { runCli } from './run.js';

runCli(process.argv.slice(2)).then((status) => {
  process.exitCode = status;
});
