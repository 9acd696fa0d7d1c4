import { CUID_PATTERN, ErrorLabel } from '@partner-api/contract';
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { z } from 'zod';
import { AppError, unauthorized } from '../lib/errors.ts';
import { applyProviderResult, type ProviderResult } from '../services/payments/apply-callback.ts';
import {
  CALLBACK_SIGNATURE_HEADER,
  verifyCallbackSignature,
} from '../services/payments/callback-signature.ts';
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
      const result = await ctx.database.db.transaction((tx) => applyProviderResult(tx, input, ctx));
      ctx.metrics.paymentCallbacks.inc({ outcome: result.outcome });
      switch (result.outcome) {
        case 'unknown':
          throw new AppError(404, ErrorLabel.notFound, 'Transaction not found');
        case 'duplicate': {
          const { id, status } = result.transaction;
          return { message: 'Callback already applied', data: { transactionId: id, status } };
        }
        case 'applied': {
          // Refunds were queued with the settlement: let the worker send them now.
          if (result.disbursements.length > 0) ctx.paymentWorker?.nudge();
          const { id, status } = result.transaction;
          return { message: 'Callback applied', data: { transactionId: id, status } };
        }
      }
    },
  );
}
