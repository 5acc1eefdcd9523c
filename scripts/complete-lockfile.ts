/**
 * Adds lock-file entries for the platform-specific optional packages (other operating systems
 * and CPUs) that the package registry reachable here does not serve. Without them `npm ci`
 * refuses the lock file as out of sync; with them it skips those packages on this platform, as
 * it would anyway. Run after changing dependencies: `npx tsx scripts/complete-lockfile.ts`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const LOCK_PATH = fileURLToPath(new URL('../package-lock.json', import.meta.url));
const PLATFORM =
  /(android|darwin|freebsd|openbsd|openharmony|linux|win32)-(arm64|x64|arm|ia32|loong64|ppc64|riscv64|s390x)(?:-(gnueabihf|musleabihf|eabi|gnu|musl|msvc))?$/;

interface LockEntry {
  version?: string;
  dev?: boolean;
  optionalDependencies?: Record<string, string>;
}

const lock = JSON.parse(readFileSync(LOCK_PATH, 'utf8')) as { packages: Record<string, LockEntry> };
const added: string[] = [];
for (const entry of Object.values(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const match = PLATFORM.exec(name);
    if (key in lock.packages || match === null) continue;
    const [, os = '', cpu = '', abi] = match;
    lock.packages[key] = {
      version: range.replace(/^[~^]/, ''),
      ...(entry.dev === true ? { dev: true } : {}),
      optional: true,
      cpu: [cpu],
      os: [os],
      ...(os === 'linux' ? { libc: [abi?.includes('musl') ? 'musl' : 'glibc'] } : {}),
    } as LockEntry;
    added.push(name);
  }
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(LOCK_PATH, `${JSON.stringify({ ...lock, packages: sorted }, null, 2)}\n`);
process.stdout.write(`added ${added.length} entries${added.length > 0 ? `: ${added.join(' ')}` : ''}\n`);
