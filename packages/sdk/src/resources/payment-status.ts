import { setTimeout as sleep } from 'node:timers/promises';
import { WaitTimeoutError } from '../errors.ts';
import type { RequestOptions, RequestSender } from '../request-sender.ts';
import { FINAL_TRANSACTION_STATUSES, type PaymentStatus, type PaymentStatusResponse } from '../types.ts';

export type WaitForFinalOptions = {
  /** Overall budget; a WaitTimeoutError (carrying the last status) after it. Default 120 s. */
  timeoutMs?: number;
  /** Called after every poll, final or not: the CLI's progress line. */
  onPoll?: (status: PaymentStatusResponse, poll: number) => void;
  signal?: AbortSignal;
  /** First pause between polls (default 500 ms); it grows by half each poll up to maxIntervalMs. */
  intervalMs?: number;
  maxIntervalMs?: number;
  /** Options of each GET (retries, per-attempt timeout). */
  request?: RequestOptions;
};

/** True when the order has a transaction and every transaction it has reached a final status. */
export function isPaymentFinal(status: PaymentStatus): boolean {
  const present = [status.payment, status.disbursement].filter((t) => t !== undefined);
  return present.length > 0 && present.every((t) => FINAL_TRANSACTION_STATUSES.includes(t.status));
}

/** GET /payment/status/{orderId}: payments are learned by polling, no events are sent. */
export class PaymentStatusResource {
  constructor(private readonly sender: RequestSender) {}

  async get(orderId: string, options?: RequestOptions): Promise<PaymentStatusResponse> {
    const spec = {
      method: 'GET',
      path: `/payment/status/${encodeURIComponent(orderId)}`,
      auth: 'signed',
    } as const;
    return (await this.sender.request<PaymentStatusResponse>(spec, options)).body;
  }

  /**
   * Polls with a growing, jittered pause until every present transaction is SUCCESS, FAILED or
   * CANCELLED. Errors (a 404 for an unknown order included) are thrown at once.
   */
  async waitForFinal(orderId: string, options: WaitForFinalOptions = {}): Promise<PaymentStatusResponse> {
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    const maxInterval = options.maxIntervalMs ?? 5_000;
    let interval = options.intervalMs ?? 500;
    const signal = options.signal;
    for (let poll = 1; ; poll++) {
      const status = await this.get(orderId, { ...options.request, ...(signal ? { signal } : {}) });
      options.onPoll?.(status, poll);
      if (isPaymentFinal(status.data)) return status;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new WaitTimeoutError(
          `order ${orderId} is not final after ${options.timeoutMs ?? 120_000} ms`,
          status,
        );
      }
      const pause = Math.min(left, Math.round(interval * (0.8 + Math.random() * 0.4)));
      await sleep(pause, undefined, signal ? { signal } : undefined);
      interval = Math.min(maxInterval, interval * 1.5);
    }
  }
}
