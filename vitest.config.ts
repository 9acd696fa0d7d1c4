import { defineConfig } from 'vitest/config';

/**
 * Our workspaces resolve to their TypeScript sources, never to a built dist: the SDK's exports map
 * has this condition first, and tsconfig.json's customConditions names it too. Tests run in Vite's
 * ssr environment, hence ssr.resolve; Vitest adds its defaults (node, development|production).
 */
const conditions = ['@partner-api/source'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    globalSetup: ['packages/testkit/src/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    pool: 'forks',
    // Each embedded store holds a few hundred MB; two workers match the two cores.
    maxWorkers: 2,
  },
});
