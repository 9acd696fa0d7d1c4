import type { MarketGate } from '../market/trading.ts';
import type { AdapterRegistry } from '../payments/pipeline/adapter.ts';
import type { ReportSettings } from '../reports/write.ts';
import type { SmsOutbox } from '../sms/queue.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';

/**
 * What a change to orders and transactions needs besides its transaction: the adapter registry
 * (which provider moves the money) and the webhook outbox (the REQUEST and TRANSACTION events are
 * written in the same transaction), and the market's gate (whether a paid buy may execute now).
 * The AppContext and the payment pipeline's deps both are one. Without `market`, a paid buy
 * executes at once (as with market hours not enforced): only tests build deps without it.
 * An execution's TRADE_CONFIRMATION names the platform of `config` (services/reports/confirmation.ts;
 * none: the sandbox's). The investments events (ACCOUNT, ASSET, PORTFOLIO, REPORT) follow
 * `events.investments`.
 */
export type OrderDeps = {
  registry: AdapterRegistry;
  events: EventOutbox;
  market?: MarketGate;
  /** The investor SMS outbox (docs/sms.md): absent, no SMS is queued. */
  sms?: SmsOutbox;
  config?: ReportSettings;
};
