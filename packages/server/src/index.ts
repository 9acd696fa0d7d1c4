export { buildAdminApp } from './admin/app.ts';
export { buildApp } from './app.ts';
export { type Config, ConfigError, loadConfig } from './config.ts';
export { createRuntime } from './runtime.ts';
export { EXIT_CONFIG, serve, withStores } from './server.ts';
export { type PurgeCounts, purgeExpired } from './services/housekeeping/purge.ts';
export { FAKE_AIRTEL_ENV, startFakeAirtel } from './services/payments/providers/airtel/fake/index.ts';
export {
  type FakeDarajaOptions,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  startFakeDaraja,
} from './services/payments/providers/mpesa/fake/index.ts';
export { FAKE_MTN_ENV, startFakeMtn } from './services/payments/providers/mtn/fake/index.ts';
