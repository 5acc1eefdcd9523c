/**
 * The upload checks of the accounting sections: account lookups, accounting configurations and
 * what they name (business calendars, dimension sets, fiscal calendars), the business event
 * definition and types, the journal definition and types, and posting components with their
 * identifications and patterns. Unique names, cross-references, and the rules within one element.
 */
import { at } from './configuration-errors.js';
import {
  allReadable,
  type ConfigurationCheck,
  checkReferences,
  checkUnique,
  namesOf,
  type ReadableConfiguration,
  type Report,
  readable,
  text,
  uniqueNames,
} from './semantic-check.js';

/** The checks of the accounting sections, in the order their problems are listed. */
export const ACCOUNTING_CHECKS: readonly ConfigurationCheck[] = [
  {
    section: 'accountLookups',
    check: (c, r) => uniqueNames('accountLookups', c.accountLookups, 'postingCode', r),
  },
  { section: 'accountingConfigurations', check: checkAccountingConfigurations },
  { section: 'businessCalendars', check: checkBusinessCalendars },
  { section: 'businessEventDefinition', check: checkBusinessEventDefinition },
  {
    section: 'businessEventTypes',
    check: (c, r) => uniqueNames('businessEventTypes', c.businessEventTypes, 'name', r),
  },
  { section: 'dimensionSets', check: checkDimensionSets },
  {
    section: 'fiscalCalendars',
    check: (c, r) => uniqueNames('fiscalCalendars', c.fiscalCalendars, 'name', r),
  },
  { section: 'journalDefinition', check: checkJournalDefinition },
  { section: 'journalTypes', check: checkJournalTypes },
  { section: 'postingComponentIdentifications', check: checkPostingComponentIdentifications },
  { section: 'postingComponents', check: checkPostingComponents },
  { section: 'postingComponents', check: checkPostingPatternFields },
];

// --- accountingConfigurations, businessCalendars, businessEventDefinition, dimensionSets --------

function checkAccountingConfigurations(c: ReadableConfiguration, report: Report): void {
  uniqueNames('accountingConfigurations', c.accountingConfigurations, 'name', report);
  const configurations = readable(c.accountingConfigurations);
  const targets = [
    ['businessCalendarName', 'businessCalendars', namesOf(c.businessCalendars, 'name')],
    ['dimensionSetName', 'dimensionSets', namesOf(c.dimensionSets, 'name')],
    ['fiscalCalendarName', 'fiscalCalendars', namesOf(c.fiscalCalendars, 'name')],
  ] as const;
  for (const [member, target, names] of targets) {
    checkReferences(
      configurations.map(([x, i]) => [at('accountingConfigurations', i, member), x[member]]),
      names,
      target,
      'name',
      report,
    );
  }
}

function checkBusinessCalendars(c: ReadableConfiguration, report: Report): void {
  uniqueNames('businessCalendars', c.businessCalendars, 'name', report);
  for (const [bc, i] of readable(c.businessCalendars)) {
    const from = text(bc.effectiveFrom);
    const to = text(bc.effectiveTo);
    if (from !== undefined && to !== undefined && to < from) {
      report(at('businessCalendars', i, 'effectiveTo'), 'must not be before effectiveFrom');
    }
  }
}

function checkBusinessEventDefinition(c: ReadableConfiguration, report: Report): void {
  const attributes = c.businessEventDefinition?.attributes;
  checkUnique(
    attributes,
    (a) => text(a.name),
    (i) => at('businessEventDefinition', 'attributes', i, 'name'),
    (name, first) => `duplicate attribute name "${name}" (first at ${first})`,
    report,
  );
  if (attributes === null || attributes === undefined || attributes.length === 0) return;
  const eventTypeIndexes = readable(attributes).flatMap(([a, i]) => (a.role === 'event_type' ? [i] : []));
  if (eventTypeIndexes.length === 0 && allReadable(attributes, 'role')) {
    report(
      at('businessEventDefinition', 'attributes'),
      'must contain exactly one attribute with role event_type',
    );
  }
  for (const i of eventTypeIndexes.slice(1)) {
    report(
      at('businessEventDefinition', 'attributes', i, 'role'),
      'must contain exactly one attribute with role event_type: this is a second one',
    );
  }
}

function checkDimensionSets(c: ReadableConfiguration, report: Report): void {
  uniqueNames('dimensionSets', c.dimensionSets, 'name', report);
  for (const [ds, i] of readable(c.dimensionSets)) {
    checkUnique(
      ds.attributes,
      (a) => a,
      (j) => at('dimensionSets', i, 'attributes', j),
      (a, first) => `duplicate attribute "${a}" (first at ${first})`,
      report,
    );
  }
}

// --- journalDefinition, journalTypes ----------------------------------------------------------

