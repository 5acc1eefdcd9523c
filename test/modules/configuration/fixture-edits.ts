/**
 * Edits of the realistic fixture (docs/examples/configuration.json) for the tests of the upload
 * check: a fresh copy, JSON Pointer get, set and remove, and the errors an edit brings.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { validateConfiguration } from '../../../src/composition/configuration-checks.js';
import type { ConfigurationError } from '../../../src/modules/configuration/configuration-errors.js';

const FIXTURE_URL = new URL('../../../docs/examples/configuration.json', import.meta.url);

/** Flow node ids of the fixture's four-step flow. */
export const INPUT = '0b6c1b9e-2f4a-4d7e-9a51-3c1f8e2d4a01';
export const SCRIPT = '5d2e7c4a-8b1f-4e3a-a6c9-7f0e1d2b3c02';
export const ENGINE = '9a4f3e2d-1c0b-4a9e-8d7c-6b5a4f3e2d03';
export const PROCESSOR = 'c3d2e1f0-a9b8-4c7d-9e6f-5a4b3c2d1e04';
export const FLOW = '/configuration/flows/0/graph';

/** A fresh, mutable copy of the realistic fixture. */
export function fixture(): Record<string, unknown> {
  return JSON.parse(readFileSync(FIXTURE_URL, 'utf8')) as Record<string, unknown>;
}

/** Splits an RFC 6901 pointer into unescaped segments. */
function segments(path: string): string[] {
  return path
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The container of the last segment of `path` and that segment, for editing. */
function parentOf(root: unknown, path: string): [Record<string, unknown> | unknown[], string] {
  const parts = segments(path);
  const last = parts.pop();
  let current: unknown = root;
  for (const part of parts) {
    if (Array.isArray(current)) current = current[Number(part)];
    else if (typeof current === 'object' && current !== null)
      current = (current as Record<string, unknown>)[part];
    else throw new Error(`no value at ${path}`);
  }
  if (last === undefined || typeof current !== 'object' || current === null)
    throw new Error(`bad path ${path}`);
  return [current as Record<string, unknown> | unknown[], last];
}

export function get(root: unknown, path: string): unknown {
  const [parent, key] = parentOf(root, path);
  return Array.isArray(parent) ? parent[Number(key)] : parent[key];
}

export function set(root: unknown, path: string, value: unknown): void {
  const [parent, key] = parentOf(root, path);
  if (Array.isArray(parent)) parent[Number(key)] = value;
  else parent[key] = value;
}

export function remove(root: unknown, path: string): void {
  const [parent, key] = parentOf(root, path);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
}

/** Validates and returns the errors, failing the test if the document passed. */
export function errorsOf(doc: unknown): ConfigurationError[] {
  const result = validateConfiguration(doc);
  if (result.ok) throw new Error('expected the document to be rejected');
  return result.errors;
}

/** Applies the edit to a fresh fixture and returns the errors. */
export function errorsAfter(edit: (doc: Record<string, unknown>) => void): ConfigurationError[] {
  const doc = fixture();
  edit(doc);
  return errorsOf(doc);
}

export function expectOnly(errors: ConfigurationError[], path: string, message: string | RegExp): void {
  expect(errors).toHaveLength(1);
  expect(errors[0]?.path).toBe(path);
  expect(errors[0]?.message).toMatch(message);
}
