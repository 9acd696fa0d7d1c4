import type { preHandlerHookHandler } from 'fastify';
import type { AppContext } from '../context.ts';

/** What every /v1 route plugin receives. */
export type RouteDeps = {
  ctx: AppContext;
  /** preHandler for mutating routes that require X-Idempotency-Key. */
  idempotency: preHandlerHookHandler;
};
