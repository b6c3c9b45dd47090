import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import type { Environment, Scenario } from '@kbench/schema';

const require = createRequire(import.meta.url);

function packageVersion(name: string): string {
  try {
    const path = require.resolve(`${name}/package.json`);
    return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** What a reader needs to judge a figure: the machine, the software, and where the load went. */
export function captureEnvironment(
  scenario: Scenario,
  target: { kind: string; bootstrap: string },
): Environment {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    hostname: os.hostname(),
    versions: {
      node: process.versions.node,
      kbench: packageVersion('@kbench/engine'),
      kafkajs: packageVersion('kafkajs'),
      broker:
        target.kind === 'bundled' ? `kbench-broker ${packageVersion('@kbench/broker-native')}` : 'external',
    },
    target: target.kind,
    bootstrap: target.bootstrap,
    driver: scenario.driver,
  };
}
