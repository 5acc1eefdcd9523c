/**
 * Writes the OpenAPI document of every endpoint to docs/api/openapi.json (style: generated
 * artefacts are committed; test/unit/openapi.test.ts fails when the file is stale). Usage:
 * `npm run openapi`.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServices } from '../src/composition/services.js';
import { buildApp } from '../src/http/app.js';
import { systemClock } from '../src/lib/clock.js';
import { migrateToLatest } from '../src/storage/migrations/index.js';
import { openStore } from '../src/storage/store.js';

export const OPENAPI_PATH = fileURLToPath(new URL('../docs/api/openapi.json', import.meta.url));

/** The OpenAPI document as the running service serves it at /openapi.json. */
export async function generateOpenApi(): Promise<string> {
  const store = openStore('sqlite::memory:');
  await migrateToLatest(store);
  const services = createServices(store, systemClock, {
    accessTokenTtlSeconds: 300,
    refreshTokenTtlSeconds: 1800,
    businessDate: undefined,
  });
  const app = await buildApp({ store, services, logger: false });
  await app.ready();
  try {
    return `${JSON.stringify(app.swagger(), null, 2)}\n`;
  } finally {
    await app.close();
    await store.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OPENAPI_PATH, await generateOpenApi());
  process.stdout.write(`wrote ${OPENAPI_PATH}\n`);
}
