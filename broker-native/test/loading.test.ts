import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const require = createRequire(import.meta.url);
const addonPath = require.resolve('@kbench/broker-native');

describe('loading the addon', () => {
  it('imports by name from plain Node ESM, and the process exits after stop()', () => {
    const dir = tempDir('esm');
    const script = `
      import { startBroker } from '@kbench/broker-native';
      const broker = await startBroker({ dataDir: ${JSON.stringify(dir.path)} });
      console.log('port', broker.port);
      await broker.stop();
    `;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dirname(addonPath),
      encoding: 'utf8',
      timeout: 60_000,
    });
    dir.cleanup();
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^port \d+\n$/);
  });

  it('starts and stops a broker inside a worker thread', async () => {
    const dir = tempDir('worker');
    const worker = new Worker(
      `
      const { parentPort, workerData } = require('node:worker_threads');
      const { startBroker } = require(workerData.addonPath);
      (async () => {
        const broker = await startBroker({ dataDir: workerData.dataDir });
        const port = broker.port;
        await broker.stop();
        parentPort.postMessage({ port });
      })().catch((error) => parentPort.postMessage({ error: String(error) }));
      `,
      { eval: true, workerData: { addonPath, dataDir: dir.path } },
    );
    const reply = await new Promise<{ port?: number; error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const exitCode = await new Promise<number>((resolve) => worker.once('exit', resolve));
    dir.cleanup();
    expect(reply.error).toBeUndefined();
    expect(reply.port).toBeGreaterThan(0);
    expect(exitCode).toBe(0);
  });
});
