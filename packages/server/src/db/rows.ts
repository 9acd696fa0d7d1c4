/**
 * The rows of `tx.execute(sql...)`: both drivers (node-postgres' QueryResult, PGlite's Results)
 * answer an object with `rows`, which drizzle's shared type does not say.
 */
export function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}
