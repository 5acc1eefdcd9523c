/**
 * Phase 1 of the upload check: the structure and types of every member, checked by Ajv compiled
 * once from the TypeBox model, and Ajv's errors said as rule sentences at JSON Pointer paths.
 * A union (a flow step, a list's element type, a timestamp) is explained by the one branch the
 * value selects, so a wrong step member is not buried under the errors of every other step type.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { type ConfigurationError, escapeSegment, isRecord, valueAt } from './configuration-errors.js';
import { CONFIGURATION_SECTIONS } from './document.js';
import {
  type ConfigurationUpload,
  ConfigurationUploadSchema,
  ENTITY_SCALAR_TYPE_NAMES,
  FLOW_STEP_TYPES,
  PRIMITIVE_TYPE,
  SUPPORTED_CONFIGURATION_VERSIONS,
} from './model.js';

const ajv = new Ajv({ allErrors: true, strict: true });
addFormats.default(ajv, ['date', 'date-time', 'uuid']);

/** Ajv's validator of an upload body; its `errors` are those of the last call. */
export const checkStructure = ajv.compile<ConfigurationUpload>(ConfigurationUploadSchema);

const SUPPORTED_VERSIONS_TEXT = `supported versions: ${SUPPORTED_CONFIGURATION_VERSIONS.join(', ')}`;

/** The schema path suffix of the flow step union, discriminated by `type`. */
const STEP_UNION_SCHEMA_PATH_SUFFIX = '/step/anyOf';

/**
 * The schema path suffix of the element type of a list attribute: branch 0 is a type name
 * (string), branch 1 the canonical object form, as `EntityAttributeTypeSchema` declares them.
 */
const ELEMENT_TYPE_UNION_SCHEMA_PATH_SUFFIX = '/elementType/anyOf';

/**
 * The structural errors of `body` from the raw errors Ajv found in it, as path and rule sentence,
 * in Ajv's order. Pure.
 */
export function structuralErrors(body: unknown, raw: readonly ErrorObject[]): ConfigurationError[] {
  const dropped = new Set<ErrorObject>();
  const replaced = new Map<ErrorObject, ConfigurationError>();
  for (const union of raw.filter((e) => e.keyword === 'anyOf')) {
    const branchPrefix = `${union.schemaPath}/`;
    const branchErrors = raw.filter(
      (e) =>
        e.schemaPath.startsWith(branchPrefix) &&
        (e.instancePath === union.instancePath || e.instancePath.startsWith(`${union.instancePath}/`)),
    );
    if (union.schemaPath.endsWith(ELEMENT_TYPE_UNION_SCHEMA_PATH_SUFFIX)) {
      // A string names a type, an object writes it in the canonical form: only that branch explains.
      const elementType = valueAt(body, union.instancePath);
      const branch = typeof elementType === 'string' ? 0 : isRecord(elementType) ? 1 : -1;
      const keep = `${branchPrefix}${branch}/`;
      for (const e of branchErrors) if (branch < 0 || !e.schemaPath.startsWith(keep)) dropped.add(e);
      if (branch >= 0) dropped.add(union);
      else
        replaced.set(union, {
          path: union.instancePath,
          message: `must be a type name (${ENTITY_SCALAR_TYPE_NAMES.join(', ')}) or an object { "typeName": "${PRIMITIVE_TYPE}", "primitive" }`,
        });
      continue;
    }
    if (!union.schemaPath.endsWith(STEP_UNION_SCHEMA_PATH_SUFFIX)) {
      for (const e of branchErrors) dropped.add(e);
      replaced.set(union, {
        path: union.instancePath,
        message: 'must be an object { seconds, nanos } or an RFC 3339 date-time string',
      });
      continue;
    }
    // A flow step: only the branch its `type` selects explains what is wrong.
    const step = valueAt(body, union.instancePath);
    const stepType = isRecord(step) ? step.type : undefined;
    const branch = (FLOW_STEP_TYPES as readonly unknown[]).indexOf(stepType);
    if (branch >= 0) {
      const keep = `${branchPrefix}${branch}/`;
      for (const e of branchErrors) if (!e.schemaPath.startsWith(keep)) dropped.add(e);
      dropped.add(union);
      continue;
    }
    for (const e of branchErrors) dropped.add(e);
    const allowed = `one of ${FLOW_STEP_TYPES.join(', ')}`;
    if (!isRecord(step)) replaced.set(union, { path: union.instancePath, message: 'must be an object' });
    else if (stepType === undefined)
      replaced.set(union, { path: `${union.instancePath}/type`, message: `is required (${allowed})` });
    else replaced.set(union, { path: `${union.instancePath}/type`, message: `must be ${allowed}` });
  }
  // An enum error already says what the value must be; a type error on the same value is noise.
  const enumPaths = new Set(raw.filter((e) => e.keyword === 'enum').map((e) => e.instancePath));
  const out: ConfigurationError[] = [];
  for (const e of raw) {
    if (dropped.has(e) || e.propertyName !== undefined) continue;
    if (e.keyword === 'type' && enumPaths.has(e.instancePath)) continue;
    out.push(replaced.get(e) ?? mapAjvError(e));
  }
  return out;
}

function mapAjvError(e: ErrorObject): ConfigurationError {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required': {
      const path = `${e.instancePath}/${escapeSegment(String(params.missingProperty))}`;
      if (path === '/version') return { path, message: `is required; ${SUPPORTED_VERSIONS_TEXT}` };
      return { path, message: 'is required' };
    }
    case 'additionalProperties': {
      const path = `${e.instancePath}/${escapeSegment(String(params.additionalProperty))}`;
      if (e.instancePath === '/configuration') {
        return {
          path,
          message: `unknown member: not a configuration section (${CONFIGURATION_SECTIONS.join(', ')})`,
        };
      }
      return { path, message: 'unknown member' };
    }
    case 'propertyNames':
      return {
        path: `${e.instancePath}/${escapeSegment(String(params.propertyName))}`,
        message: 'member name must be a UUID',
      };
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues.map(String) : [];
      if (e.instancePath === '/version')
        return { path: e.instancePath, message: `unsupported version; ${SUPPORTED_VERSIONS_TEXT}` };
      return { path: e.instancePath, message: `must be one of ${allowed.join(', ')}` };
    }
    case 'const':
      return { path: e.instancePath, message: `must be ${String(params.allowedValue)}` };
    case 'type':
      return { path: e.instancePath, message: `must be ${typeWithArticle(String(params.type))}` };
    case 'format':
      return { path: e.instancePath, message: formatMessage(String(params.format)) };
    case 'minLength':
      return {
        path: e.instancePath,
        message:
          params.limit === 1 ? 'must not be empty' : `must have at least ${String(params.limit)} characters`,
      };
    case 'minItems':
      return { path: e.instancePath, message: `must have at least ${String(params.limit)} item(s)` };
    case 'minimum':
    case 'maximum':
      return {
        path: e.instancePath,
        message: `must be ${String(params.comparison)} ${String(params.limit)}`,
      };
    default:
      return { path: e.instancePath, message: e.message ?? `violates rule ${e.keyword}` };
  }
}

function typeWithArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function formatMessage(format: string): string {
  switch (format) {
    case 'date':
      return 'must be a real calendar day in the form YYYY-MM-DD';
    case 'date-time':
      return 'must be an RFC 3339 date-time';
    case 'uuid':
      return 'must be a UUID';
    default:
      return `must match format ${format}`;
  }
}
