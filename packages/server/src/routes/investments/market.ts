import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../deps.ts';

/** The investments API (docs/investments.md): investment types, instruments and their prices (read-only). */
export async function marketRoutes(_app: FastifyInstance, _deps: RouteDeps) {}
