import type { CustomerList, CustomerListQuery } from '@partner-api/contract';
import { and, type Column, desc, eq, type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { customers } from '../../db/schema.ts';
import { presentCustomer } from './present.ts';

/**
 * The text the trigram index covers. It must stay token for token the expression of
 * drizzle/0002_customers_search.sql, or PostgreSQL cannot use the index.
 */
const searchDocument = sql`lower(${customers.firstName} || ' ' || ${customers.lastName} || ' ' || coalesce(${customers.identificationNumber}, '') || ' ' || coalesce(${customers.referenceId}, ''))`;

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
  const field = (column: Column) => sql`lower(${column}) like ${pattern}`;
  return sql`(${searchDocument} like ${pattern} and (${field(customers.firstName)} or ${field(customers.lastName)} or ${field(customers.identificationNumber)} or ${field(customers.referenceId)}))`;
}

/** The page and count queries of a listing, unexecuted: the benchmark EXPLAINs exactly these. */
export function buildListQueries(db: Queryable, organizationId: string, query: CustomerListQuery) {
  const conditions: SQL[] = [eq(customers.organizationId, organizationId)];
  if (query.isActive !== undefined) conditions.push(eq(customers.isActive, query.isActive));
  if (query.identificationType !== undefined)
    conditions.push(eq(customers.identificationType, query.identificationType));
  if (query.msisdn !== undefined) conditions.push(eq(customers.msisdn, query.msisdn));
  if (query.search) conditions.push(searchCondition(query.search));
  const where = and(...conditions);
  return {
    page: db
      .select()
      .from(customers)
      .where(where)
      .orderBy(desc(customers.createdAt), desc(customers.id))
      .limit(query.limit)
      .offset((query.page - 1) * query.limit),
    count: db.select({ total: sql<number>`count(*)::int` }).from(customers).where(where),
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
  const queries = buildListQueries(db, organizationId, query);
  const [rows, [count]] = await Promise.all([queries.page, queries.count]);
  const total = count?.total ?? 0;
  return {
    data: rows.map(presentCustomer),
    pagination: {
      page: query.page,
      limit: query.limit,
      total,
      totalPages: Math.ceil(total / query.limit),
    },
  };
}
