import type { Env } from '../env.js';
import type { Services } from './services.js';

/** What start-up did to the access data, for main to report. */
export interface BootstrapReport {
  adminCreated: boolean;
  generatedAdminPassword: string | undefined;
  bootstrapClientId: string | undefined;
}

/**
 * Creates the first administrator on an empty store and makes sure the bootstrap credential
 * (`BOOTSTRAP_CLIENT_ID`, `BOOTSTRAP_CLIENT_SECRET`; docs/reference.md, Running the service) exists
 * (owned by that administrator, who has every permission). Safe to run on every start and from
 * several instances at once.
 */
export async function bootstrapAccess(env: Env, services: Services): Promise<BootstrapReport> {
  const admin = await services.access.ensureFirstAdmin(env.adminEmail, env.adminPassword);
  if (env.bootstrapClientId !== undefined && env.bootstrapClientSecret !== undefined) {
    await services.access.ensureCredential(
      env.bootstrapClientId,
      env.bootstrapClientSecret,
      env.adminEmail.toLowerCase(),
    );
  }
  return {
    adminCreated: admin.created,
    generatedAdminPassword: admin.generatedPassword,
    bootstrapClientId: env.bootstrapClientId,
  };
}
