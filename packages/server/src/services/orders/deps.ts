import type { Config } from '../../config.ts';
import type { MarketGate } from '../market/trading.ts';
import type { AdapterRegistry } from '../payments/pipeline/adapter.ts';
import type { SmsOutbox } from '../sms/queue.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';

/**
 * What a change to orders and transactions needs besides its transaction: the adapter registry
 * (which provider moves the money) and the webhook outbox (the REQUEST and TRANSACTION events are
 * written in the same transaction), and the market's gate (whether a paid buy may execute now).
 * The AppContext and the payment pipeline's deps both are one. Without `market`, a paid buy
 * executes at once (as with market hours not enforced): only tests build deps without it.
 * `config.INVESTMENTS_PREVIEW`: a first order's ACCOUNT.CREATED is written (the AppContext carries
 * it; deps without it, such as the payment pipeline's, which never places an order, write none).
 */
export type OrderDeps = {
  registry: AdapterRegistry;
  events: EventOutbox;
  market?: MarketGate;
  /** The investor SMS outbox (docs/sms.md): absent, no SMS is queued. */
  sms?: SmsOutbox;
  config?: Pick<Config, 'INVESTMENTS_PREVIEW'>;
};
