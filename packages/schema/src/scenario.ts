// The scenario file: what load to send, where, and for how long. Every default lives here, once.
import { z } from 'zod';
import { AGENT_ON_LOSS } from './agents.js';
import {
  type ClientRole,
  clientConfigSchema,
  type ResolvedClientConfig,
  resolveClientConfig,
} from './client-config.js';
import { bool, closedObject, duration, integer, oneOf, size, text } from './fields.js';
import { messageSizeSchema } from './message-size.js';
import { parseDurationMs } from './units.js';

export * from './client-config.js';

export const ACKS = [0, 1, 'all'] as const;
export const COMPRESSION = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export const DRIVERS = ['kafkajs', 'native'] as const;
export const START_AT = ['latest', 'earliest', 'backlog'] as const;
/** Fault actions on one node (faults[].node) of a cluster kbench started (docs/faults.md). */
export const NODE_FAULT_ACTIONS = ['kill', 'pause', 'restart', 'isolate', 'heal', 'slow-disk'] as const;
/** Fault actions on the whole cluster kbench started (no node). */
export const CLUSTER_FAULT_ACTIONS = ['rolling-restart', 'preferred-leaders'] as const;
export const FAULT_ACTIONS = [...NODE_FAULT_ACTIONS, ...CLUSTER_FAULT_ACTIONS] as const;
/** Faults only the bundled cluster can inject (the managed Apache Kafka target takes kill, pause, restart, rolling-restart, preferred-leaders). */
export const BUNDLED_ONLY_FAULTS = ['isolate', 'heal', 'slow-disk'] as const;
/** Who an isolate fault cuts a node off from (faults[].from). */
export const ISOLATE_FROM = ['peers', 'clients'] as const;
/** A slow-disk fault's delay added to each fdatasync (faults[].delay). */
export const SLOW_DISK_DELAY_MS = { min: 1, max: 10_000 } as const;
/** The fault that runs the user's own command (faults[].run) on this machine, on any target. */
export const COMMAND_FAULT = 'command';
/** The longest a command fault may run before it is killed (faults[].timeout), and its default. */
export const COMMAND_TIMEOUT_MS = { min: 100, max: 3_600_000, default: '60s' } as const;
/** SASL on the bundled target's secured listener (cluster.security.sasl). */
export const BUNDLED_SASL = ['none', 'plain', 'scram-sha-256', 'scram-sha-512'] as const;
/** What a run does when a topic it would create exists already. */
export const IF_TOPIC_EXISTS = ['fail', 'reuse'] as const;

/** The longest run (and warm-up, and find-max trial). */
export const MAX_DURATION_MS = 24 * 3_600_000;
/** The most records a run bounded by a record count may send. */
export const MAX_RECORDS = 10_000_000_000;
/** The largest preloaded backlog (1 TB). */
export const MAX_BACKLOG_BYTES = 1024 ** 4;
/** Partitions the bundled broker allows in one topic (its maxPartitionsPerTopic). */
export const MAX_PARTITIONS_PER_TOPIC = 10_000;
/** Partition replicas the bundled broker hosts on one node at most (its maxPartitions). */
export const MAX_PARTITION_REPLICAS_PER_NODE = 150_000;

const fsyncPolicy = z.unknown().transform((input, ctx): string => {
  if (input === 'none' || input === 'batch') return input;
  if (typeof input === 'string' && /^interval:\d+$/.test(input)) return input;
  ctx.addIssue({
    code: 'custom',
    message: `must be one of none, batch, interval:<ms> (got ${JSON.stringify(input)})`,
  });
  return z.NEVER;
});

const keys = z.unknown().transform((input, ctx): string => {
  if (input === 'none' || input === 'random') return input;
  if (typeof input === 'string' && /^roundRobin:[1-9]\d*$/.test(input)) return input;
  ctx.addIssue({
    code: 'custom',
    message: `must be one of none, random, roundRobin:<n> (got ${JSON.stringify(input)})`,
  });
  return z.NEVER;
});

