/**
 * The semantic upload checks this module owns, of every section but `flows` (whose checks the
 * flows module declares, `modules/flows/upload-checks.ts`). The composition root hands both to
 * the upload (`src/composition/configuration-checks.ts`).
 */
import { ACCOUNTING_CHECKS } from './checks-accounting.js';
import { ENTITY_CHECKS } from './checks-entities.js';
import { NODE_CHECKS } from './checks-nodes.js';
import type { ConfigurationCheck } from './semantic-check.js';

/** The configuration module's own checks; `validateConfigurationDocument` orders them by section. */
export const CONFIGURATION_OWN_CHECKS: readonly ConfigurationCheck[] = [
  ...ACCOUNTING_CHECKS,
  ...ENTITY_CHECKS,
  ...NODE_CHECKS,
];
