import { describe, expect, it } from 'vitest';
import {
  CONFIGURATION_FORMAT_VERSION,
  ConfigurationDocumentSchema,
  ConfigurationUploadSchema,
  SUPPORTED_CONFIGURATION_VERSIONS,
} from '../../../src/modules/configuration/model.js';

interface SchemaNode {
  type?: unknown;
  description?: unknown;
  additionalProperties?: unknown;
  properties?: Record<string, SchemaNode>;
  patternProperties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
}

/** Every schema node below `schema`, with a readable location. */
function* walk(schema: SchemaNode, where: string): Generator<[string, SchemaNode]> {
  yield [where, schema];
  for (const [k, v] of Object.entries(schema.properties ?? {})) yield* walk(v, `${where}.${k}`);
  for (const v of Object.values(schema.patternProperties ?? {})) yield* walk(v, `${where}{*}`);
  if (schema.items !== undefined) yield* walk(schema.items, `${where}[]`);
  for (const [i, v] of (schema.anyOf ?? []).entries()) yield* walk(v, `${where}|${i}`);
}

describe('configuration model', () => {
  it('labels the current format version as supported', () => {
    expect(CONFIGURATION_FORMAT_VERSION).toBe('v20230211');
    expect(SUPPORTED_CONFIGURATION_VERSIONS).toContain(CONFIGURATION_FORMAT_VERSION);
  });

  it.each([
    ['download', ConfigurationDocumentSchema],
    ['upload', ConfigurationUploadSchema],
  ])('closes every object of the %s schema (unknown members are errors)', (_, schema) => {
    const open = [...walk(schema as SchemaNode, '$')]
      .filter(([, s]) => s.properties !== undefined && s.additionalProperties !== false)
      .map(([where]) => where);
    expect(open).toEqual([]);
  });

  it('describes every field (the OpenAPI document is generated from the schema)', () => {
    const undocumented = [...walk(ConfigurationUploadSchema as SchemaNode, '$')]
      .filter(([where]) => !where.endsWith('[]') && !where.endsWith('{*}') && !/\|\d+$/.test(where))
      .filter(([, s]) => typeof s.description !== 'string')
      .map(([where]) => where);
    expect(undocumented).toEqual([]);
  });
});
