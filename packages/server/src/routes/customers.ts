import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from './deps.ts';

export async function customerRoutes(_app: FastifyInstance, _deps: RouteDeps) {}
