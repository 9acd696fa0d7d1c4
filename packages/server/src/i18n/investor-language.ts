import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { one } from '../db/query.ts';
import { DEFAULT_LANGUAGE, isLanguage, type Language } from './index.ts';

/**
 * The language an investor reads (docs/languages.md, "Which language"): the customer's own
 * (`customers.language`), else their organization's default (`organizations.language`). As a scalar
 * subquery, so a statement that already reads the customer (the USSD snapshot, an SMS outbox row)
 * gets it with no extra round trip; `org` and `customer` are parameters or columns of that statement.
 */
export const investorLanguageSql = (org: SQL, customer: SQL): SQL =>
  sql`(select coalesce(c.language, o.language) from organizations o
    left join customers c on c.id = ${customer} and c.organization_id = o.id where o.id = ${org})`;

/** A language as the database holds it; anything else (none, or one no longer offered): English. */
export const languageOf = (value: unknown): Language => (isLanguage(value) ? value : DEFAULT_LANGUAGE);

/** The language of a customer of an organization, in one statement (English if neither exists). */
export async function investorLanguage(
  q: Queryable,
  organizationId: string,
  customerId: string,
): Promise<Language> {
  const row = await one<{ language: string | null }>(
    q,
    sql`select ${investorLanguageSql(sql`${organizationId}`, sql`${customerId}`)} as language`,
  );
  return languageOf(row?.language);
}
