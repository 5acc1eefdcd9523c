import { Type } from '@sinclair/typebox';
import { ROLE_NAMES } from './permissions.js';

/**
 * The rules of what a caller may send about users and API credentials (docs/reference.md,
 * Users, roles and credentials), written once: the REST schemas (`http/api/access.ts`) are
 * built from these fragments, so the API document states each bound, and the administration
 * pages check their forms with the same ones. Rules that need more than a schema (an e-mail
 * address, known roles, a password's length in the CLI and the settings) are checked by
 * `AccessDirectory` whoever calls it.
 */

/** Longest e-mail address of a new user. */
export const EMAIL_LENGTH_MAX = 320;
/** Longest display name of a user. */
export const DISPLAY_NAME_LENGTH_MAX = 200;
/** The shortest and longest password a user may be given. */
export const PASSWORD_LENGTH_MIN_CHARS = 12;
export const PASSWORD_LENGTH_MAX_CHARS = 256;
/** Longest name of an API credential. */
export const CREDENTIAL_NAME_LENGTH_MAX = 200;
/** Credentials expire after this many days unless another lifetime is asked for. */
export const CREDENTIAL_EXPIRY_DAYS_DEFAULT = 90;
/** The longest lifetime of a credential, in days. */
export const CREDENTIAL_EXPIRY_DAYS_MAX = 3650;

/** The e-mail of a new user. */
export const UserEmail = Type.String({ maxLength: EMAIL_LENGTH_MAX });
/** A user's display name. */
export const DisplayName = Type.String({ maxLength: DISPLAY_NAME_LENGTH_MAX });
/** A new password; lengths count characters (code points), as `checkPassword` does. */
export const Password = Type.String({
  minLength: PASSWORD_LENGTH_MIN_CHARS,
  maxLength: PASSWORD_LENGTH_MAX_CHARS,
});
/** One of the roles (`ROLE_NAMES`). */
export const RoleName = Type.Union(ROLE_NAMES.map((role) => Type.Literal(role)));
/** The roles of a user: each role at most once is all a list needs, so no longer than the roles. */
export const RoleList = Type.Array(RoleName, { maxItems: ROLE_NAMES.length });
/** The name of a new API credential. */
export const CredentialName = Type.String({ maxLength: CREDENTIAL_NAME_LENGTH_MAX });
/** The lifetime of a new API credential, in whole days. */
export const CredentialExpiryDays = Type.Integer({
  minimum: 1,
  maximum: CREDENTIAL_EXPIRY_DAYS_MAX,
  description: `Default ${CREDENTIAL_EXPIRY_DAYS_DEFAULT}.`,
});

/** The body of a new user: on the API (`POST /api/v1/users`) and the users page alike. */
export const UserCreateBody = Type.Object(
  {
    email: UserEmail,
    displayName: Type.Optional(DisplayName),
    roles: RoleList,
    password: Type.Optional(Password),
  },
  { additionalProperties: false },
);

/** The body of a change of a user: on the API (`PATCH /api/v1/users/{email}`) and the user's page. */
export const UserUpdateBody = Type.Object(
  {
    roles: Type.Optional(RoleList),
    displayName: Type.Optional(DisplayName),
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** The body of a new API credential: on the API (`POST /api/v1/credentials`) and its page. */
export const CredentialCreateBody = Type.Object(
  {
    ownerEmail: Type.String({ description: 'E-mail of the user the credential acts for.' }),
    name: Type.Optional(CredentialName),
    expiresInDays: Type.Optional(CredentialExpiryDays),
  },
  { additionalProperties: false },
);