/** Target records per second for all producers together, `max` (closed loop), or `find-max`. */
const rate = z.unknown().transform((input, ctx): number | 'max' | 'find-max' => {
  if (input === 'max' || input === 'find-max') return input;
  const n = typeof input === 'string' && input.trim() !== '' ? Number(input) : input;
  if (typeof n === 'number' && Number.isFinite(n) && n > 0) return n;
  ctx.addIssue({
    code: 'custom',
    message: `must be max, find-max, or a number of records per second above 0 (got ${JSON.stringify(input)})`,
  });
  return z.NEVER;
});

const topicConfigValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);

/**
 * The bundled target's listener: TLS on a throwaway CA and certificate and a throwaway SASL user,
 * made for the run and never stored (the run records only these two fields). Absent: PLAINTEXT.
 */
const clusterSecurity = closedObject('cluster.security', {
  tls: bool().default(false),
  sasl: oneOf(BUNDLED_SASL).default('none'),
});

const cluster = closedObject('cluster', {
  nodes: integer(1, 5).default(1),
  fsync: fsyncPolicy.default('none'),
  security: clusterSecurity.optional(),
});

const topics = closedObject('topics', {
  prefix: z
    .string()
    .regex(/^[a-zA-Z0-9._-]{1,100}$/, 'must be 1 to 100 of the characters a-z A-Z 0-9 . _ -')
    .default('kbench'),
  count: integer(1, 200_000).default(1),
  /** Extra topics created but never produced to or read (the broker holds them, as in the 2016 topic-count test). */
  idle: integer(0, 200_000).default(0),
  partitions: integer(1, MAX_PARTITIONS_PER_TOPIC).default(1),
  replicationFactor: integer(1, 5).default(1),
  minInsyncReplicas: integer(1, 5).default(1),
  config: z.record(z.string(), topicConfigValue).default({}),
  /** Leave the run's topics (and consumer groups) on the cluster afterwards instead of deleting them. */
  keep: bool().default(false),
  /** A topic of the planned name exists already: fail the run, or use it as it is (never altered or deleted). */
  ifExists: oneOf(IF_TOPIC_EXISTS).default('fail'),
});

const producerFields = {
  count: integer(0, 1000).default(1),
  acks: oneOf(ACKS, { '-1': 'all' }).default(1),
  messageSize: messageSizeSchema.default(100),
  keys: keys.default('none'),
  rate: rate.default('max'),
  compression: oneOf(COMPRESSION).default('none'),
  batchSize: size({ min: 1, max: 64 * 1024 * 1024 }).default(16384),
  lingerMs: integer(0, 60_000).default(0),
  maxInFlight: integer(1, 1000).default(5),
  idempotence: bool().default(false),
  /** Kafka producer properties passed through to the driver (client-config.ts). */
  config: clientConfigSchema('producers').default({}),
};
const producers = closedObject('producers', producerFields);

const consumerFields = {
  count: integer(0, 1000).default(0),
  groups: integer(1, 100).default(1),
  startAt: oneOf(START_AT).default('latest'),
  backlog: size({ max: MAX_BACKLOG_BYTES }).default(0),
  /** Kafka consumer properties passed through to the driver (client-config.ts). */
  config: clientConfigSchema('consumers').default({}),
};
const consumers = closedObject('consumers', consumerFields);

const KNOB_FIELDS: Record<ClientRole, Record<string, z.ZodType>> = {
  producers: producerFields,
  consumers: consumerFields,
};

/** Checks a value with a knob's own rule, for a property that sets that knob. */
function knobValue(role: ClientRole, knob: string, value: unknown) {
  const parsed = KNOB_FIELDS[role][knob]?.safeParse(value);
  if (!parsed) return { ok: false as const, message: `no knob ${role}.${knob}` };
  if (parsed.success) return { ok: true as const, value: parsed.data };
  return { ok: false as const, message: parsed.error.issues.map((i) => i.message).join('; ') };
}

