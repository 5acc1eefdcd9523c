/**
 * `npm run prepare`: builds the service (TypeScript to `dist/`) after `npm install` and `npm ci`.
 * `npx ledgerflow …` in the project installs the project into npm's own cache the first time,
 * which runs this script again: there the build that `npm install` made is used as it is, so the
 * first command after an install is not a full build (30 s) slower than the next ones.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const builtCli = new URL('../dist/cli/main.js', import.meta.url);
if (process.env.npm_command === 'exec' && existsSync(builtCli)) process.exit(0);
const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
  stdio: 'inherit',
});
process.exit(tsc.status ?? 1);
