import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateOpenApi, OPENAPI_PATH } from '../../scripts/openapi.js';

interface Operation {
  operationId?: string;
  tags?: string[];
}

describe('committed OpenAPI document', () => {
  it('is what the route schemas generate (run `npm run openapi` after changing a route)', async () => {
    expect(readFileSync(OPENAPI_PATH, 'utf8')).toBe(await generateOpenApi());
  });

  it('names every operation once, in camelCase, under tags it declares (client generators need both)', () => {
    const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as {
      tags: { name: string; description: string }[];
      paths: Record<string, Record<string, Operation>>;
    };
    const declared = new Set(document.tags.map(({ name }) => name));
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        at: `${method.toUpperCase()} ${path}`,
        ...operation,
      })),
    );
    for (const { at, operationId, tags } of operations) {
      expect(operationId, at).toMatch(/^[a-z]+(?:[A-Z][a-z]*)+$/);
      expect(tags?.length ?? 0, at).toBeGreaterThan(0);
      for (const tag of tags ?? []) expect(declared, `${at}: ${tag}`).toContain(tag);
    }
    const ids = operations.map(({ operationId }) => operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { name, description } of document.tags) expect(description, name).not.toBe('');
  });
});
