// OpenMessaging Benchmark interop, import side: an OMB workload (what load) and optionally its
// Kafka driver file (which system settings) become one kbench scenario, naming what did not map.
// The driver file's client properties are carried over by their Kafka names (client-config.ts).
import { CLIENT_PROPERTIES, type ClientDriver } from './client-config.js';

/** An OMB field (or driver setting) kbench could not carry over, and why. */
export interface Unmapped {
  field: string;
  reason: string;
}

export interface OmbImport {
  /** A raw scenario (as a person would write it); run it through parseScenario to validate. */
  scenario: Record<string, unknown>;
  unmapped: Unmapped[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** OMB's Java `Properties` text blocks (`key=value` lines) as a map. */
export function parseProperties(text: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (typeof text !== 'string') return out;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const eq = line.search(/[=:]/);
    if (eq <= 0) continue;
    out.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return out;
}

const KEY_DISTRIBUTORS: Record<string, string> = { NO_KEY: 'none', RANDOM_NANO: 'random' };

/** OMB's warm-up when a workload does not set one (its WorkloadGenerator warms up for a minute). */
const OMB_DEFAULT_WARMUP_MINUTES = 1;

const num = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
};

/** Converts an OMB workload (and its Kafka driver YAML, if given) into a kbench scenario. */
export function ombToScenario(workload: unknown, driver?: unknown): OmbImport {
  if (!isObj(workload)) throw new Error('an OMB workload must be a YAML object of fields');
  const unmapped: Unmapped[] = [];
  const skip = (field: string, reason: string) => unmapped.push({ field, reason });
  const topics: Obj = {};
  const producers: Obj = {};
  const consumers: Obj = {};
  const scenario: Obj = {
    name: typeof workload.name === 'string' ? workload.name : 'imported OMB workload',
    description: `Imported from an OpenMessaging Benchmark workload${typeof workload.name === 'string' ? ` (${workload.name})` : ''}.`,
    target: 'bundled',
    driver: 'native',
  };
  const topicCount = Math.max(1, num(workload.topics) ?? 1);
  const handled = new Set<string>();
  const take = (field: string) => {
    handled.add(field);
    return workload[field];
  };

  take('name');
  topics.count = topicCount;
  handled.add('topics');
  const partitions = num(take('partitionsPerTopic'));
  if (partitions !== undefined) topics.partitions = partitions;
  const size = num(take('messageSize'));
  if (size !== undefined) producers.messageSize = size;
  const payload = take('payloadFile');
  // OMB counts producers and consumers per topic; kbench counts clients over all of the run's topics.
  const producersPerTopic = num(take('producersPerTopic'));
  if (producersPerTopic !== undefined) producers.count = Math.min(1000, producersPerTopic * topicCount);
  const subscriptions = num(take('subscriptionsPerTopic'));
  const perSubscription = num(take('consumerPerSubscription'));
  if (subscriptions === 0 || perSubscription === 0) consumers.count = 0;
  else {
    if (subscriptions !== undefined) consumers.groups = Math.min(100, subscriptions);
    if (perSubscription !== undefined) consumers.count = Math.min(1000, perSubscription * topicCount);
  }
  const rate = num(take('producerRate'));
  // OMB's rate is messages/s for all producers together, as kbench's is; 0 asks OMB to search.
  if (rate !== undefined) producers.rate = rate > 0 ? rate : 'find-max';
  const backlogGb = num(take('consumerBacklogSizeGB'));
  if (backlogGb !== undefined && backlogGb > 0) {
    consumers.backlog = `${backlogGb}GB`;
    consumers.startAt = 'backlog';
  }
  const key = take('keyDistributor');
  if (typeof key === 'string') {
    const mapped = KEY_DISTRIBUTORS[key];
    if (mapped) producers.keys = mapped;
    else {
      producers.keys = 'random';
      skip('keyDistributor', `${key} has no kbench equivalent; random keys instead`);
    }
  }
  const testMinutes = num(take('testDurationMinutes'));
  const warmupMinutes = num(take('warmupDurationMinutes')) ?? OMB_DEFAULT_WARMUP_MINUTES;
  // kbench's duration includes its warm-up; OMB warms up before its test duration.
  if (testMinutes !== undefined) scenario.duration = `${testMinutes + warmupMinutes}m`;
  scenario.warmup = `${warmupMinutes}m`;
  for (const field of Object.keys(workload)) {
    if (!handled.has(field)) skip(field, 'no kbench knob for it');
  }

  if (driver !== undefined) applyDriver(driver, { scenario, topics, producers, consumers }, skip);
  // OMB sends the payload file's whole content as every record's value; both kbench drivers do too.
  // OMB's path is relative to where OMB runs; the importer's caller resolves it to a file it can read.
  if (typeof payload === 'string' && payload !== '') {
    producers.messageSize = { payloadFile: payload };
  } else if (payload !== undefined) skip('payloadFile', 'must be the path of a file');
  if (Object.keys(topics).length) scenario.topics = topics;
  if (Object.keys(producers).length) scenario.producers = producers;
  if (Object.keys(consumers).length) scenario.consumers = consumers;
  return { scenario, unmapped };
}

type Role = 'producers' | 'consumers';

/**
 * Carries an OMB Kafka property over to `role` of the scenario: a knob it duplicates, or the
 * role's config, when `driver` honours it; otherwise names why not.
 */
function carryProperty(
  role: Role,
  name: string,
  value: string,
  into: { section: Obj; driver: ClientDriver },
): string | null {
  const property = CLIENT_PROPERTIES[role][name];
  const word = role === 'producers' ? 'producer' : 'consumer';
  if (!property) return `kbench passes no ${word} property of this name through`;
  if (property.drivers[into.driver] === undefined)
    return `the ${into.driver} driver cannot honour it as a ${word} property`;
  if (property.knob) {
    // A knob the workload set already (consumers start at its backlog) stays as the workload says.
    if (into.section[property.knob] !== undefined)
      return `${role}.${property.knob} is set by the workload (${String(into.section[property.knob])})`;
    into.section[property.knob] = value;
  } else {
    const config = (into.section.config ?? {}) as Obj;
    config[name] = value;
    into.section.config = config;
  }
  return null;
}

function applyDriver(
  driver: unknown,
  into: { scenario: Obj; topics: Obj; producers: Obj; consumers: Obj },
  skip: (field: string, reason: string) => void,
): void {
  if (!isObj(driver)) throw new Error('an OMB driver file must be a YAML object of fields');
  const { scenario, topics, producers, consumers } = into;
  const runsOn = scenario.driver as ClientDriver;
  const carry = (field: string, roles: Role[], text: unknown) => {
    for (const [k, v] of parseProperties(text)) {
      if (k === 'bootstrap.servers') {
        skip(
          `${field}.${k}`,
          'the scenario targets the bundled broker; --set target=host:port for a cluster',
        );
        continue;
      }
      const reasons = roles.map((role) =>
        carryProperty(role, k, v, { section: role === 'producers' ? producers : consumers, driver: runsOn }),
      );
      // A common property is carried if either role takes it.
      if (reasons.every((r) => r !== null)) skip(`${field}.${k}`, reasons.join('; '));
    }
  };
  for (const [field, value] of Object.entries(driver)) {
    if (field === 'name') continue;
    if (field === 'driverClass') {
      if (typeof value === 'string' && !/kafka/i.test(value))
        skip('driverClass', `${value} is not the Kafka driver; settings read as Kafka's`);
    } else if (field === 'replicationFactor') {
      const rf = num(value);
      if (rf !== undefined) {
        topics.replicationFactor = rf;
        // The bundled target needs as many nodes as replicas.
        if (rf > 1) scenario.cluster = { nodes: Math.min(5, rf) };
      }
    } else if (field === 'topicConfig') {
      const config: Obj = {};
      for (const [k, v] of parseProperties(value)) {
        if (k === 'min.insync.replicas') topics.minInsyncReplicas = Number(v);
        else config[k] = v;
      }
      if (Object.keys(config).length) topics.config = config;
    } else if (field === 'producerConfig') carry(field, ['producers'], value);
    else if (field === 'consumerConfig') carry(field, ['consumers'], value);
    else if (field === 'commonConfig') carry(field, ['producers', 'consumers'], value);
    else skip(field, 'no kbench knob for it');
  }
}
