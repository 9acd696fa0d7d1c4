import type { TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { placeBuy } from '../../../src/services/orders/life.ts';
import { ensureCatalog, insertCustomer } from '../../ussd/support.ts';

/**
 * A buy order placed as a USSD confirmation places it, for a fresh partner and customer: the order,
 * its collection and the queued provider request commit together. Returns the collection's id.
 */
export async function placeQueuedBuy(t: TestApp, msisdn: string, amount: string): Promise<string> {
  const partner = await createPartner(t);
  const customerId = await insertCustomer(t, partner, { msisdn });
  const stockId = (await ensureCatalog(t)).buy;
  const placed = await t.ctx.database.db.transaction((tx) =>
    placeBuy(tx, { organizationId: partner.organizationId, customerId, msisdn, stockId, amount }, t.ctx),
  );
  return placed.payments[0]!.id;
}
