import type { Customer } from '@partner-api/contract';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { eq, sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { customers } from '../../src/db/schema.ts';

export const NONEXISTENT_ID = 'c000000000000000000000000';

export function customerBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { firstName: 'Amina', lastName: 'Otieno', msisdn: '254712345678', ...overrides };
}

/** Creates a customer through the API and returns it. */
export async function createCustomerViaApi(
  t: TestApp,
  partner: Partner,
  overrides: Record<string, unknown> = {},
): Promise<Customer> {
  const res = await signedInject(t.app, partner, {
    method: 'POST',
    url: '/v1/customers',
    body: customerBody(overrides),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as Customer;
}

export async function countCustomers(t: TestApp, organizationId: string): Promise<number> {
  const [row] = await t.ctx.database.db
    .select({ n: sql<number>`count(*)::int` })
    .from(customers)
    .where(eq(customers.organizationId, organizationId));
  return row?.n ?? 0;
}

/** The validation body for one failing field. */
export const invalid = (field: string, message: string) => ({
  error: 'Validation failed',
  details: [{ field, message }],
});
