import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BundledBroker, startBundledBroker } from '@kbench/broker-launcher';

/** The bundled broker's standalone binary on a free port with its own temporary data dir; `stop` removes both. */
export async function startTestBroker(name: string): Promise<BundledBroker & { dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), `kbench-compat-${name}-`));
  const broker = await startBundledBroker({ dataDir, port: 0 });
  return {
    ...broker,
    dataDir,
    stop: async () => {
      await broker.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
