import { CUID_PATTERN, ErrorLabel } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { z } from 'zod';
import { one } from '../db/query.ts';
import { AppError, unauthorized } from '../lib/errors.ts';
import { applyProviderResult, type ProviderResult } from '../services/payments/apply-callback.ts';
import {
  CALLBACK_SIGNATURE_HEADER,
  CALLBACK_TOLERANCE_SECONDS,
  verifyCallbackSignature,
} from '../services/payments/callback-signature.ts';
import { callbackPipelineFor } from '../services/payments/pipeline/start.ts';
import { adaptersOf } from '../services/payments/pipeline/types.ts';
import type { RouteDeps } from './deps.ts';

/** The provider's result for one of our transactions (docs/ussd-and-payments.md, Payments). */
export const providerCallbackSchema = z.strictObject({
  transactionId: z.string().regex(CUID_PATTERN, 'Invalid transaction ID format'),
  status: z.enum(['SUCCESS', 'FAILED'], { error: 'status must be SUCCESS or FAILED' }),
  providerReference: z.string().trim().min(1).max(100),
  reason: z.string().trim().min(1).max(500).optional(),
});

/**
 * POST /webhooks/callback: no partner token; authenticated by `X-Callback-Signature`
 * (`t=<unix>,v1=<HMAC-SHA256 of "<t>.<raw body>">` with PROVIDER_CALLBACK_SECRET, within
 * CALLBACK_TOLERANCE_SECONDS), checked before validation so that an unsigned caller learns nothing
 * about the body's shape. A transaction the sandbox simulator handles is settled once, as before; one
 * that a real provider handles is never settled on this message's word: the message is a hint handed
 * to the pipeline, which asks the provider and applies only what it confirms (docs/decisions.md).
 */
export async function paymentCallbackRoute(app: FastifyInstance, { ctx }: RouteDeps) {
  const verifySignature: preValidationHookHandler = async (request) => {
    const header = request.headers[CALLBACK_SIGNATURE_HEADER];
    const check = verifyCallbackSignature(
      ctx.secrets.providerCallbackSecret,
      request.rawBody ?? '',
      typeof header === 'string' ? header : undefined,
    );
    if (!check.ok) {
      ctx.metrics.paymentCallbacks.inc({ outcome: 'rejected' });
      throw unauthorized(
        check.reason === 'outside-window'
          ? `Callback signature time is more than ${CALLBACK_TOLERANCE_SECONDS} seconds from ours`
          : 'Invalid callback signature',
      );
    }
  };

  app.post(
    '/webhooks/callback',
    { schema: { body: providerCallbackSchema }, preValidation: verifySignature },
    async (request, reply) => {
      const input = request.body as ProviderResult;
      const handler = await providerOf(input.transactionId);
      if (handler && !handler.simulated) {
        // A real provider's payment: ask it; nothing moves on this message alone.
        const verdict = await callbackPipelineFor(ctx, request.log).handleCallback({
          adapterName: handler.adapter,
          requestId: handler.id,
          claimed: {
            status: input.status,
            receipt: input.providerReference,
            ...(input.reason ? { reason: input.reason } : {}),
          },
          exchange: {
            provider: handler.adapter.toUpperCase(),
            operation: 'callback:signed',
            method: 'POST',
            path: '/v1/webhooks/callback',
            requestBody: input,
            status: null,
            responseBody: null,
            startedAt: new Date(),
            latencyMs: 0,
            error: null,
            sourceAddress: request.ip,
          },
        });
        ctx.metrics.paymentCallbacks.inc({ outcome: `provider-${verdict}` });
        const status = (await one<{ status: string }>(
          ctx.database.db,
          sql`select status from transactions where id = ${input.transactionId}`,
        ))!.status;
        const data = { transactionId: input.transactionId, status };
        switch (verdict) {
          case 'applied':
            return { message: 'Callback applied', data };
          case 'already-final':
            return { message: 'Callback already applied', data };
          case 'contradicted':
          case 'unconfirmed':
            reply.code(202);
            return { message: 'Callback received; the provider has not confirmed it', data };
        }
      }
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

  /** The adapter whose request carries the transaction, and whether it is this instance's simulator. */
  async function providerOf(transactionId: string) {
    const row = await one<{ id: string; adapter: string }>(
      ctx.database.db,
      sql`select id, adapter from provider_requests where transaction_id = ${transactionId}`,
    );
    if (!row) return undefined;
    return { ...row, simulated: adaptersOf(ctx.registry).get(row.adapter)?.simulated === true };
  }
}
