import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateOpenApi, OPENAPI_PATH } from '../../scripts/openapi.js';

describe('committed OpenAPI document', () => {
  it('is what the route schemas generate (run `npm run openapi` after changing a route)', async () => {
    expect(readFileSync(OPENAPI_PATH, 'utf8')).toBe(await generateOpenApi());
  });
});
