export { buildAdminApp } from './admin/app.ts';
export { buildApp } from './app.ts';
export { type Config, ConfigError, loadConfig } from './config.ts';
export { createRuntime } from './runtime.ts';
export { EXIT_CONFIG, serve, withStores } from './server.ts';
export { type PurgeCounts, purgeExpired } from './services/housekeeping/purge.ts';
