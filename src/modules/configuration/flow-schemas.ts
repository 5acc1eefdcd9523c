/**
 * The schemas of the `flows` section of the Configuration Data document (docs/reference.md,
 * Flows): a flow is a graph of steps (input, scripts, the accounting engine, the journal
 * processor) and the mappings between them. `model.ts` re-exports them with the rest of the
 * document's schemas.
 */
import { type Static, Type } from '@sinclair/typebox';
import { closed, name, stringEnum } from './schema-parts.js';
import { FLOW_VERSION_STATUSES, MAPPING_SOURCE_GROUPS, PRIMITIVE_TYPE_NAMES } from './vocabulary.js';

export const EntityReferenceSchema = Type.Object(
  {
    namespace: name('Namespace of the entity (`ledger` for the built-in ones).'),
    name: name('Entity name.'),
  },
  { ...closed, description: 'Names an entity.' },
);
export type EntityReference = Static<typeof EntityReferenceSchema>;

export const InputStepSchema = Type.Object(
  {
    type: Type.Literal('Input', { description: 'Step type.' }),
    name: name('Step name.'),
    source: EntityReferenceSchema,
  },
  { ...closed, description: 'Feeds the flow with every accepted record of an entity.' },
);
export type InputStep = Static<typeof InputStepSchema>;

export const ScriptOutputSchema = Type.Object(
  {
    name: name('Name passed to `publish(name, value)`.'),
    type: Type.Object(
      {
        type: Type.Literal('Primitive', { description: 'Kind of output type.' }),
        primitive: stringEnum(PRIMITIVE_TYPE_NAMES, 'Primitive type of the value.'),
      },
      { ...closed, description: 'Type of the published value.' },
    ),
  },
  { ...closed, description: 'A value a script publishes.' },
);
export type ScriptOutput = Static<typeof ScriptOutputSchema>;

export const ScriptStepSchema = Type.Object(
  {
    type: Type.Literal('Script', { description: 'Step type.' }),
    name: name('Step name.'),
    script: Type.String({ description: 'Script text; reads `input` and calls `publish(name, value)`.' }),
    outputDefinition: Type.Array(ScriptOutputSchema, { description: 'Values the script publishes.' }),
  },
  { ...closed, description: 'Runs a script on each record.' },
);
export type ScriptStep = Static<typeof ScriptStepSchema>;

export const MappingSchema = Type.Object(
  {
    source: Type.Object(
      {
        group: stringEnum(MAPPING_SOURCE_GROUPS, '`INPUT` (the record) or `SCRIPT` (published values).'),
        path: Type.Array(name('Path segment.'), {
          minItems: 1,
          description: 'Path of the value in the group.',
        }),
      },
      { ...closed, description: 'Where the value comes from.' },
    ),
    target: Type.Object(
      {
        path: Type.Array(name('Path segment.'), {
          minItems: 1,
          description: 'Path in the business event; the first segment is an attribute name.',
        }),
      },
      { ...closed, description: 'Where the value goes.' },
    ),
    contextMapping: Type.Optional(
      Type.Boolean({ description: 'Whether the mapping sets flow context; false when omitted.' }),
    ),
  },
  { ...closed, description: 'Copies one value into the business event.' },
);
export type Mapping = Static<typeof MappingSchema>;

export const AccountingEngineStepSchema = Type.Object(
  {
    type: Type.Literal('AccountingEngine', { description: 'Step type.' }),
    name: name('Step name.'),
    mapping: Type.Array(MappingSchema, { description: 'How the business event is built.' }),
  },
  { ...closed, description: 'Builds a business event and runs the accounting engine on it.' },
);
export type AccountingEngineStep = Static<typeof AccountingEngineStepSchema>;

export const JournalProcessorStepSchema = Type.Object(
  {
    type: Type.Literal('JournalProcessor', { description: 'Step type.' }),
    name: name('Step name.'),
  },
  { ...closed, description: 'Posts the resulting journals.' },
);
export type JournalProcessorStep = Static<typeof JournalProcessorStepSchema>;

/** Discriminated by `type`; `validate.ts` reports only the errors of the branch `type` selects. */
export const FlowStepSchema = Type.Union(
  [InputStepSchema, ScriptStepSchema, AccountingEngineStepSchema, JournalProcessorStepSchema],
  { description: 'A flow step, discriminated by `type`.' },
);
export type FlowStep = Static<typeof FlowStepSchema>;

export const FlowNodeSchema = Type.Object(
  {
    x: Type.Number({ description: 'Horizontal position in the flow editor.' }),
    y: Type.Number({ description: 'Vertical position in the flow editor.' }),
    step: FlowStepSchema,
  },
  { ...closed, description: 'A node of the flow graph.' },
);
export type FlowNode = Static<typeof FlowNodeSchema>;

export const FlowGraphSchema = Type.Object(
  {
    edges: Type.Record(
      Type.String(),
      Type.Array(Type.String({ format: 'uuid', description: 'Id of a following node.' })),
      {
        description: 'Node id (UUID) to the ids of the nodes that follow it.',
        propertyNames: { format: 'uuid' },
      },
    ),
    nodes: Type.Record(Type.String(), FlowNodeSchema, {
      description: 'Node id (UUID) to the node.',
      propertyNames: { format: 'uuid' },
    }),
  },
  { ...closed, description: 'Directed acyclic graph of steps with exactly one Input step.' },
);
export type FlowGraph = Static<typeof FlowGraphSchema>;

export const FlowSchema = Type.Object(
  {
    name: name('Flow name; unique within the section.'),
    versionStatus: stringEnum(FLOW_VERSION_STATUSES, 'Only `Published` flows process records.'),
    graph: FlowGraphSchema,
  },
  { ...closed, description: 'A processing flow: a graph of steps that turns records into journals.' },
);
export type Flow = Static<typeof FlowSchema>;
