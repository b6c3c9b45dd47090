import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { KAFKA_VERSION } from '@kbench/apache-kafka';
import { describeSecurity, type Environment, type Scenario, type TargetProfile } from '@kbench/schema';
import { bundledSecurityName } from './bundled-security.js';

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

/** VIRTIO_BALLOON_F_REPORTING: the balloon device takes free page reports. */
const BALLOON_F_REPORTING = 5;
/** page_reporting_order at or above this reports nothing (NR_PAGE_ORDERS on x86-64 and arm64). */
const NO_REPORTING_ORDER = 11;

/**
 * Whether this machine is a virtual machine that returns free memory to its host: a virtio
 * balloon offering free page reporting, with reporting on. Reads sysfs under `root`.
 */
export function returnsFreeMemoryToHost(root = '/sys'): boolean {
  const read = (file: string) => {
    try {
      return readFileSync(path.join(root, file), 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const order = Number(read('module/page_reporting/parameters/page_reporting_order') ?? NaN);
  if (!(order < NO_REPORTING_ORDER)) return false;
  let devices: string[];
  try {
    devices = readdirSync(path.join(root, 'bus/virtio/drivers/virtio_balloon')).filter((d) =>
      d.startsWith('virtio'),
    );
  } catch {
    return false;
  }
  return devices.some(
    (d) => read(`bus/virtio/drivers/virtio_balloon/${d}/features`)?.[BALLOON_F_REPORTING] === '1',
  );
}

const MEMORY_NOTE =
  'a virtual machine that returns free memory to its host (virtio-balloon free page reporting): page cache that grows into returned memory is slower to write';

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
    // The profile's name and how it connects (or how the bundled listener was secured); never credentials.
    ...(target.profile ? { profile: target.profile.name, security: describeSecurity(target.profile) } : {}),
    ...(bundledSecurityName(scenario) ? { security: bundledSecurityName(scenario) } : {}),
    ...(target.rateCeiling !== undefined ? { rateCeiling: target.rateCeiling } : {}),
    ...(returnsFreeMemoryToHost() ? { memoryNote: MEMORY_NOTE } : {}),
  };
}
