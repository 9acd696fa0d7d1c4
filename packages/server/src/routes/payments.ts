import { CUID_PATTERN, ErrorLabel, ErrorMessage, PaymentMessage } from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../lib/errors.ts';
import { getPaymentStatus } from '../services/payments/status.ts';
import type { RouteDeps } from './deps.ts';

/** GET /payment/status/{orderId}: poll the collection and/or disbursement of an order. */
export async function paymentRoutes(app: FastifyInstance, { ctx }: RouteDeps) {
  const db = ctx.database.db;

  app.get<{ Params: { orderId: string } }>('/payment/status/:orderId', async (request) => {
    const { orderId } = request.params;
    // The spec's own 400 (not the validation shape), before any lookup.
    if (!CUID_PATTERN.test(orderId)) {
      throw new AppError(400, ErrorLabel.invalidRequest, ErrorMessage.invalidOrderReference);
    }
    const data = await getPaymentStatus({ db, organizationId: request.auth!.organizationId, orderId });
    // Unknown, another organization's, or without transactions: one identical answer.
    if (!data) {
      throw new AppError(404, ErrorLabel.transactionNotFound, ErrorMessage.transactionNotFound(orderId));
    }
    return { message: PaymentMessage.statusRetrieved, data };
  });
}
