/**
 * Every module's semantic checks of a configuration upload, composed here because the flows
 * module reads the configuration module's model while the configuration module must not import
 * flows (no import cycle between modules, docs/architecture.md). The configuration module checks
 * the sections it owns, the flows module the `flows` section (`modules/flows/upload-checks.ts`).
 */
import { CONFIGURATION_OWN_CHECKS } from '../modules/configuration/checks.js';
import type { ConfigurationCheck } from '../modules/configuration/semantic-check.js';
import {
  type ConfigurationValidation,
  validateConfigurationDocument,
} from '../modules/configuration/validate.js';
import { FLOW_CHECKS } from '../modules/flows/upload-checks.js';

/** The semantic checks of an upload, every module's; {@link validateConfiguration} runs them. */
export const CONFIGURATION_CHECKS: readonly ConfigurationCheck[] = [
  ...CONFIGURATION_OWN_CHECKS,
  ...FLOW_CHECKS,
];

/**
 * The whole upload check of a body, structure and every module's semantic checks, as the
 * configuration service runs it: {@link validateConfigurationDocument} with
 * {@link CONFIGURATION_CHECKS}. The composition root gives it to `ConfigurationService`; tests and
 * benchmarks call it directly.
 */
export function validateConfiguration(body: unknown): ConfigurationValidation {
  return validateConfigurationDocument(body, CONFIGURATION_CHECKS);
}
