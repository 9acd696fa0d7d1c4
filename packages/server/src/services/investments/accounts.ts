import {
  ACCOUNT_CURRENCY,
  ACCOUNT_LANGUAGES,
  type Account,
  type AccountLanguage,
  type AccountList,
  type AccountListQuery,
  type AccountStatus,
  createId,
  type Portfolio,
} from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one, rows, run } from '../../db/query.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';

/**
 * A customer's investment account (docs/investments.md, Accounts): one per customer, opened by
 * POST /v1/accounts or by the customer's first order (orders/life.ts, placeBuy and placeSell).
 */

export type AccountRow = {
  id: string;
  organizationId: string;
  customerId: string;
  status: AccountStatus;
  /** customers.language: the customer's own; null, the organization's. */
  language: string | null;
  createdAt: string;
  updatedAt: string;
};

/** Of `accounts` (unaliased), with the customer's language (the column is the customer's). */
const ACCOUNT_COLUMNS = sql`id, organization_id as "organizationId", customer_id as "customerId", status,
  (select cl.language from customers cl where cl.id = customer_id) as language,
  created_at::text as "createdAt", updated_at::text as "updatedAt"`;

const isAccountLanguage = (value: string | null): value is AccountLanguage =>
  (ACCOUNT_LANGUAGES as readonly (string | null)[]).includes(value);

/** The wire form: one account holds every investment type (null), valued in the market's currency. */
export function presentAccount(row: AccountRow): Account {
  return {
    id: row.id,
    organizationId: row.organizationId,
    customerId: row.customerId,
    status: row.status,
    investmentType: null,
    currency: ACCOUNT_CURRENCY,
    language: isAccountLanguage(row.language) ? row.language : null,
    createdAt: dateOf(row.createdAt).toISOString(),
    updatedAt: dateOf(row.updatedAt).toISOString(),
  };
}

/** ACCOUNT.CREATED's data: the account, and its id as `accountId` (the spec's name in the event). */
export const accountEventData = (account: Account) => ({ accountId: account.id, ...account });

/**
 * A CTE `opened` of a caller's statement that opens the customer's account unless it has one,
 * returning the new row (placeBuy folds it into its own statement, opening it only with the order:
 * no round trip of its own).
 */
export const openAccountCte = (
  owner: { organizationId: string; customerId: string },
  /** `from o`: only for each row of the caller's CTE `o`; none: once. */
  source: SQL = sql``,
) => sql`opened as (
  insert into accounts (id, organization_id, customer_id)
  select ${createId()}, ${owner.organizationId}, ${owner.customerId} ${source}
  on conflict (customer_id) do nothing
  returning ${ACCOUNT_COLUMNS}
)`;

/**
 * Writes ACCOUNT.CREATED and PORTFOLIO.CREATED (the account's portfolio, empty) for an account a
 * caller's statement opened (`opened`), when the investments events are on (EventOutbox.investments).
 */
export async function accountOpened(
  q: Queryable,
  row: AccountRow | null,
  events: EventOutbox,
): Promise<Account | null> {
  if (!row) return null;
  const account = presentAccount(row);
  if (!events.investments) return account;
  const { organizationId } = account;
  await events.emit(q, { organizationId, event: 'ACCOUNT.CREATED', data: accountEventData(account) });
  await events.emit(q, { organizationId, event: 'PORTFOLIO.CREATED', data: emptyPortfolio(account) });
  return account;
}

/** ACCOUNT.UPDATED for an account a PATCH changed, when the investments events are on. */
export async function accountUpdated(q: Queryable, account: Account, events: EventOutbox): Promise<void> {
  if (!events.investments) return;
  await events.emit(q, {
    organizationId: account.organizationId,
    event: 'ACCOUNT.UPDATED',
    data: accountEventData(account),
  });
}

