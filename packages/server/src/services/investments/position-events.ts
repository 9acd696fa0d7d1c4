import type { Queryable } from '../../db/client.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';
import { accountPortfolio, customerAsset } from './positions.ts';

export type PositionChange = {
  organizationId: string;
  customerId: string;
  instrumentId: string;
  /** The holding was inserted by this change (ASSET.CREATED), not updated (ASSET.UPDATED). */
  created: boolean;
  /** When the change happened: the portfolio's `valuedAt`. */
  at: Date;
};

/**
 * ASSET.CREATED or ASSET.UPDATED, then PORTFOLIO.UPDATED, for a change of a customer's units in an
 * instrument (a buy executed, a sell, a buy's units settled), on the change's own transaction and
 * only with the investments events on (docs/investments.md, Events). `data` is the asset as
 * GET /v1/accounts/{accountId}/assets lists it, with its `accountId` and `customerId` (at 0 units
 * after a sell of everything, which the list leaves out), and the portfolio as
 * GET /v1/accounts/{accountId}/portfolio answers it at that moment. Two reads, no write but the
 * events'.
 */
export async function emitPositionChanged(q: Queryable, events: EventOutbox, change: PositionChange) {
  if (!events.investments) return;
  const { organizationId, customerId } = change;
  const portfolio = await accountPortfolio(q, { organizationId, customerId, now: change.at });
  const asset = await customerAsset(q, { organizationId, customerId }, change.instrumentId);
  // Units move only for a customer with an account (a first order opens it): none, no events.
  if (!portfolio || !asset) return;
  await events.emit(q, {
    organizationId,
    event: change.created ? 'ASSET.CREATED' : 'ASSET.UPDATED',
    data: { accountId: portfolio.accountId, customerId, ...asset },
  });
  await events.emit(q, { organizationId, event: 'PORTFOLIO.UPDATED', data: portfolio });
}