const fault = closedObject('faults.*', {
  at: duration(),
  action: oneOf([...FAULT_ACTIONS, COMMAND_FAULT]),
  node: z
    .unknown()
    .transform((input, ctx): number | string => {
      if (typeof input === 'number' && Number.isInteger(input) && input >= 1 && input <= 5) return input;
      if (typeof input === 'string' && /^[1-5]$/.test(input)) return Number(input);
      if (typeof input === 'string' && /^leader:.+-\d+$/.test(input)) return input;
      ctx.addIssue({
        code: 'custom',
        message: `must be a node id 1 to 5 or leader:<topic>-<partition> (got ${JSON.stringify(input)})`,
      });
      return z.NEVER;
    })
    .optional(),
  for: duration().optional(),
  /** An isolate fault's side: the node's peers (replication, cluster upkeep) or its clients. */
  from: oneOf(ISOLATE_FROM).optional(),
  /** A slow-disk fault's delay added to each fdatasync. */
  delay: duration({ min: SLOW_DISK_DELAY_MS.min, max: SLOW_DISK_DELAY_MS.max }).optional(),
  /** A command fault's command line, run by /bin/sh on this machine. */
  run: text().optional(),
  /** How long a command fault may run before its process group is killed. */
  timeout: duration({ min: COMMAND_TIMEOUT_MS.min, max: COMMAND_TIMEOUT_MS.max }).optional(),
});

/** Bounds and pace of the search that `producers.rate: find-max` runs before the measured phase. */
const findMax = closedObject('findMax', {
  /** A trial passes when publish p99 stays at or below this. */
  publishP99Ms: z
    .unknown()
    .transform((input, ctx): number => {
      const n = typeof input === 'string' && input.trim() !== '' ? Number(input) : input;
      if (typeof n === 'number' && Number.isFinite(n) && n > 0) return n;
      ctx.addIssue({
        code: 'custom',
        message: `must be a number of milliseconds above 0 (got ${JSON.stringify(input)})`,
      });
      return z.NEVER;
    })
    .default(100),
  /** ...and consumers (if any) fall behind by no more than this many seconds of records. */
  maxBacklogSeconds: integer(0, 3600).default(1),
  /** Length of each trial. */
  trial: duration({ min: 1000, max: MAX_DURATION_MS }).default('10s'),
  /** The search stops when the passing and failing rates are this close (relative). */
  precision: z
    .unknown()
    .transform((input, ctx): number => {
      const n = typeof input === 'string' && input.trim() !== '' ? Number(input) : input;
      if (typeof n === 'number' && n >= 0.005 && n <= 0.5) return n;
      ctx.addIssue({
        code: 'custom',
        message: `must be a fraction from 0.005 to 0.5 (got ${JSON.stringify(input)})`,
      });
      return z.NEVER;
    })
    .default(0.05),
  /** Trials to run at most, whatever the precision reached. */
  maxTrials: integer(2, 50).default(12),
});

/** What a run whose load comes from agents does when one is lost (docs/agents.md). */
const agents = closedObject('agents', {
  /** fail: stop the others and end the run failed; continue: go on with the rest. */
  onLoss: oneOf(AGENT_ON_LOSS).default('fail'),
  /** An agent that does not answer a sample's request within this long is lost. */
  lossTimeoutMs: integer(500, 600_000).default(5000),
});

const sweep = closedObject('sweep', {
  knob: z.string().min(1, 'must name a knob by its path, e.g. producers.messageSize'),
  values: z.array(z.unknown()).min(1, 'must list at least one value'),
});

/** The fields of a scenario, with their defaults. `parseScenario` adds the cross-field rules. */
export const scenarioShape = closedObject('', {
  name: text().default('unnamed scenario'),
  description: text().default(''),
  target: text().default('bundled'),
  driver: oneOf(DRIVERS).default('kafkajs'),
  cluster: cluster.prefault({}),
  topics: topics.prefault({}),
  producers: producers.prefault({}),
  consumers: consumers.prefault({}),
  duration: duration({ min: 1000, max: MAX_DURATION_MS }).optional(),
  records: integer(1, MAX_RECORDS).optional(),
  warmup: duration({ max: MAX_DURATION_MS }).default('0s'),
  /** How often a sample is taken, in ms (100..1000; 1000 when absent). Rates stay per second. */
  sampleIntervalMs: integer(100, 1000).optional(),
  /**
   * How often a sample is taken while a fault is in progress, from its `at` to 5 s after its end
   * (100..1000; 100 when absent). At or above sampleIntervalMs it changes nothing: 1000 turns it off.
   */
  faultSampleIntervalMs: integer(100, 1000).optional(),
  faults: z.array(fault).default([]),
  /**
   * Check after the measured phase that every acknowledged record is in the log once and in order
   * (native driver). Runs with faults are checked whatever this says.
   */
  verify: bool().default(false),
  findMax: findMax.prefault({}),
  agents: agents.prefault({}),
  sweep: sweep.optional(),
});

