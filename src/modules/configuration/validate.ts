/**
 * Validation of an uploaded Configuration Data document. Two phases, in a stable order: the
 * structure and types of every member (`validate-structure.ts`: Ajv, compiled once from the
 * TypeBox model), then the semantic rules (unique names, cross-references, flow graphs, time
 * zones), which each module declares as checks of the sections it owns (`semantic-check.ts`).
 * Every problem is reported at once, each with a JSON Pointer (RFC 6901) path
 * (`configuration-errors.ts`).
 */
import {
  atOrBelowAny,
  type ConfigurationError,
  capped,
  dedupe,
  isRecord,
  pointer,
} from './configuration-errors.js';
import { CONFIGURATION_SECTIONS, emptyConfiguration } from './document.js';
import { type ConfigurationDocument, ConfigurationSchema } from './model.js';
import { readableValue } from './readable.js';
import type { ConfigurationCheck, ReadableConfiguration, Report } from './semantic-check.js';
import { checkStructure, structuralErrors } from './validate-structure.js';

/** Outcome of {@link validateConfigurationDocument}. */
export type ConfigurationValidation =
  | { readonly ok: true; readonly document: ConfigurationDocument }
  | { readonly ok: false; readonly errors: ConfigurationError[] };

/**
 * Validates an upload body against the Configuration Data structure and the semantic `checks`
 * (every module's: `CONFIGURATION_CHECKS` of `src/composition/configuration-checks.ts`). On
 * success returns the document with every section present (an omitted section is empty; field
 * values are not otherwise defaulted, so a download returns what was uploaded). On failure
 * returns every problem found, in a stable order: structural errors first (Ajv order), then
 * semantic errors by section in download order. The semantic rules also run on a structurally
 * faulty document: they read every member that is sound and skip only the faulty ones (see
 * `readable.ts`), so one answer lists the reference faults of every element, and a semantic
 * error at (or below) the path of a structural error is left out, so one fault is not reported
 * twice. Never throws for any JSON value (as long as the checks do not); the returned document
 * shares objects with `body`, so the caller must not mutate `body` afterwards.
 */
export function validateConfigurationDocument(
  body: unknown,
  checks: readonly ConfigurationCheck[],
): ConfigurationValidation {
  const structureOk = checkStructure(body);
  const errors = structureOk ? [] : structuralErrors(body, checkStructure.errors ?? []);
  const configurationInput = isRecord(body) ? body.configuration : undefined;
  if (isRecord(configurationInput)) {
    const faultyPaths = new Set(errors.map((e) => e.path));
    const readable = readableValue(
      ConfigurationSchema,
      { ...emptyConfiguration(), ...configurationInput },
      pointer('configuration'),
      faultyPaths,
    );
    if (isRecord(readable)) {
      const semantic = semanticErrors(readable as ReadableConfiguration, checks);
      errors.push(...semantic.filter((e) => !atOrBelowAny(e.path, faultyPaths)));
    }
  }
  if (structureOk && errors.length === 0) {
    const document: ConfigurationDocument = {
      ...body,
      configuration: { ...emptyConfiguration(), ...body.configuration },
    };
    return { ok: true, document };
  }
  return { ok: false, errors: capped(dedupe(errors)) };
}

/** The problems the checks find, by section in download order (a stable sort keeps each section's order). */
function semanticErrors(
  c: ReadableConfiguration,
  checks: readonly ConfigurationCheck[],
): ConfigurationError[] {
  const errors: ConfigurationError[] = [];
  const report: Report = (path, message) => errors.push({ path, message });
  const ordered = [...checks].sort(
    (a, b) => CONFIGURATION_SECTIONS.indexOf(a.section) - CONFIGURATION_SECTIONS.indexOf(b.section),
  );
  for (const { check } of ordered) check(c, report);
  return errors;
}
