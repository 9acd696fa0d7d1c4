import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../deps.ts';

/** The investments API (docs/investments.md): accounts, their assets and portfolio valuation. */
export async function accountsRoutes(_app: FastifyInstance, _deps: RouteDeps) {}
