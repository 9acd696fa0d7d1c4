import { CUID_PATTERN, ErrorLabel } from '@partner-api/contract';
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { AppError, unauthorized } from '../lib/errors.ts';
import { applyProviderResult, type ProviderResult } from '../services/payments/apply-callback.ts';
import {
  CALLBACK_SIGNATURE_HEADER,
  signCallback,
  verifyCallbackSignature,
} from '../services/payments/callback-signature.ts';
import { requestPayments } from '../services/payments/provider.ts';
import { createSandboxSimulator, type SandboxSimulator } from '../services/payments/simulator.ts';
import type { RouteDeps } from './deps.ts';

export const CALLBACK_PATH = '/v1/webhooks/callback';

/** The provider's result for one of our transactions (docs/ussd-and-payments.md, Payments). */
export const providerCallbackSchema = z.strictObject({
  transactionId: z.string().regex(CUID_PATTERN, 'Invalid transaction ID format'),
  status: z.enum(['SUCCESS', 'FAILED'], { error: 'status must be SUCCESS or FAILED' }),
  providerReference: z.string().trim().min(1).max(100),
  reason: z.string().trim().min(1).max(500).optional(),
});

/**
 * POST /webhooks/callback: no partner token; authenticated by `X-Callback-Signature` (HMAC-SHA256 of
 * the raw body with PROVIDER_CALLBACK_SECRET), checked before validation so that an unsigned caller
 * learns nothing about the body's shape. Applied once; a repeat answers 200 and changes nothing.
 */
export async function paymentCallbackRoute(app: FastifyInstance, { ctx }: RouteDeps) {
  const verifySignature: preValidationHookHandler = async (request) => {
    const header = request.headers[CALLBACK_SIGNATURE_HEADER];
    const ok = verifyCallbackSignature(
      ctx.secrets.providerCallbackSecret,
      request.rawBody ?? '',
      typeof header === 'string' ? header : undefined,
    );
    if (!ok) {
      ctx.metrics.paymentCallbacks.inc({ outcome: 'rejected' });
      throw unauthorized('Invalid callback signature');
    }
  };

  app.post(
    '/webhooks/callback',
    { schema: { body: providerCallbackSchema }, preValidation: verifySignature },
    async (request) => {
      const input = request.body as ProviderResult;
      const result = await ctx.database.db.transaction((tx) => applyProviderResult(tx, input));
      ctx.metrics.paymentCallbacks.inc({ outcome: result.outcome });
      switch (result.outcome) {
        case 'unknown':
          throw new AppError(404, ErrorLabel.notFound, 'Transaction not found');
        case 'duplicate': {
          const { id, status } = result.transaction;
          return { message: 'Callback already applied', data: { transactionId: id, status } };
        }
        case 'applied': {
          requestPayments(ctx.payments, result.disbursements, request.log);
          const { id, status } = result.transaction;
          return { message: 'Callback applied', data: { transactionId: id, status } };
        }
      }
    },
  );
}

/**
 * Sandbox: makes the simulator the app's payment provider. It settles through this app's own
 * callback route with a real signature, so every sandbox settlement exercises the verified path.
 * stop() cancels pending settlements (server shutdown, test teardown).
 */
export function startSandboxSimulator(ctx: AppContext, app: FastifyInstance): SandboxSimulator {
  const simulator = createSandboxSimulator({
    settleMs: ctx.config.SANDBOX_SETTLE_MS,
    log: app.log,
    deliver: async (rawBody) => {
      const response = await app.inject({
        method: 'POST',
        url: CALLBACK_PATH,
        headers: {
          'content-type': 'application/json',
          [CALLBACK_SIGNATURE_HEADER]: signCallback(ctx.secrets.providerCallbackSecret, rawBody),
        },
        payload: rawBody,
      });
      return response.statusCode;
    },
  });
  ctx.payments = simulator;
  return {
    ...simulator,
    stop() {
      simulator.stop();
      if (ctx.payments === simulator) ctx.payments = undefined;
    },
  };
}
