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

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/** Every provider's environment variables, as one zod shape (config.ts spreads it). */
export type ProviderEnvShape = UnionToIntersection<PaymentProvider['env']>;

/** The Config's settings of each provider: set when it is configured. */
export type ProviderSettings = {
  [P in PaymentProvider as P['key']]?: NonNullable<ReturnType<P['settingsFrom']>>;
};

export const PROVIDER_ENV_SHAPE = Object.assign(
  {},
  ...PAYMENT_PROVIDERS.map((p) => p.env),
) as ProviderEnvShape;
