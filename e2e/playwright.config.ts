import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';

// KBENCH_E2E_PORT lets two sessions run specs side by side on one machine.
const PORT = Number(process.env.KBENCH_E2E_PORT ?? 7431);
// One fresh history per test session; workers inherit it from the main process's environment.
process.env.KBENCH_E2E_HOME ??= mkdtempSync(join(tmpdir(), 'kbench-e2e-'));

export default defineConfig({
  testDir: './tests',
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 180_000,
  expect: { timeout: 30_000 },
  reporter: [['list']],
  // Groups of specs side by side (scripts/test.mjs) each keep their own results.
  outputDir: process.env.KBENCH_E2E_GROUP
    ? `./test-results-${process.env.KBENCH_E2E_GROUP}`
    : './test-results',
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    viewport: { width: 1400, height: 1000 },
    trace: 'retain-on-failure',
    actionTimeout: 30_000,
    navigationTimeout: 30_000,
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
  },
  webServer: {
    command: `node ../apps/cli/dist/main.js serve --port ${PORT}`,
    url: `http://127.0.0.1:${PORT}/api/health`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'pipe',
    stderr: 'pipe',
    env: { KBENCH_HOME: process.env.KBENCH_E2E_HOME },
  },
});