export type Scenario = z.output<typeof scenarioShape>;
/** What a person may write: every field optional, sizes and durations as text or numbers. */
export type ScenarioInput = z.input<typeof scenarioShape>;
export type Acks = (typeof ACKS)[number];
export type Compression = (typeof COMPRESSION)[number];

/** The shortest value that carries the verification mark: an 8-byte send time and a 16-byte mark. */
export const MARKED_VALUE_BYTES = 24;

/** Why values of this size cannot carry the verification mark, or null when they can. */
export function whyUnmarkable(size: Scenario['producers']['messageSize']): string | null {
  const smallest =
    typeof size === 'number' ? size : 'min' in size && !('distribution' in size) ? size.min : null;
  if (smallest === null)
    return 'the record check (verify) needs a fixed messageSize or a min/max range, not a distribution or payload file';
  if (smallest < MARKED_VALUE_BYTES)
    return `the record check (verify) needs values of ${MARKED_VALUE_BYTES} bytes or more (an 8-byte send time and a 16-byte mark; the smallest is ${smallest})`;
  return null;
}

/** The default length of a run when neither `duration` nor `records` is given. */
export const DEFAULT_DURATION = '60s';

export const scenarioSchema = scenarioShape.transform((s, ctx): Scenario => {
  if (s.duration !== undefined && s.records !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['records'],
      message: 'set either duration or records, not both',
    });
  }
  // Properties that duplicate a knob set it; the rest stay in config. The driver must honour each.
  const [producerConfig, consumerConfig] = (['producers', 'consumers'] as const).map((role) =>
    resolveClientConfig(
      role,
      s[role].config,
      s.driver,
      (knob, value) => knobValue(role, knob, value),
      (name, message) => ctx.addIssue({ code: 'custom', path: [role, 'config', name], message }),
    ),
  ) as [ResolvedClientConfig, ResolvedClientConfig];
  const resolved = {
    ...s,
    producers: { ...s.producers, ...producerConfig.knobs, config: producerConfig.config },
    consumers: { ...s.consumers, ...consumerConfig.knobs, config: consumerConfig.config },
    duration: s.records === undefined ? (s.duration ?? DEFAULT_DURATION) : s.duration,
  } as Scenario;
  const durationMs = resolved.duration === undefined ? undefined : parseDurationMs(resolved.duration);
  const warmupMs = parseDurationMs(resolved.warmup) ?? 0;
  if (durationMs !== undefined && warmupMs >= durationMs) {
    ctx.addIssue({
      code: 'custom',
      path: ['warmup'],
      message: `must be shorter than duration (${resolved.duration})`,
    });
  }
  if (s.topics.replicationFactor > s.cluster.nodes && (s.target === 'bundled' || s.target === 'kafka')) {
    ctx.addIssue({
      code: 'custom',
      path: ['topics', 'replicationFactor'],
      message: `must not exceed cluster.nodes (${s.cluster.nodes})`,
    });
  }
  const perNode = partitionReplicasPerNode(s);
  if (s.target === 'bundled' && perNode > MAX_PARTITION_REPLICAS_PER_NODE) {
    ctx.addIssue({
      code: 'custom',
      path: ['topics', s.topics.idle > s.topics.count ? 'idle' : 'count'],
      message: `${describePartitionReplicas(s, perNode)}; the bundled broker hosts at most ${thousands(MAX_PARTITION_REPLICAS_PER_NODE)}`,
    });
  }
  if (s.cluster.security && s.target !== 'bundled') {
    ctx.addIssue({
      code: 'custom',
      path: ['cluster', 'security'],
      message: `only the bundled target takes cluster.security (target is ${s.target}); a profile carries an external cluster's tls and sasl`,
    });
  }
  if (s.verify && s.driver !== 'native') {
    ctx.addIssue({
      code: 'custom',
      path: ['verify'],
      message: `verify: true needs driver: native, whose producers mark each record (driver is ${s.driver}; --set driver=native)`,
    });
  }
  const unmarkable = s.verify ? whyUnmarkable(s.producers.messageSize) : null;
  if (unmarkable) ctx.addIssue({ code: 'custom', path: ['producers', 'messageSize'], message: unmarkable });
  if (s.topics.minInsyncReplicas > s.topics.replicationFactor) {
    ctx.addIssue({
      code: 'custom',
      path: ['topics', 'minInsyncReplicas'],
      message: `must not exceed topics.replicationFactor (${s.topics.replicationFactor})`,
    });
  }
  s.faults.forEach((f, i) => {
    const at = (field: string, message: string) =>
      ctx.addIssue({ code: 'custom', path: ['faults', i, field], message });
    if (f.action === COMMAND_FAULT) {
      if (f.run === undefined || f.run.trim() === '')
        at('run', 'a command fault needs run: the command line to run (e.g. "kubectl delete pod kafka-1")');
      if (f.node !== undefined) at('node', 'a command fault acts through its command, not on a node');
      if (f.for !== undefined)
        at('for', 'only pause takes for; a command runs until it exits or its timeout');
      return;
    }
    const onNode = (NODE_FAULT_ACTIONS as readonly string[]).includes(f.action);
    if (onNode && f.node === undefined)
      at('node', `a ${f.action} needs node: a node id 1 to 5 or leader:<topic>-<partition>`);
    if (!onNode && f.node !== undefined)
      at('node', `a ${f.action} acts on every node of the cluster: leave node out`);
    if (f.run !== undefined) at('run', `only a command fault takes run (action is ${f.action})`);
    if (f.timeout !== undefined) at('timeout', `only a command fault takes timeout (action is ${f.action})`);
    if (f.action !== 'isolate' && f.from !== undefined)
      at('from', `only isolate takes from (action is ${f.action})`);
    if (f.action === 'slow-disk' && f.delay === undefined)
      at('delay', 'a slow-disk needs delay: the time added to each fdatasync (e.g. 5ms)');
    if (f.action !== 'slow-disk' && f.delay !== undefined)
      at('delay', `only slow-disk takes delay (action is ${f.action})`);
    if (f.action === 'pause' && f.for === undefined)
      at('for', 'a pause needs for: how long the node stays paused (e.g. 1s)');
    if (!['pause', 'isolate', 'slow-disk'].includes(f.action) && f.for !== undefined)
      at(
        'for',
        `only pause, isolate and slow-disk take for; a ${f.action} lasts until a later fault (restart, heal) or the end of the run`,
      );
  });
  if (s.consumers.startAt === 'backlog' && s.consumers.backlog === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['consumers', 'backlog'],
      message: 'must be a size above 0 when consumers.startAt is backlog (e.g. 2GB)',
    });
  }
  if (s.producers.count === 0 && s.consumers.count === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['producers', 'count'],
      message: 'a scenario needs at least one producer or one consumer',
    });
  }
  return resolved;
});

/**
 * Partition replicas on the busiest node of a cluster: every topic of the run and every idle topic
 * (idle topics have the same partitions and RF), spread as evenly as nodes allow.
 */
export function partitionReplicasPerNode(s: {
  cluster: { nodes: number };
  topics: { count: number; idle: number; partitions: number; replicationFactor: number };
}): number {
  const { count, idle, partitions, replicationFactor } = s.topics;
  return Math.ceil(((count + idle) * partitions * replicationFactor) / s.cluster.nodes);
}

const thousands = (n: number) => n.toLocaleString('en-US');
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "(1 topic + 120000 idle) × 1 partition × RF 1 on 1 node = 120,001 partition replicas per node" */
function describePartitionReplicas(s: Scenario, perNode: number): string {
  const { count, idle, partitions, replicationFactor } = s.topics;
  const topics = idle > 0 ? `(${plural(count, 'topic')} + ${idle} idle)` : plural(count, 'topic');
  return `${topics} × ${plural(partitions, 'partition')} × RF ${replicationFactor} on ${plural(s.cluster.nodes, 'node')} = ${thousands(perNode)} partition replicas per node`;
}
