import { type Kysely, sql } from 'kysely';

/**
 * `event_fingerprint_forms`: the attribute plans of the journals stored under the first form of
 * the business event fingerprint (`modules/accounting/event-fingerprint.ts`). That form wrote an
 * attribute without a value as `null`, so a journal's digest depended on the definition it was
 * made under, and a rollback sent after a keep-data upload that added an attribute no longer
 * found its twin. The current form leaves such attributes out; journals stored before it keep
 * their digest, and a rollback also computes its first-form digest under each plan kept here.
 *
 * A plan is the definition's attributes in name order, each once, with whether it is a decimal:
 * what the first form hashed. They are read from every configuration revision kept (and the
 * stored configuration), since a journal kept across keep-data uploads may have been made under
 * any of them; a store without a fingerprinted journal needs none. Written here once: journals
 * made from now on carry the current form.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_fingerprint_forms')
    .addColumn('plan', 'text', (c) => c.primaryKey())
    .execute();
  const fingerprinted = await sql<{ one: number }>`
    select 1 as one from journals where event_fingerprint is not null limit 1`.execute(db);
  if (fingerprinted.rows.length === 0) return;
  const documents = await sql<{ document: string }>`
    select document from configuration_revisions
    union all
    select document from configuration`.execute(db);
  const plans = new Set<string>();
  for (const { document } of documents.rows) {
    const plan = firstFormPlanOf(document);
    if (plan !== undefined) plans.add(plan);
  }
  for (const plan of plans)
    await sql`insert into event_fingerprint_forms (plan) values (${plan})`.execute(db);
}

/**
 * The first form's attribute plan of a stored configuration document (the configuration itself,
 * or an upload document holding it under `configuration`), as JSON; undefined when it has no
 * business event definition.
 */
function firstFormPlanOf(documentText: string): string | undefined {
  const parsed = JSON.parse(documentText) as Record<string, unknown>;
  const configuration = (
    'businessEventDefinition' in parsed ? parsed : (parsed.configuration ?? {})
  ) as Record<string, unknown>;
  const definition = configuration.businessEventDefinition as { attributes?: unknown } | undefined;
  if (!Array.isArray(definition?.attributes)) return undefined;
  const byName = new Map<string, { name: string; decimal: boolean }>();
  for (const attribute of definition.attributes as { name?: unknown; type?: unknown }[]) {
    if (typeof attribute?.name !== 'string' || byName.has(attribute.name)) continue;
    byName.set(attribute.name, { name: attribute.name, decimal: attribute.type === 'decimal' });
  }
  return JSON.stringify(
    [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  );
}
