import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/hash-cost.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Flow scripts run in isolated-vm isolates, which need Node's startup snapshot off
    // (docs/adr/0012-flow-script-isolation.md).
    // Three files at a time, even on two cores: most of a file's time is spent waiting on a
    // spawned service, a store or a browser (about 4.5 minutes on SQLite instead of 7.5).
    poolOptions: { forks: { execArgv: ['--no-node-snapshot'], maxForks: 3, minForks: 1 } },
    reporters: ['default'],
  },
});
