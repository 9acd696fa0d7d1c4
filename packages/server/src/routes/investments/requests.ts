import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../deps.ts';

/** The investments API (docs/investments.md): requests (orders): buy by amount, sell by units, list, get, cancel. */
export async function requestsRoutes(_app: FastifyInstance, _deps: RouteDeps) {}
