/**
 * The errors of a configuration change that cannot be made: the stored data forbids it
 * (`configuration-change-unsafe`, 409), or the stored revision is no longer one it was made
 * against (`configuration-changed`, 412).
 */
import { AppError } from '../../lib/errors.js';
import type { BlockingChange } from './keep-data.js';

/** The error of a change that the stored data forbids (`configuration-change-unsafe`, 409). */
export function changeUnsafe(blocking: BlockingChange[]): AppError {
  const first = blocking[0];
  return new AppError(
    'configuration-change-unsafe',
    `the change cannot keep the processing data: ${blocking.length} change(s) conflict with stored data${first === undefined ? '' : `; first: ${first.path} ${first.reason}`}`,
    { blocking },
  );
}

/** The error of a change whose revision condition failed (`configuration-changed`, 412). */
export function configurationChanged(revision: number): AppError {
  return new AppError(
    'configuration-changed',
    `the configuration changed since it was read: it is at revision ${revision} now, so nothing was changed; read it again and decide anew`,
    { revision },
  );
}
