import { defineConfig } from 'vitest/config';

// Every test file, one at a time: what `npx vitest run [file]` uses. `npm test` runs the same files in
// two passes instead (package.json): vitest.timing.config.ts, then vitest.parallel.config.ts.
export default defineConfig({
  test: { testTimeout: 120_000, hookTimeout: 60_000, fileParallelism: false },
});
