import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    pool: 'forks',
    // Each embedded store holds a few hundred MB; two workers match the two cores.
    maxWorkers: 2,
  },
});
