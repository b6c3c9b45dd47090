import { defineConfig } from 'vitest/config';
import { ALONE } from './test/passes.js';

// npm test's first pass: the files that need the machine to themselves, one at a time.
export default defineConfig({
  test: { include: ALONE, testTimeout: 120_000, hookTimeout: 60_000, fileParallelism: false },
});
