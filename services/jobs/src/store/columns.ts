/**
 * A table's column map: each field of its entity and the column that holds it, declared once per table
 * (next to the repository that owns the table) and read by every statement that names those fields.
 */
export type ColumnMap<T> = { readonly [K in keyof T]-?: string };

/**
 * A select list of `keys` from the table (or row alias) `alias`, each column named as its field
 * (`prefix` + field): `j.estimated_minutes AS "estimatedMinutes"`. Without an alias the columns are bare
 * (a RETURNING list, or a single-table statement).
 */
export function selectList<T>(
  columns: ColumnMap<T>,
  keys: readonly (keyof T & string)[],
  alias = '',
  prefix = '',
): string {
  const qualify = alias ? `${alias}.` : '';
  return keys.map((k) => `${qualify}${columns[k]} AS "${prefix}${k}"`).join(', ');
}

/** The fields `selectList` named with `prefix`, read back from a row; undefined when the row has none of them (`keys[0]` is null). */
export function fieldsOf<T>(
  row: Record<string, unknown>,
  keys: readonly (keyof T & string)[],
  prefix: string,
): T | undefined {
  if (row[`${prefix}${keys[0]}`] == null) return undefined;
  return Object.fromEntries(keys.map((k) => [k, row[`${prefix}${k}`]])) as T;
}
