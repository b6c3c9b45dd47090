import { defineConfig } from 'vitest/config';
import { longestFirst } from '../../vitest.shared.mjs';
import { ALONE } from './test/passes.js';

// npm test's second pass: every other file, two at a time (each starts its own brokers on ports of
// its own), the longest first so that the short ones fill in beside them.
export default defineConfig({
  test: {
    exclude: ['**/node_modules/**', ...ALONE],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: true,
    maxWorkers: 2,
    sequence: {
      sequencer: longestFirst(['run', 'managed-kafka', 'tls', 'cluster-metrics', 'external-targets']),
    },
  },
});
