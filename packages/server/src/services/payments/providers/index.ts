import { airtelProvider } from './airtel/index.ts';
import { mpesaProvider } from './mpesa/index.ts';
import { mtnProvider } from './mtn/index.ts';

/**
 * Every payment provider, in the order config.ts reports their settings. A new provider is a folder
 * beside these (settings.ts, client.ts, adapter.ts, callbacks.ts, routes.ts, index.ts) and one entry
 * here; nothing else names it.
 */
export const PAYMENT_PROVIDERS = [mpesaProvider, mtnProvider, airtelProvider] as const;

export type PaymentProvider = (typeof PAYMENT_PROVIDERS)[number];
