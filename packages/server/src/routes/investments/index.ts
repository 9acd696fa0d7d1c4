import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../deps.ts';
import { accountsRoutes } from './accounts.ts';
import { ledgerRoutes } from './ledger.ts';
import { marketRoutes } from './market.ts';
import { requestsRoutes } from './requests.ts';

/**
 * The investments API (docs/investments.md), registered only with INVESTMENTS_PREVIEW: every query
 * is scoped to the token's organization, every mutation signed and idempotent like every other route.
 */
export async function investmentRoutes(app: FastifyInstance, deps: RouteDeps) {
  await app.register(marketRoutes, deps);
  await app.register(accountsRoutes, deps);
  await app.register(requestsRoutes, deps);
  await app.register(ledgerRoutes, deps);
}
