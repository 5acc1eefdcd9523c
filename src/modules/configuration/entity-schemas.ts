/**
 * The schemas of the `entities` section of the Configuration Data document (docs/reference.md,
 * Entities): an entity's attributes and their types, in the product's canonical form or its
 * shorthand names. `model.ts` re-exports them with the rest of the document's schemas.
 */
import { type Static, Type } from '@sinclair/typebox';
import { closed, name, stringEnum } from './schema-parts.js';
import {
  ENTITY_SCALAR_TYPE_NAMES,
  ENTITY_TYPE_NAMES,
  LIST_TYPE,
  PRIMITIVE_TYPE,
  PRIMITIVE_TYPE_NAMES,
} from './vocabulary.js';

export const PrimitiveTypeSchema = Type.Object(
  {
    typeName: Type.Literal(PRIMITIVE_TYPE, { description: 'Marks a primitive type.' }),
    primitive: stringEnum(PRIMITIVE_TYPE_NAMES, 'The primitive type.'),
  },
  { ...closed, description: 'A primitive type in the canonical form, as the product exports it.' },
);
export type PrimitiveType = Static<typeof PrimitiveTypeSchema>;

export const EntityAttributeTypeSchema = Type.Object(
  {
    typeName: stringEnum(
      ENTITY_TYPE_NAMES,
      `\`${PRIMITIVE_TYPE}\` (canonical; the type is in \`primitive\`), \`${LIST_TYPE}\` (a JSON array), or a primitive type name as shorthand (\`{ "typeName": "TEXT" }\`).`,
    ),
    primitive: Type.Optional(
      stringEnum(
        PRIMITIVE_TYPE_NAMES,
        `The primitive type; present exactly when typeName is \`${PRIMITIVE_TYPE}\`.`,
      ),
    ),
    elementType: Type.Optional(
      Type.Union([stringEnum(ENTITY_SCALAR_TYPE_NAMES, 'A primitive type name.'), PrimitiveTypeSchema], {
        description: `Type of every element of a \`${LIST_TYPE}\` field, as a name (\`TEXT\`) or in the canonical form; TEXT when omitted.`,
      }),
    ),
  },
  {
    ...closed,
    description:
      'Type of an entity attribute. Canonical form `{ "typeName": "PrimitiveType", "primitive": "TEXT" }`; the shorthand `{ "typeName": "TEXT" }` is accepted too. A download returns each type as it was uploaded.',
  },
);
export type EntityAttributeType = Static<typeof EntityAttributeTypeSchema>;

export const EntityAttributeSchema = Type.Object(
  {
    name: name('Field name; unique within the entity.'),
    label: Type.Optional(Type.String({ description: 'Human-readable label.' })),
    mandatory: Type.Optional(
      Type.Boolean({ description: 'Whether a record must carry a non-null value; false when omitted.' }),
    ),
    source: Type.Optional(name('Where the value comes from (`input`).')),
    type: EntityAttributeTypeSchema,
  },
  { ...closed, description: 'One field of a user entity.' },
);
export type EntityAttribute = Static<typeof EntityAttributeSchema>;

export const EntitySchema = Type.Object(
  {
    name: name('Entity name; unique within its namespace.'),
    description: Type.Optional(Type.String({ description: 'Free text.' })),
    namespace: name('Namespace of the entity; `ledger` is reserved for the built-in entities.'),
    temporalityType: name('Temporality of the records (for example `Transaction`).'),
    type: name('Kind of entity (for example `DefinedEntity`).'),
    attributes: Type.Array(EntityAttributeSchema, { description: 'Fields of the entity, in order.' }),
  },
  { ...closed, description: 'A user entity that data can be ingested into.' },
);
export type Entity = Static<typeof EntitySchema>;
