import type { ProviderModule } from '../../payments/providers/module.ts';
import { type FeedPull, pullFeed } from './client.ts';
import {
  PRICE_FEED_ENV_SHAPE,
  PRICE_FEED_REQUIRED,
  type PriceFeedSettings,
  priceFeedSettingsFrom,
} from './settings.ts';

/** A price feed as the feed worker drives it: one pull gives the prices of that moment. */
export type PriceFeed = { readonly name: string; pull(): Promise<FeedPull> };

export type PriceFeedModule = ProviderModule<'priceFeed', typeof PRICE_FEED_ENV_SHAPE, PriceFeedSettings> & {
  createFeed(settings: PriceFeedSettings, options?: { fetch?: typeof fetch }): PriceFeed;
};

/** Prices pulled over HTTP from a URL the operator configures (docs/market.md, "The price feed"). */
export const priceFeedProvider: PriceFeedModule = {
  key: 'priceFeed',
  label: 'price feed',
  env: PRICE_FEED_ENV_SHAPE,
  required: PRICE_FEED_REQUIRED,
  settingsFrom: priceFeedSettingsFrom,
  createFeed: (settings, options = {}) => ({ name: 'http', pull: () => pullFeed(settings, options.fetch) }),
};
