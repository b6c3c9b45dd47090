// Kafka client properties as kafkajs options, and the options given back by their Kafka names
// (what the run records as applied). Which properties kafkajs honours is decided in
// @kbench/schema's client-config.ts; the scenario check refuses the others before this.
import type { ClientPropertyValue, Scenario } from '@kbench/schema';
import type { ConsumerConfig, ConsumerRunConfig } from 'kafkajs';

export type Properties = Record<string, ClientPropertyValue>;

/** kafkajs's own defaults, set explicitly so that what is reported is what runs. */
const KAFKAJS_MIN_BYTES = 1;
const KAFKAJS_MAX_BYTES = 10_485_760;
const KAFKAJS_MAX_BYTES_PER_PARTITION = 1_048_576;
/** Ours: a fetch held a quarter second at most, and a group that notices a lost member within 10 s. */
const MAX_WAIT_MS = 250;
const SESSION_TIMEOUT_MS = 10_000;
const HEARTBEAT_INTERVAL_MS = 1000;
const REQUEST_TIMEOUT_MS = 30_000;

const num = (props: Properties, name: string, fallback: number): number =>
  typeof props[name] === 'number' ? props[name] : fallback;

/** Options of the kafkajs client (one per worker thread, shared by its clients). */
export function clientOptions(
  props: Properties,
  clientId: string,
): { clientId: string; requestTimeout: number } {
  return {
    clientId: typeof props['client.id'] === 'string' ? props['client.id'] : clientId,
    requestTimeout: num(props, 'request.timeout.ms', REQUEST_TIMEOUT_MS),
  };
}

export interface ConsumerOptions {
  consumer: Omit<ConsumerConfig, 'groupId'>;
  run: Pick<ConsumerRunConfig, 'autoCommit' | 'autoCommitInterval'>;
}

export function consumerOptions(props: Properties): ConsumerOptions {
  const interval = props['auto.commit.interval.ms'];
  return {
    consumer: {
      sessionTimeout: num(props, 'session.timeout.ms', SESSION_TIMEOUT_MS),
      rebalanceTimeout: 10_000,
      heartbeatInterval: num(props, 'heartbeat.interval.ms', HEARTBEAT_INTERVAL_MS),
      maxWaitTimeInMs: num(props, 'fetch.max.wait.ms', MAX_WAIT_MS),
      minBytes: num(props, 'fetch.min.bytes', KAFKAJS_MIN_BYTES),
      maxBytes: num(props, 'fetch.max.bytes', KAFKAJS_MAX_BYTES),
      maxBytesPerPartition: num(props, 'max.partition.fetch.bytes', KAFKAJS_MAX_BYTES_PER_PARTITION),
      allowAutoTopicCreation: false,
    },
    run: {
      autoCommit: props['enable.auto.commit'] !== false,
      ...(typeof interval === 'number' ? { autoCommitInterval: interval } : {}),
    },
  };
}

/** What a kafkajs consumer runs with, by Kafka names. */
export function consumerProperties(
  options: ConsumerOptions,
  client: { clientId: string; requestTimeout: number },
  fromBeginning: boolean,
): Record<string, string> {
  const c = options.consumer;
  return text({
    'auto.offset.reset': fromBeginning ? 'earliest' : 'latest',
    'fetch.min.bytes': c.minBytes,
    'fetch.max.wait.ms': c.maxWaitTimeInMs,
    'fetch.max.bytes': c.maxBytes,
    'max.partition.fetch.bytes': c.maxBytesPerPartition,
    'enable.auto.commit': options.run.autoCommit,
    'auto.commit.interval.ms': options.run.autoCommitInterval ?? undefined,
    'session.timeout.ms': c.sessionTimeout,
    'heartbeat.interval.ms': c.heartbeatInterval,
    'request.timeout.ms': client.requestTimeout,
    'client.id': client.clientId,
  });
}

/** What a kafkajs producer runs with, by Kafka names (batch.size is records per send, see producer.ts). */
export function producerProperties(
  config: Scenario['producers'],
  client: { clientId: string; requestTimeout: number },
): Record<string, string> {
  return text({
    acks: config.acks,
    'batch.size': config.batchSize,
    'compression.type': config.compression,
    'enable.idempotence': config.idempotence,
    'max.in.flight.requests.per.connection': config.maxInFlight,
    'request.timeout.ms': client.requestTimeout,
    'client.id': client.clientId,
  });
}

function text(values: Record<string, string | number | boolean | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values)
      .filter((e): e is [string, string | number | boolean] => e[1] !== undefined)
      .map(([k, v]) => [k, String(v)]),
  );
}
