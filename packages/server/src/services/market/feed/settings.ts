import { z } from 'zod';

const positiveInt = z.coerce.number().int().positive();

/**
 * The price feed's environment variables, every one optional here (config.ts spreads them into its
 * schema): the feed is configured by PRICE_FEED_URL, and off without it.
 */
export const PRICE_FEED_ENV_SHAPE = {
  /** Where the prices are pulled from (GET): JSON or CSV, docs/market.md "The price feed". */
  PRICE_FEED_URL: z.url({ protocol: /^https?$/, error: 'must be a http:// or https:// URL' }).optional(),
  PRICE_FEED_FORMAT: z.enum(['json', 'csv'], { error: 'must be json or csv' }).optional(),
  /** Sent as `Authorization: Bearer <token>` when set. */
  PRICE_FEED_TOKEN: z.string().trim().min(1, 'must not be blank').optional(),
  /** How often the feed is pulled; default 60. */
  PRICE_FEED_INTERVAL_SECONDS: positiveInt.max(86_400, 'must be at most 86400').optional(),
  /** Deadline of one pull; default 10000. */
  PRICE_FEED_TIMEOUT_MS: positiveInt.max(120_000, 'must be at most 120000').optional(),
};

export const PRICE_FEED_REQUIRED = ['PRICE_FEED_URL'] as const;

export type PriceFeedSettings = {
  url: string;
  format: 'json' | 'csv';
  token?: string;
  intervalMs: number;
  timeoutMs: number;
};

type Env = { [K in keyof typeof PRICE_FEED_ENV_SHAPE]: z.output<(typeof PRICE_FEED_ENV_SHAPE)[K]> };

export function priceFeedSettingsFrom(env: Env): PriceFeedSettings | undefined {
  if (env.PRICE_FEED_URL === undefined) return undefined;
  return {
    url: env.PRICE_FEED_URL,
    format: env.PRICE_FEED_FORMAT ?? (env.PRICE_FEED_URL.toLowerCase().endsWith('.csv') ? 'csv' : 'json'),
    ...(env.PRICE_FEED_TOKEN ? { token: env.PRICE_FEED_TOKEN } : {}),
    intervalMs: (env.PRICE_FEED_INTERVAL_SECONDS ?? 60) * 1000,
    timeoutMs: env.PRICE_FEED_TIMEOUT_MS ?? 10_000,
  };
}
