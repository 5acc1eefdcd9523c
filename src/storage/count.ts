import type { SelectQueryBuilder } from 'kysely';

/** The number of rows a query (its FROM and WHERE) selects: the `totalSize` of a page. */
export async function countRows<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
): Promise<number> {
  const row = (await query
    .clearSelect()
    .clearOrderBy()
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow()) as { total: number | string | bigint };
  return Number(row.total);
}
