import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { KAFKA_VERSION } from '@kbench/apache-kafka';
import { describeSecurity, type Environment, type Scenario, type TargetProfile } from '@kbench/schema';

const require = createRequire(import.meta.url);

function readVersion(path: string): string {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function packageVersion(name: string): string {
  try {
    return readVersion(require.resolve(`${name}/package.json`));
  } catch {
    return 'unknown';
  }
}

/** Our own version; read by path because this package's exports do not include package.json. */
const KBENCH_VERSION = readVersion(new URL('../package.json', import.meta.url).pathname);

/** What a reader needs to judge a figure: the machine, the software, and where the load went. */
export function captureEnvironment(
  scenario: Scenario,
  target: { kind: string; bootstrap: string; profile?: TargetProfile; rateCeiling?: number },
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
      kbench: KBENCH_VERSION,
      ...(scenario.driver === 'kafkajs'
        ? { kafkajs: packageVersion('kafkajs') }
        : { loadgen: `kbench-loadgen ${packageVersion('@kbench/broker-native')}` }),
      broker:
        target.kind === 'bundled'
          ? `kbench-broker ${packageVersion('@kbench/broker-native')}`
          : target.kind === 'kafka'
            ? `Apache Kafka ${KAFKA_VERSION}${scenario.cluster.nodes > 1 ? `, ${scenario.cluster.nodes} nodes` : ''}`
            : 'external',
    },
    target: target.kind,
    bootstrap: target.bootstrap,
    driver: scenario.driver,
    // The profile's name and how it connects; never its credentials.
    ...(target.profile ? { profile: target.profile.name, security: describeSecurity(target.profile) } : {}),
    ...(target.rateCeiling !== undefined ? { rateCeiling: target.rateCeiling } : {}),
  };
}
