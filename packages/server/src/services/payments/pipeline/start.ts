import type { AppContext } from '../../../context.ts';
import type { CallbackPipeline } from '../callback-pipeline.ts';
import type { Log } from '../provider.ts';
import {
  findOrphanCollection,
  findRequestByProviderId,
  handleCallback,
  recordQueryAnswer,
  recordUnmatched,
} from './callbacks.ts';
import type { PipelineDeps } from './types.ts';
import { type PaymentWorker, startPaymentWorker } from './worker.ts';

/** The pipeline's dependencies from the process context. */
export function pipelineDeps(ctx: AppContext, log: Log): Omit<PipelineDeps, 'breakers'> {
  return {
    db: ctx.database.db,
    log,
    metrics: ctx.metrics,
    registry: ctx.registry,
    events: ctx.events,
    market: ctx.market,
    sms: ctx.sms,
    clock: () => new Date(),
    settings: ctx.config,
    config: ctx.config,
  };
}

/** Starts this instance's payment worker and makes it the one routes nudge; stop() detaches it. */
export function startPayments(ctx: AppContext, log: Log): PaymentWorker {
  const worker = startPaymentWorker(pipelineDeps(ctx, log), {
    startDelayMs: ctx.config.PAYMENT_WORKER_START_DELAY_MS,
  });
  ctx.paymentWorker = worker;
  return {
    ...worker,
    async stop() {
      if (ctx.paymentWorker === worker) ctx.paymentWorker = undefined;
      await worker.stop();
    },
  };
}

/** The pipeline's callback entry points with their deps bound, for the provider callback routes. */
export function callbackPipelineFor(ctx: AppContext, log: Log): CallbackPipeline {
  const deps = { ...pipelineDeps(ctx, log), nudge: () => ctx.paymentWorker?.nudge() };
  return {
    findRequestByProviderId: (adapterName, key, value) =>
      findRequestByProviderId(deps.db, adapterName, key, value),
    findOrphanCollection: (adapterName, input) => findOrphanCollection(deps.db, adapterName, input),
    handleCallback: (input) => handleCallback(deps, input),
    recordQueryAnswer: (requestId, result) => recordQueryAnswer(deps, requestId, result),
    recordUnmatched: (adapterName, exchange, reason) => recordUnmatched(deps, adapterName, exchange, reason),
  };
}
