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

const UNCONFIRMED = 'Callback received; the provider has not confirmed it';

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
      const handler = await handlerOf(input.transactionId);
      if (handler?.requestId && handler.adapter && !handler.simulated) {
        // A real provider's payment: ask it; nothing moves on this message alone. The claim is the
        // status only: a receipt or a reason is the provider's word, and this message is not the
        // provider (a receipt named here could be another payment's, put to the provider's record
        // as this one's). What was sent is kept in the record's body.
        const verdict = await callbackPipelineFor(ctx, request.log).handleCallback({
          adapterName: handler.adapter,
          requestId: handler.requestId,
          claimed: { status: input.status },
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
        const data = { transactionId: input.transactionId, status: await statusOf(input.transactionId) };
        switch (verdict) {
          case 'applied':
            return { message: 'Callback applied', data };
          case 'already-final':
            return { message: 'Callback already applied', data };
          case 'contradicted':
          case 'unconfirmed':
            reply.code(202);
            return { message: UNCONFIRMED, data };
        }
      }
      if (handler && !handler.adapter && !simulatorServes()) {
        // No provider request names it and no simulator runs here: no provider can be asked, so
        // the message settles nothing (docs/decisions.md, "The signed callback route").
        ctx.metrics.paymentCallbacks.inc({ outcome: 'provider-unconfirmed' });
        request.log.warn(
          { suspicious: true, transactionId: input.transactionId, claimed: input.status },
          'signed callback for a transaction without a provider request: nothing changed',
        );
        reply.code(202);
        return { message: UNCONFIRMED, data: { transactionId: input.transactionId, status: handler.status } };
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

  /**
   * The transaction's status and the adapter of its provider request (none: a transaction written
   * without one), and whether that adapter is this instance's simulator. Undefined: no such transaction.
   */
  async function handlerOf(transactionId: string) {
    const row = await one<{ status: string; requestId: string | null; adapter: string | null }>(
      ctx.database.db,
      sql`select t.status, r.id as "requestId", r.adapter from transactions t
  left join provider_requests r on r.transaction_id = t.id where t.id = ${transactionId}`,
    );
    if (!row) return undefined;
    const adapter = row.adapter ? adaptersOf(ctx.registry).get(row.adapter) : undefined;
    return { ...row, simulated: adapter?.simulated === true };
  }

  /** The sandbox: the simulator serves this instance's networks. */
  function simulatorServes() {
    return [...adaptersOf(ctx.registry).values()].some((a) => a.simulated === true);
  }

  async function statusOf(transactionId: string) {
    return (await one<{ status: string }>(
      ctx.database.db,
      sql`select status from transactions where id = ${transactionId}`,
    ))!.status;
  }
}
