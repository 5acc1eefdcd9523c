import type { Selectable } from 'kysely';
import type { CredentialRow, TokenRow, UserRow } from '../modules/auth/store.js';
import type { CredentialsTable, OAuthTokensTable, UsersTable } from './tables/access.js';

/** How the auth adapter (`auth-store.ts`, `access-tables.ts`) reads and writes its rows. */

export function toUser(row: Selectable<UsersTable>): UserRow {
  return {
    email: row.email,
    displayName: row.display_name,
    passwordHash: row.password_hash,
    roles: JSON.parse(row.roles) as string[],
    disabled: Number(row.disabled) === 1,
    createdAt: row.created_at,
  };
}

/** The owner of a credential as a join selects it (`users as u`, its creation date renamed), without its password hash. */
export function joinedOwner(
  row: Pick<Selectable<UsersTable>, 'email' | 'display_name' | 'roles' | 'disabled'> & {
    user_created_at: string;
  },
): UserRow {
  return toUser({
    email: row.email,
    display_name: row.display_name,
    password_hash: null,
    roles: row.roles,
    disabled: row.disabled,
    created_at: row.user_created_at,
  });
}

export function toCredential(row: Selectable<CredentialsTable>): CredentialRow {
  return {
    clientId: row.client_id,
    secretHash: row.secret_hash,
    ownerEmail: row.owner_email,
    name: row.name,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

export function toToken(row: Selectable<OAuthTokensTable>): TokenRow {
  return {
    tokenHash: row.token_hash,
    kind: row.kind,
    familyId: row.family_id,
    clientId: row.client_id,
    issuedAt: row.issued_at,
    expiresAt: row.expires_at,
    usedAt: row.used_at,
    revokedAt: row.revoked_at,
  };
}

export function tokenValues(token: TokenRow) {
  return {
    token_hash: token.tokenHash,
    kind: token.kind,
    family_id: token.familyId,
    client_id: token.clientId,
    issued_at: token.issuedAt,
    expires_at: token.expiresAt,
    used_at: token.usedAt,
    revoked_at: token.revokedAt,
    answer_sealed: null,
  };
}
