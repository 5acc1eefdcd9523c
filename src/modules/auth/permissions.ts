/** The permissions a role may grant (docs/reference.md, Users, roles and credentials). */
export const PERMISSIONS = [
  'ingestion:write',
  'ingestion:read',
  'configuration:read',
  'configuration:write',
  'configuration:delete',
  'statistics:read',
  'journals:read',
  'journals:reverse',
  'periods:manage',
  'credentials:manage',
  'users:manage',
  'extracts:manage',
  'webhooks:read',
  'webhooks:manage',
  'approvals:read',
  'approvals:approve',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

const API_CLIENT: readonly Permission[] = [
  'ingestion:write',
  'ingestion:read',
  'configuration:read',
  'statistics:read',
  'journals:read',
];

/** The roles and the permissions each grants (docs/reference.md, Users, roles and credentials). */
export const ROLES = {
  viewer: PERMISSIONS.filter((p) => p.endsWith(':read')),
  'api-client': API_CLIENT,
  'bulk-operator': [
    ...API_CLIENT,
    'configuration:write',
    'configuration:delete',
    'journals:reverse',
    'extracts:manage',
    'approvals:read',
  ],
  admin: PERMISSIONS,
} as const satisfies Record<string, readonly Permission[]>;

export type Role = keyof typeof ROLES;

export const ROLE_NAMES = Object.keys(ROLES) as Role[];

/** True when `name` is one of the roles. */
export function isRole(name: string): name is Role {
  return Object.hasOwn(ROLES, name);
}

/** The union of the permissions of the given roles; unknown role names grant nothing. */
export function permissionsOf(roles: readonly string[]): Set<Permission> {
  const granted = new Set<Permission>();
  for (const role of roles) {
    if (isRole(role)) for (const permission of ROLES[role]) granted.add(permission);
  }
  return granted;
}
