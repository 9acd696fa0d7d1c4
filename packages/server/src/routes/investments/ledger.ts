import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../deps.ts';

/** The investments API (docs/investments.md): transactions (the money and units ledgers) and reports. */
export async function ledgerRoutes(_app: FastifyInstance, _deps: RouteDeps) {}
