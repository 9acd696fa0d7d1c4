import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The server package's directory, found through the package's own name: the same answer whether the
 * code runs from `src/` (tsx) or bundled into `packages/cli/dist/` (`npm run build`), where paths
 * relative to `import.meta.url` would point somewhere else.
 */
export const SERVER_ROOT = path.dirname(
  createRequire(import.meta.url).resolve('@partner-api/server/package.json'),
);

/** Files the server reads at run time: migrations, page assets, the signing guide, the reference clients. */
export const SERVER_FILES = {
  migrations: path.join(SERVER_ROOT, 'drizzle'),
  openApiAssets: path.join(SERVER_ROOT, 'src/openapi/assets'),
  sandboxUi: path.join(SERVER_ROOT, 'src/sandbox-ui'),
  consoleAssets: path.join(SERVER_ROOT, 'src/console/assets'),
  signingGuide: path.resolve(SERVER_ROOT, '../../docs/signing.md'),
  referenceClients: path.resolve(SERVER_ROOT, '../../clients'),
};
