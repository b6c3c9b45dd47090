import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The multi-process tests fork plain Node scripts that import the built package.
    globalSetup: ['./test/build-dist.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
