// What a form needs to know about each knob: its kind, allowed values and a line of help.
// A test checks this covers every knob the schema has, so forms never drift from the schema.
import { AGENT_ON_LOSS } from './agents.js';
import {
  ACKS,
  BUNDLED_SASL,
  COMMAND_FAULT,
  COMPRESSION,
  DRIVERS,
  FAULT_ACTIONS,
  IF_TOPIC_EXISTS,
  START_AT,
} from './scenario.js';

export type FieldKind =
  | 'text'
  | 'longtext'
  | 'integer'
  | 'number'
  | 'enum'
  | 'duration'
  | 'size'
  | 'boolean'
  | 'pattern'
  | 'json';

export interface FieldInfo {
  path: string;
  kind: FieldKind;
  label: string;
  help: string;
  options?: readonly (string | number)[];
  /** For `pattern` fields: examples of what may be written. */
  examples?: readonly string[];
  /** Fields a form shows only under "more". */
  advanced?: boolean;
}

export const FIELD_GROUPS: { title: string; prefix: string }[] = [
  { title: 'Scenario', prefix: '' },
  { title: 'Cluster', prefix: 'cluster' },
  { title: 'Topics', prefix: 'topics' },
  { title: 'Producers', prefix: 'producers' },
  { title: 'Consumers', prefix: 'consumers' },
  { title: 'find-max search', prefix: 'findMax' },
  { title: 'Agents', prefix: 'agents' },
];

