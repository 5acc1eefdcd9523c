import {
  configDefaults,
  defineConfig,
  type TestProjectInlineConfiguration,
  type ViteUserConfig,
} from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { integrationDialects } from './test/setup/dialects.js';

/**
 * Unit tests: pure code (modules, accounting scenarios, helpers of the process), no store, no
 * built service; they run once, in seconds (`npm run test:unit`). Everything else under test/ is
 * an integration test and runs once per store.
 */
const UNIT = ['test/unit/**/*.test.ts', 'test/modules/**/*.test.ts', 'test/scenarios/**/*.test.ts'];

/** The integration tests on one store: the helpers read it from TEST_DATABASE_URL. */
function integration(name: string, databaseUrl: string): TestProjectInlineConfiguration {
  return {
    extends: true,
    test: {
      name,
      include: ['test/**/*.test.ts'],
      exclude: [...configDefaults.exclude, ...UNIT],
      env: { TEST_DATABASE_URL: databaseUrl },
    },
  };
}

/** The folders whose files take longest: services spawned, killed and restarted; real hash costs. */
const SLOW_FOLDERS = /\/test\/(?:e2e|security)\//;

/**
 * Vitest's order (files that failed or took longest last time first, by size when it has no
 * timings), with the slow folders first: a fresh clone (CI) has no timings, and a slow file
 * started last would leave the other cores idle at the end.
 */
class SlowFoldersFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const slow = (file: TestSpecification) => SLOW_FOLDERS.test(file.moduleId);
    return [...sorted.filter(slow), ...sorted.filter((file) => !slow(file))];
  }
}

export default defineConfig(async (): Promise<ViteUserConfig> => {
  const { sqliteUrl, postgresUrl } = await integrationDialects();
  return {
    test: {
      setupFiles: ['test/setup/hash-cost.ts'],
      // The end-to-end tests spawn services (often two, killed and started again) while three
      // other files run beside them on two cores: a kill-and-recover test that takes 10 s alone
      // took over 60 s in a full run.
      testTimeout: 180_000,
      hookTimeout: 120_000,
      pool: 'forks',
      // Flow scripts run in isolated-vm isolates, which need Node's startup snapshot off
      // (docs/adr/0012-flow-script-isolation.md).
      // Four files at a time, even on two cores: most of a file's time is spent waiting on a
      // spawned service, a store or a browser, and both stores' files share the pool (measured
      // on a shared 2-core machine: the HTTP and CLI tests on both stores took 186 s with four,
      // 440 s with three, though the machine's load from other work differed between the runs).
      poolOptions: { forks: { execArgv: ['--no-node-snapshot'], maxForks: 4, minForks: 1 } },
      reporters: ['default'],
      sequence: { sequencer: SlowFoldersFirst },
      // Both stores in one run, so the two overlap on the cores; unit tests run once.
      projects: [
        { extends: true, test: { name: 'unit', include: UNIT } },
        integration('integration-sqlite', sqliteUrl),
        ...(postgresUrl === undefined ? [] : [integration('integration-postgres', postgresUrl)]),
      ],
    },
  };
});