function checkJournalDefinition(c: ReadableConfiguration, report: Report): void {
  const definition = c.journalDefinition;
  if (definition === null || definition === undefined) return;
  const fields = definition.fields;
  checkUnique(
    fields,
    (f) => text(f.name),
    (i) => at('journalDefinition', 'fields', i, 'name'),
    (name, first) => `duplicate field name "${name}" (first at ${first})`,
    report,
  );
  // Every role except `node` identifies one field of a journal line.
  checkUnique(
    fields,
    (f) => (typeof f.role !== 'string' || f.role === 'node' ? undefined : f.role),
    (i) => at('journalDefinition', 'fields', i, 'role'),
    (role, first) => `role ${role} must appear at most once (first at ${first})`,
    report,
  );
  const primaryKeys = definition.primaryKeys;
  const names = namesOf(fields, 'name');
  if (names !== null) {
    for (const [key, i] of readable(primaryKeys)) {
      if (!names.has(key)) {
        report(
          at('journalDefinition', 'primaryKeys', i),
          `must name a journalDefinition field: no field "${key}"`,
        );
      }
    }
  }
  checkUnique(
    primaryKeys,
    (k) => k,
    (i) => at('journalDefinition', 'primaryKeys', i),
    (k, first) => `duplicate primary key "${k}" (first at ${first})`,
    report,
  );
}

function checkJournalTypes(c: ReadableConfiguration, report: Report): void {
  uniqueNames('journalTypes', c.journalTypes, 'code', report);
  for (const [jt, i] of readable(c.journalTypes)) {
    const behavior = jt.behavior;
    if (behavior === null || behavior === undefined) continue;
    if (behavior === 'REVERSING' && jt.reversingDate === undefined) {
      report(at('journalTypes', i, 'reversingDate'), 'is required when behavior is REVERSING');
    }
    if (behavior !== 'REVERSING' && jt.reversingDate !== undefined) {
      report(at('journalTypes', i, 'reversingDate'), 'is only allowed when behavior is REVERSING');
    }
  }
}

// --- postingComponentIdentifications, postingComponents ---------------------------------------

function checkPostingComponentIdentifications(c: ReadableConfiguration, report: Report): void {
  const identifications = readable(c.postingComponentIdentifications);
  uniqueNames(
    'postingComponentIdentifications',
    c.postingComponentIdentifications,
    'businessEventTypeName',
    report,
  );
  checkReferences(
    identifications.map(([x, i]) => [
      at('postingComponentIdentifications', i, 'businessEventTypeName'),
      x.businessEventTypeName,
    ]),
    namesOf(c.businessEventTypes, 'name'),
    'businessEventTypes',
    'name',
    report,
  );
  checkReferences(
    identifications.flatMap(([x, i]) =>
      readable(x.postingComponents).map(
        ([ref, j]) =>
          [
            at('postingComponentIdentifications', i, 'postingComponents', j, 'postingComponentCode'),
            ref.postingComponentCode,
          ] as const,
      ),
    ),
    namesOf(c.postingComponents, 'code'),
    'postingComponents',
    'code',
    report,
  );
}

function checkPostingComponents(c: ReadableConfiguration, report: Report): void {
  const components = readable(c.postingComponents);
  uniqueNames('postingComponents', c.postingComponents, 'code', report);
  checkReferences(
    components.map(([x, i]) => [at('postingComponents', i, 'journalType'), x.journalType]),
    namesOf(c.journalTypes, 'code'),
    'journalTypes',
    'code',
    report,
  );
  checkReferences(
    components.map(([x, i]) => [at('postingComponents', i, 'accountingConfigName'), x.accountingConfigName]),
    namesOf(c.accountingConfigurations, 'name'),
    'accountingConfigurations',
    'name',
    report,
  );
  checkReferences(
    components.flatMap(([x, i]) =>
      readable(x.postingPatterns).map(
        ([p, j]) => [at('postingComponents', i, 'postingPatterns', j, 'postingCode'), p.postingCode] as const,
      ),
    ),
    namesOf(c.accountLookups, 'postingCode'),
    'accountLookups',
    'postingCode',
    report,
  );
}

/** The attribute type a posting pattern field must have. */
const PATTERN_FIELD_TYPES = {
  amountField: 'decimal',
  currencyField: 'text',
  postingDateField: 'date',
} as const;

function checkPostingPatternFields(c: ReadableConfiguration, report: Report): void {
  const definition = c.businessEventDefinition;
  if (definition === null || definition?.attributes === null) return;
  const attributes = new Map(
    readable(definition?.attributes).flatMap(([a]) =>
      typeof a.name === 'string' ? [[a.name, a] as const] : [],
    ),
  );
  for (const [pc, i] of readable(c.postingComponents)) {
    for (const [pattern, j] of readable(pc.postingPatterns)) {
      for (const [member, type] of Object.entries(PATTERN_FIELD_TYPES) as [
        keyof typeof PATTERN_FIELD_TYPES,
        string,
      ][]) {
        const name = text(pattern[member]);
        if (name === undefined) continue;
        const attribute = attributes.get(name);
        const path = at('postingComponents', i, 'postingPatterns', j, member);
        if (attribute === undefined)
          report(path, `must name a businessEventDefinition attribute: no attribute "${name}"`);
        else if (typeof attribute.type === 'string' && attribute.type !== type)
          report(path, `attribute "${name}" must be of type ${type}, not ${attribute.type}`);
      }
    }
  }
}
