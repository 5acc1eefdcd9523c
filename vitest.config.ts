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
    poolOptions: { forks: { execArgv: ['--no-node-snapshot'] } },
    reporters: ['default'],
  },
});
