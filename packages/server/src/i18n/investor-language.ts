import { type SQL, sql } from 'drizzle-orm';
import { DEFAULT_LANGUAGE, isLanguage, type Language } from './index.ts';

/**
 * The language an investor reads (docs/languages.md, "Which language"): the customer's own
 * (`customers.language`), else their organization's default (`organizations.language`). As a scalar
 * subquery, so a statement that already reads the customer (the USSD snapshot, an SMS outbox row)
 * gets it with no extra round trip; `org` and `customer` are parameters or columns of that statement.
 */
export const investorLanguageSql = (org: SQL, customer: SQL): SQL =>
  // Aliases of their own: a caller's `c` and `o` (passed as `customer` and `org`) stay the caller's.
  sql`(select coalesce(lc.language, lo.language) from organizations lo
    left join customers lc on lc.id = ${customer} and lc.organization_id = lo.id where lo.id = ${org})`;

/** A language as the database holds it; anything else (none, or one no longer offered): English. */
export const languageOf = (value: unknown): Language => (isLanguage(value) ? value : DEFAULT_LANGUAGE);
