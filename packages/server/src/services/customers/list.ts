import type { CustomerList, CustomerListQuery } from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one, rows } from '../../db/query.ts';
import { type CustomerRow, customerColumns, presentCustomer } from './present.ts';

/**
 * The text the trigram index covers. It must stay token for token the expression of
 * drizzle/0002_customers_search.sql, or PostgreSQL cannot use the index.
 */
const searchDocument = sql`lower(first_name || ' ' || last_name || ' ' || coalesce(identification_number, '') || ' ' || coalesce(reference_id, ''))`;

/** `%`, `_` and the escape character itself are matched literally. */
export function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, '\\$&')}%`;
}

/**
 * Case-insensitive substring on any of the four fields. The document condition lets the index
 * find candidates; the per-field conditions keep a match from spanning two fields.
 */
function searchCondition(term: string): SQL {
  const pattern = sql`lower(${likePattern(term)}) escape '\\'`;
  const field = (column: SQL) => sql`lower(${column}) like ${pattern}`;
  return sql`(${searchDocument} like ${pattern} and (${field(sql`first_name`)} or ${field(sql`last_name`)} or ${field(sql`identification_number`)} or ${field(sql`reference_id`)}))`;
}

/** The page and count queries of a listing, unexecuted: the benchmark EXPLAINs exactly these. */
export function buildListQueries(organizationId: string, query: CustomerListQuery) {
  const conditions: SQL[] = [sql`organization_id = ${organizationId}`];
  if (query.isActive !== undefined) conditions.push(sql`is_active = ${query.isActive}`);
  if (query.identificationType !== undefined)
    conditions.push(sql`identification_type = ${query.identificationType}`);
  if (query.msisdn !== undefined) conditions.push(sql`msisdn = ${query.msisdn}`);
  if (query.search) conditions.push(searchCondition(query.search));
  const where = sql.join(conditions, sql` and `);
  return {
    page: sql`select ${customerColumns} from customers where ${where}
  order by created_at desc, id desc limit ${query.limit} offset ${(query.page - 1) * query.limit}`,
    count: sql`select count(*)::int as total from customers where ${where}`,
  };
}

/** GET /customers: newest first (createdAt, then id), with true totals even past the last page. */
export async function listCustomers({
  db,
  organizationId,
  query,
}: {
  db: Queryable;
  organizationId: string;
  query: CustomerListQuery;
}): Promise<CustomerList> {
  const queries = buildListQueries(organizationId, query);
  const [page, count] = await Promise.all([
    rows<CustomerRow>(db, queries.page),
    one<{ total: number }>(db, queries.count),
  ]);
  const total = count?.total ?? 0;
  return {
    data: page.map(presentCustomer),
    pagination: {
      page: query.page,
      limit: query.limit,
      total,
      totalPages: Math.ceil(total / query.limit),
    },
  };
}