export const FIELD_INFO: FieldInfo[] = [
  { path: 'name', kind: 'text', label: 'Name', help: 'Shown in the history and in chart legends.' },
  {
    path: 'description',
    kind: 'longtext',
    label: 'Description',
    help: 'What the scenario shows, and the published setup it mirrors.',
  },
  {
    path: 'target',
    kind: 'pattern',
    label: 'Target',
    help: 'bundled, kafka (a managed Apache Kafka on this machine), a profile name, or bootstrap servers host:port[,host:port].',
    examples: ['bundled', 'kafka', '127.0.0.1:9092'],
  },
  { path: 'driver', kind: 'enum', label: 'Driver', help: 'The load generator.', options: DRIVERS },
  {
    path: 'duration',
    kind: 'duration',
    label: 'Duration',
    help: 'Length of the run, warm-up included, at most 24h (or set records instead).',
  },
  {
    path: 'records',
    kind: 'integer',
    label: 'Records',
    help: 'Stop after this many records (at most 10,000,000,000) instead of after a duration.',
    advanced: true,
  },
  {
    path: 'warmup',
    kind: 'duration',
    label: 'Warm-up',
    help: 'Sampled and charted, left out of the summary.',
  },
  {
    path: 'sampleIntervalMs',
    kind: 'integer',
    label: 'Sample interval (ms)',
    help: 'How often a sample is taken, 100 to 1000 ms (default 1000): shorter shows sub-second pauses; rates stay per second.',
    advanced: true,
  },
  {
    path: 'faultSampleIntervalMs',
    kind: 'integer',
    label: 'Sample interval around faults (ms)',
    help: 'How often a sample is taken while a fault is in progress and for 5 s after it, 100 to 1000 ms (default 100); 1000 turns it off.',
    advanced: true,
  },
  {
    path: 'faults',
    kind: 'json',
    label: 'Faults',
    help: 'A timeline: [{ at: 30s, action: kill|pause|restart, node: 1, for: 1s }] on the bundled or kafka target, or [{ at: 30s, action: command, run: "kubectl delete pod kafka-1", timeout: 60s }] on any.',
    advanced: true,
  },
  {
    path: 'verify',
    kind: 'boolean',
    label: 'Check records',
    help: 'After load, read the log back and count acknowledged records lost, duplicated or reordered (driver native; values of 24 bytes or more). Runs with faults are checked anyway.',
    advanced: true,
  },
  {
    path: 'cluster.nodes',
    kind: 'integer',
    label: 'Nodes',
    help: 'Nodes of the bundled broker or of the managed Apache Kafka (1 to 5).',
  },
  {
    path: 'cluster.fsync',
    kind: 'pattern',
    label: 'fsync',
    help: 'none (page cache), batch (every batch), interval:<ms>.',
    examples: ['none', 'batch', 'interval:100'],
  },
  {
    path: 'cluster.security.tls',
    kind: 'boolean',
    label: 'TLS listener',
    help: 'Bundled target only: the broker listens with TLS on a CA and certificate made for the run (SSL, or SASL_SSL with sasl).',
    advanced: true,
  },
  {
    path: 'cluster.security.sasl',
    kind: 'enum',
    label: 'SASL',
    help: 'Bundled target only: the listener asks for this SASL login, with a user made for the run (none: no SASL).',
    options: BUNDLED_SASL,
    advanced: true,
  },
  {
    path: 'topics.prefix',
    kind: 'text',
    label: 'Name prefix',
    help: 'Topics and groups are named <prefix>-<run id>-<n>.',
    advanced: true,
  },
  {
    path: 'topics.count',
    kind: 'integer',
    label: 'Topics',
    help: 'Topics created for the run (bundled: at most 150,000 partition replicas per node, idle topics included).',
  },
  {
    path: 'topics.partitions',
    kind: 'integer',
    label: 'Partitions',
    help: 'Partitions per topic (at most 10,000).',
  },
  {
    path: 'topics.idle',
    kind: 'integer',
    label: 'Idle topics',
    help: 'Extra topics created (same partitions and RF) but not produced to or read.',
    advanced: true,
  },
  {
    path: 'topics.replicationFactor',
    kind: 'integer',
    label: 'Replication factor',
    help: 'At most cluster.nodes on the bundled and kafka targets.',
  },
  { path: 'topics.minInsyncReplicas', kind: 'integer', label: 'Min in-sync replicas', help: 'For acks=all.' },
  {
    path: 'topics.config',
    kind: 'json',
    label: 'Topic configs',
    help: 'Extra Kafka topic configs, e.g. { "retention.ms": 3600000 }.',
    advanced: true,
  },
  {
    path: 'topics.keep',
    kind: 'boolean',
    label: 'Keep topics',
    help: "Leave the run's topics and groups on the cluster afterwards (deleted by default).",
    advanced: true,
  },
  {
    path: 'topics.ifExists',
    kind: 'enum',
    label: 'If a topic exists',
    help: 'fail: stop before load; reuse: use it as it is (never altered or deleted).',
    options: IF_TOPIC_EXISTS,
    advanced: true,
  },
  { path: 'producers.count', kind: 'integer', label: 'Producers', help: 'Producer clients.' },
  {
    path: 'producers.acks',
    kind: 'enum',
    label: 'acks',
    help: '0: no ack; 1: the leader; all: the in-sync replicas.',
    options: ACKS,
  },
  {
    path: 'producers.messageSize',
    kind: 'size',
    label: 'Message size',
    help: 'Value bytes: 100, 1KB (or in YAML { min, max }, { distribution: normal, mean, stddev } / { distribution: exponential, mean }, or { payloadFile: <path> }).',
  },
  {
    path: 'producers.rate',
    kind: 'pattern',
    label: 'Rate',
    help: 'max (closed loop), records/s for all producers (open loop), or find-max.',
    examples: ['max', '10000', 'find-max'],
  },
  {
    path: 'producers.keys',
    kind: 'pattern',
    label: 'Keys',
    help: 'none, random, or roundRobin:<n>.',
    examples: ['none', 'random', 'roundRobin:100'],
    advanced: true,
  },
  {
    path: 'producers.compression',
    kind: 'enum',
    label: 'Compression',
    help: 'Codec for record batches.',
    options: COMPRESSION,
  },
  {
    path: 'producers.batchSize',
    kind: 'size',
    label: 'batch.size',
    help: 'Bytes per batch (kafkajs: records per request).',
  },
  {
    path: 'producers.lingerMs',
    kind: 'integer',
    label: 'linger.ms',
    help: 'How long a batch may wait to fill (native driver).',
  },
  {
    path: 'producers.maxInFlight',
    kind: 'integer',
    label: 'Max in flight',
    help: 'Requests kept open per producer.',
    advanced: true,
  },
  {
    path: 'producers.idempotence',
    kind: 'boolean',
    label: 'Idempotence',
    help: 'Idempotent producer (sequence numbers).',
    advanced: true,
  },
  {
    path: 'producers.config',
    kind: 'json',
    label: 'Producer properties',
    help: 'Kafka producer properties by name, e.g. { "buffer.memory": 33554432 }; refused by name where the driver cannot honour one.',
    advanced: true,
  },
  { path: 'consumers.count', kind: 'integer', label: 'Consumers', help: 'Consumers per group.' },
  {
    path: 'consumers.groups',
    kind: 'integer',
    label: 'Groups',
    help: 'Consumer groups; each reads every record.',
  },
  {
    path: 'consumers.startAt',
    kind: 'enum',
    label: 'Start at',
    help: 'latest skips a backlog; earliest and backlog read it.',
    options: START_AT,
  },
  {
    path: 'consumers.backlog',
    kind: 'size',
    label: 'Backlog',
    help: 'Bytes written before the measured phase, e.g. 2GB (at most 1TB, and it must fit the disk).',
  },
  {
    path: 'consumers.config',
    kind: 'json',
    label: 'Consumer properties',
    help: 'Kafka consumer properties by name, e.g. { "fetch.max.wait.ms": 500 }; refused by name where the driver cannot honour one.',
    advanced: true,
  },
  {
    path: 'findMax.publishP99Ms',
    kind: 'number',
    label: 'Publish p99 bound (ms)',
    help: 'A trial passes at or below this.',
    advanced: true,
  },
  {
    path: 'findMax.maxBacklogSeconds',
    kind: 'integer',
    label: 'Max backlog (s)',
    help: 'Consumers may fall behind this many seconds of records.',
    advanced: true,
  },
  {
    path: 'findMax.trial',
    kind: 'duration',
    label: 'Trial length',
    help: 'Each trial; the first second is ramp-up.',
    advanced: true,
  },
  {
    path: 'findMax.precision',
    kind: 'number',
    label: 'Precision',
    help: 'Stop when passing and failing rates are this close.',
    advanced: true,
  },
  {
    path: 'findMax.maxTrials',
    kind: 'integer',
    label: 'Max trials',
    help: 'Trials at most.',
    advanced: true,
  },
  {
    path: 'agents.onLoss',
    kind: 'enum',
    label: 'When an agent is lost',
    help: 'With load agents: fail stops the others and fails the run; continue goes on with the rest.',
    options: AGENT_ON_LOSS,
    advanced: true,
  },
  {
    path: 'agents.lossTimeoutMs',
    kind: 'integer',
    label: 'Agent loss timeout (ms)',
    help: 'An agent that does not answer within this long is lost (500 to 600000).',
    advanced: true,
  },
];

/** The fault actions a timeline may use (for forms that edit faults row by row). */
export const FAULT_ACTION_OPTIONS = [...FAULT_ACTIONS, COMMAND_FAULT] as const;
