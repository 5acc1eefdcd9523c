/**
 * The shape of an ingestion target (docs/reference.md, Entities): a user entity of the `entities`
 * section, or one of the ledger entities derived from `businessEventDefinition` (business events
 * and their rollbacks) and `journalDefinition`. This is the one normalized view that the record validator, the example
 * generator and the entity endpoints read; nothing here knows about HTTP or storage.
 */
/** The normalized field types (docs/reference.md, Attribute types of entities). */
export const FIELD_TYPES = [
  'TEXT',
  'DATE',
  'DATETIME',
  'INTEGER',
  'DECIMAL',
  'BOOLEAN',
  'UUID',
  'LIST',
] as const;

/** A normalized field type; see {@link normalizeFieldType} for the accepted spellings. */
export type FieldType = (typeof FIELD_TYPES)[number];

/** The kinds of entity (docs/reference.md, Entities). */
export type EntityKind = 'user' | 'businessEvent' | 'businessEventRollback' | 'journal';

/** One field of an entity, in its configured order. */
export interface EntityAttribute {
  name: string;
  label: string;
  /** Present, not null and (for TEXT) not empty in every record. */
  mandatory: boolean;
  type: FieldType;
  /** Type of every element when `type` is LIST; absent means TEXT (`ListType`). */
  elementType?: FieldType;
  /**
   * The configured role of a ledger entity field (`event_type`, `node`, `coreDate`, ...); absent
   * for user entities. Only informative: the example generator uses it to pick plausible values.
   */
  role?: string;
}

/** An ingestion target with its attributes in configured order. */
export interface EntityDefinition {
  namespace: string;
  name: string;
  description: string;
  temporalityType: string;
  type: string;
  kind: EntityKind;
  attributes: EntityAttribute[];
}

const FIELD_TYPE_BY_SPELLING: ReadonlyMap<string, FieldType> = new Map<string, FieldType>([
  ['text', 'TEXT'],
  ['string', 'TEXT'],
  ['date', 'DATE'],
  ['datetime', 'DATETIME'],
  ['integer', 'INTEGER'],
  ['decimal', 'DECIMAL'],
  ['amount', 'DECIMAL'],
  ['boolean', 'BOOLEAN'],
  ['uuid', 'UUID'],
  ['list', 'LIST'],
]);

/**
 * Maps a type name as the configuration spells it to its normalized field type, or `undefined` when
 * the name is not a known type (docs/reference.md, Attribute types of entities). The match ignores
 * case and a trailing `Type`, so the lower-case names (`text`, `amount`), the upper-case ones
 * (`DECIMAL`, `AMOUNT`) and the `typeName` style of user entities (`ListType`, `TextType`) all map;
 * `amount` is a DECIMAL and `string` a TEXT. It never throws: the caller decides what an unknown
 * name means (the configuration upload rejects it, so a stored configuration never has one).
 */
export function normalizeFieldType(typeName: string): FieldType | undefined {
  const lower = typeName.trim().toLowerCase();
  const exact = FIELD_TYPE_BY_SPELLING.get(lower);
  if (exact !== undefined) return exact;
  return lower.endsWith('type') ? FIELD_TYPE_BY_SPELLING.get(lower.slice(0, -'type'.length)) : undefined;
}

/** The `namespace/name` label of an entity, as messages and logs write it. */
export function entityLabel(entity: Pick<EntityDefinition, 'namespace' | 'name'>): string {
  return `${entity.namespace}/${entity.name}`;
}