/** A new account's portfolio: nothing held, valued when the account was opened. */
export const emptyPortfolio = (account: Account): Portfolio => ({
  accountId: account.id,
  customerId: account.customerId,
  currency: ACCOUNT_CURRENCY,
  date: null,
  valuedAt: account.createdAt,
  value: '0.00',
  cost: '0.00',
  unrealisedGain: '0.00',
  byInvestmentType: [],
  positions: [],
});

/**
 * Opens the customer's account unless it has one: one statement (`on conflict (customer_id) do
 * nothing`, so two first orders at once open one), and its events on the same transaction
 * (accountOpened). Returns the new account, or null.
 */
export async function openAccount(
  q: Queryable,
  owner: { organizationId: string; customerId: string },
  events: EventOutbox,
): Promise<Account | null> {
  const row = await one<AccountRow>(q, sql`with ${openAccountCte(owner)} select * from opened`);
  return accountOpened(q, row ?? null, events);
}

/** What POST /v1/accounts finds before it opens one: the customer in the organization, and its account. */
export async function customerWithAccount(
  q: Queryable,
  organizationId: string,
  customerId: string,
): Promise<{ isActive: boolean; account: Account | null } | null> {
  const found = await one<{ isActive: boolean; account: AccountRow | null }>(
    q,
    sql`select c.is_active as "isActive",
  (select row_to_json(a) from (select ${ACCOUNT_COLUMNS} from accounts where customer_id = c.id) a) as account
from customers c where c.id = ${customerId} and c.organization_id = ${organizationId}`,
  );
  if (!found) return null;
  return { isActive: found.isActive, account: found.account ? presentAccount(found.account) : null };
}

/**
 * Sets the customer's language (`null`: the organization's default) through their account, and
 * marks the account updated: one statement; false when the organization has no such account.
 */
export async function setAccountLanguage(
  q: Queryable,
  owner: { organizationId: string; accountId: string },
  language: AccountLanguage | null,
  now: Date,
): Promise<boolean> {
  const row = await one<{ id: string }>(
    q,
    sql`with a as (
  update accounts set updated_at = ${now.toISOString()}::timestamptz
  where id = ${owner.accountId} and organization_id = ${owner.organizationId} returning customer_id
)
update customers c set language = ${language} from a where c.id = a.customer_id returning c.id`,
  );
  return row !== undefined;
}

/** Sets a customer's language before their account is opened (POST /v1/accounts). */
export async function setCustomerLanguage(
  q: Queryable,
  owner: { organizationId: string; customerId: string },
  language: AccountLanguage | null,
): Promise<void> {
  await run(
    q,
    sql`update customers set language = ${language}
  where id = ${owner.customerId} and organization_id = ${owner.organizationId}`,
  );
}

/** An account of the organization; another organization's is not found. */
export async function getAccount(q: Queryable, organizationId: string, id: string): Promise<Account | null> {
  const row = await one<AccountRow>(
    q,
    sql`select ${ACCOUNT_COLUMNS} from accounts where id = ${id} and organization_id = ${organizationId}`,
  );
  return row ? presentAccount(row) : null;
}

/**
 * GET /v1/accounts: newest first (createdAt, then id) on accounts_org_created_idx; a customerId
 * filter reads the one row of accounts_customer_id_unique.
 */
export async function listAccounts(
  q: Queryable,
  organizationId: string,
  query: AccountListQuery,
): Promise<AccountList> {
  const conditions: SQL[] = [sql`organization_id = ${organizationId}`];
  if (query.customerId !== undefined) conditions.push(sql`customer_id = ${query.customerId}`);
  if (query.status !== undefined) conditions.push(sql`status = ${query.status}`);
  const where = sql.join(conditions, sql` and `);
  const [page, count] = await Promise.all([
    rows<AccountRow>(
      q,
      sql`select ${ACCOUNT_COLUMNS} from accounts where ${where}
  order by created_at desc, id desc limit ${query.limit} offset ${(query.page - 1) * query.limit}`,
    ),
    one<{ total: number }>(q, sql`select count(*)::int as total from accounts where ${where}`),
  ]);
  const total = count?.total ?? 0;
  return {
    data: page.map(presentAccount),
    pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
  };
}
