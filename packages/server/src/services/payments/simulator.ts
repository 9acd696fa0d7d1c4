import { randomBytes } from 'node:crypto';
import { amountString, type Money, wholePart } from '../../lib/money.ts';
import type { PaymentAdapter, ProviderRequest, QueryResult } from './pipeline/adapter.ts';
import type { ExchangeRecord } from './providers/outcome.ts';

export type SimulatedOutcome =
  | { status: 'SUCCESS' }
  | { status: 'FAILED'; reason: string }
  | { status: 'PENDING' };

/**
 * Magic amounts, like test card numbers (docs/ussd-and-payments.md, Payments): a whole part ending
 * in 01 fails (insufficient funds), ending in 02 never settles (the customer ignored the prompt),
 * else succeeds.
 */
export function simulatedOutcome(amount: Money): SimulatedOutcome {
  const whole = wholePart(amount);
  if (whole.endsWith('01')) return { status: 'FAILED', reason: 'insufficient funds' };
  if (whole.endsWith('02')) return { status: 'PENDING' };
  return { status: 'SUCCESS' };
}

/**
 * The sandbox's mobile-money provider as a pipeline adapter. `send` accepts at once and writes the
 * magic-amount outcome and its settle time into the request's provider ids, which the pipeline
 * stores; `query` answers from them: final once `settleMs` has passed, else pending. Everything it
 * knows is in the database, so a pending settlement survives a restart: no timer lives in memory.
 */
export function createSandboxAdapter(options: {
  settleMs: number;
  /** 'sandbox' unless a test isolates its own requests on a shared database. */
  name?: string;
  now?: () => number;
}): PaymentAdapter {
  const name = options.name ?? 'sandbox';
  const now = options.now ?? Date.now;
  const exchange = (operation: string, requestBody: unknown, responseBody: unknown): ExchangeRecord => ({
    provider: name,
    operation,
    method: 'POST',
    path: `sandbox:${operation}`,
    requestBody,
    status: 200,
    responseBody,
    startedAt: new Date(now()),
    latencyMs: 0,
    error: null,
  });
  const describe = (request: ProviderRequest) => ({
    id: request.id,
    operation: request.operation,
    amount: amountString(request.amount),
    currency: request.amount.currency,
    msisdn: request.msisdn,
  });

  return {
    name,
    simulated: true,
    reconcileAfterMs: options.settleMs,
    async send(request) {
      const outcome = simulatedOutcome(request.amount);
      const providerIds: Record<string, string> = {
        reference: `SIM${randomBytes(5).toString('hex').toUpperCase()}`,
        outcome: outcome.status,
        settleAt: new Date(now() + options.settleMs).toISOString(),
        ...(outcome.status === 'FAILED' ? { reason: outcome.reason } : {}),
      };
      return { kind: 'accepted', providerIds, exchanges: [exchange('send', describe(request), providerIds)] };
    },
    async query(request): Promise<QueryResult> {
      const { outcome, settleAt, reference, reason } = request.providerIds;
      const exchanges = (answer: unknown) => [exchange('query', { id: request.id }, answer)];
      if (!outcome || !settleAt) return { kind: 'not-found', exchanges: exchanges({ found: false }) };
      if (outcome === 'PENDING' || now() < Date.parse(settleAt))
        return { kind: 'pending', exchanges: exchanges({ status: 'PENDING' }) };
      const status = outcome === 'FAILED' ? 'FAILED' : 'SUCCESS';
      return {
        kind: 'final',
        status,
        receipt: reference,
        ...(status === 'FAILED' ? { reason: reason ?? 'failed at provider' } : {}),
        exchanges: exchanges({ status, reference }),
      };
    },
  };
}
