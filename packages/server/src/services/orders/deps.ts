import type { AdapterRegistry } from '../payments/pipeline/adapter.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';

/**
 * What a change to orders and transactions needs besides its transaction: the adapter registry
 * (which provider moves the money) and the webhook outbox (the REQUEST and TRANSACTION events are
 * written in the same transaction). The AppContext and the payment pipeline's deps both are one.
 */
export type OrderDeps = { registry: AdapterRegistry; events: EventOutbox };
