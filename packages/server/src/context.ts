import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { Secrets } from './lib/secrets.ts';
import type { Metrics } from './plugins/metrics.ts';

/** Everything a request may need, built once per process (or per test app). */
export interface AppContext {
  config: Config;
  database: Database;
  secrets: Secrets;
  metrics: Metrics;
  redis?: Redis;
  /** Redis key prefix of the rate limiters; instances that share a budget share it. */
  rateLimitPrefix: string;
}
