import { priceFeedProvider } from './services/market/feed/index.ts';
import { PAYMENT_PROVIDERS } from './services/payments/providers/index.ts';
import { smsGatewayProvider } from './services/sms/gateway/index.ts';

/**
 * Every outside service the server calls, each a module of one shape (README, "Outside providers:
 * one module shape"): the payment providers, the price feed, the SMS gateway. config.ts spreads their variables
 * into its schema and builds their settings in this order.
 */
export const PROVIDERS = [...PAYMENT_PROVIDERS, priceFeedProvider, smsGatewayProvider] as const;

export type Provider = (typeof PROVIDERS)[number];

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/** Every provider's environment variables, as one zod shape. */
export type ProviderEnvShape = UnionToIntersection<Provider['env']>;

/** The Config's settings of each provider: set when it is configured. */
export type ProviderSettings = {
  [P in Provider as P['key']]?: NonNullable<ReturnType<P['settingsFrom']>>;
};

export const PROVIDER_ENV_SHAPE = Object.assign({}, ...PROVIDERS.map((p) => p.env)) as ProviderEnvShape;
