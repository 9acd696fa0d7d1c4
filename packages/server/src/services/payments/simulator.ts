import { randomBytes } from 'node:crypto';
import { type Money, money, wholePart } from '../../lib/money.ts';
import type { Log, PaymentProvider, TransactionRef } from './provider.ts';

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

/** Sends one callback body (already serialised) to the callback endpoint; resolves to the HTTP status. */
export type CallbackDelivery = (rawBody: string) => Promise<number>;

export type SandboxSimulator = PaymentProvider & {
  /** Cancels every settlement not yet sent; later requests are ignored. */
  stop(): void;
  /** Settlements scheduled and not yet delivered (tests wait on it). */
  pending(): number;
};

/** Retries after a refused delivery (429, 5xx, network): a real provider repeats its callbacks too. */
const MAX_ATTEMPTS = 4;
const retryable = (status: number) => status === 429 || status >= 500;

/**
 * The sandbox's mobile-money provider: `settleMs` after a request it reports the outcome through the
 * same signed callback a real provider would send, so the verified callback path is what settles
 * every sandbox payment. A refused delivery is repeated (same body) with a doubling delay. Timers are
 * unref'd and cleared by stop() (server shutdown, test teardown).
 */
export function createSandboxSimulator(options: {
  settleMs: number;
  deliver: CallbackDelivery;
  log: Log;
}): SandboxSimulator {
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<unknown>>();
  let stopped = false;

  const attempt = (transactionId: string, body: string, n: number, delayMs: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (stopped) return;
      const again = (why: object) => {
        if (n < MAX_ATTEMPTS) return attempt(transactionId, body, n + 1, Math.max(delayMs, 100) * 2);
        options.log.error({ transactionId, ...why }, 'simulated callback undelivered; left PENDING');
      };
      const delivery = options
        .deliver(body)
        .then((status) => {
          if (retryable(status)) again({ status });
          else if (status !== 200) options.log.warn({ transactionId, status }, 'simulated callback refused');
        })
        .catch((err: unknown) => again({ err }))
        .finally(() => inFlight.delete(delivery));
      inFlight.add(delivery);
    }, delayMs);
    timer.unref();
    timers.add(timer);
  };

  const schedule = async (ref: TransactionRef) => {
    if (stopped) return;
    const outcome = simulatedOutcome(money(ref.amount, ref.currency));
    if (outcome.status === 'PENDING') return;
    const body = JSON.stringify({
      transactionId: ref.id,
      status: outcome.status,
      providerReference: `SIM${randomBytes(5).toString('hex').toUpperCase()}`,
      ...(outcome.status === 'FAILED' ? { reason: outcome.reason } : {}),
    });
    attempt(ref.id, body, 1, options.settleMs);
  };

  return {
    collect: schedule,
    disburse: schedule,
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
    pending: () => timers.size + inFlight.size,
  };
}
