// The native driver: producers and consumers from the Rust load engine (broker-native/crates/loadgen),
// for rates kafkajs cannot reach. Its histograms use the same buckets as ours, so they merge exactly.
import { createPrivateKey } from 'node:crypto';
import {
  type NativeAcknowledged,
  NativeConsumer,
  type NativeConsumerOptions,
  type NativeInterval,
  NativeProducer,
  type NativeProducerOptions,
  type NativeSecurity,
} from '@kbench/broker-native';
import { type ClientInterval, emptyInterval } from '../interval.js';
import { readPayloadFile, sizeTable } from '../payload.js';
import type { ConnectionSecurity } from '../security.js';
import type { Acknowledged } from '../verification.js';
import type { ConsumersPlan, LoadClients, LoadDriver, ProducersPlan } from './driver.js';
import { mergeIntervals } from './kafkajs/index.js';

const ACKS = { 0: 0, 1: 1, all: -1 } as const;

function toInterval(n: NativeInterval): ClientInterval {
  return {
    records: n.records,
    valueBytes: n.valueBytes,
    wireBytes: n.wireBytes,
    errors: n.errors,
    ...(n.errorMessages.length > 0 ? { errorMessages: n.errorMessages } : {}),
    retries: n.retries,
    latency: {
      buckets: n.latencyBuckets,
      counts: n.latencyCounts,
      count: n.latencyCount,
      sum: n.latencySumMicros,
      max: n.latencyMaxMicros,
    },
    busy: n.busy ?? null,
  };
}

interface NativeClient {
  takeInterval(): NativeInterval;
  effectiveProperties(): Record<string, string>;
  stop(): Promise<void>;
  lastError(): string | null;
  acknowledged?(): NativeAcknowledged[];
}

/** A set of native clients; producers are created on start() so that they begin sending then. */
class NativeSet implements LoadClients {
  private clients: NativeClient[] = [];
  private resolveFinished!: () => void;
  readonly finished = new Promise<void>((resolve) => {
    this.resolveFinished = resolve;
  });
  private error: string | null = null;
  private starting: Promise<void> | null = null;

  constructor(private readonly create: (() => Promise<NativeClient & { finished?(): Promise<void> }>)[]) {}

  /** Consumers are ready once they have joined their group and know their start offsets, so they are created up front. */
  async createNow(): Promise<this> {
    this.clients = await Promise.all(this.create.map((make) => make()));
    return this;
  }

  start(): void {
    this.starting ??= (async () => {
      try {
        const producers = await Promise.all(this.create.map((make) => make()));
        this.clients = producers;
        await Promise.all(producers.map((p) => p.finished?.()));
      } catch (err) {
        this.error = err instanceof Error ? err.message : String(err);
      }
      this.resolveFinished();
    })();
  }

  async take(): Promise<ClientInterval> {
    if (this.clients.length === 0) return emptyInterval();
    return mergeIntervals(this.clients.map((c) => toInterval(c.takeInterval())));
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.clients.map((c) => c.stop()));
    this.resolveFinished();
  }

  lastError(): string | null {
    return this.error ?? this.clients.map((c) => c.lastError()).find((e) => e) ?? null;
  }

  acknowledged(): Acknowledged {
    return { ranges: this.clients.flatMap((c) => c.acknowledged?.() ?? []) };
  }

  /** As the Rust engine reports them (every client of a set has the same), by name. */
  properties(): Record<string, string> {
    const reported = Object.entries(this.clients[0]?.effectiveProperties() ?? {});
    return Object.fromEntries(reported.sort(([a], [b]) => a.localeCompare(b)));
  }
}

/** Property values as the engine takes them: text, parsed by each property's type in Rust. */
const asText = (config: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(config).map(([k, v]) => [k, String(v)]));

/**
 * A profile's TLS and SASL as the Rust engine takes them: PEM text (read by connectionSecurity), an
 * encrypted key decrypted here with its passphrase (rustls reads unencrypted keys only), and
 * rejectUnauthorized false as the engine's explicit insecure.
 */
export function nativeSecurity(security: ConnectionSecurity | undefined): NativeSecurity | undefined {
  if (!security) return undefined;
  const out: NativeSecurity = {};
  if (security.tls) {
    const { ca, cert, key, passphrase, rejectUnauthorized, servername } = security.tls;
    const plainKey =
      key !== undefined && passphrase !== undefined
        ? (createPrivateKey({ key, passphrase }).export({ type: 'pkcs8', format: 'pem' }) as string)
        : key;
    out.tls = {
      insecure: !rejectUnauthorized,
      ...(ca !== undefined ? { ca } : {}),
      ...(cert !== undefined ? { cert } : {}),
      ...(plainKey !== undefined ? { key: plainKey } : {}),
      ...(servername !== undefined ? { servername } : {}),
    };
  }
  if (security.sasl) out.sasl = { ...security.sasl };
  return out;
}

/** The engine's options for producer i of a plan (the native driver's, and an agent's over its protocol). */
export function nativeProducerOptions(plan: ProducersPlan): (i: number) => NativeProducerOptions {
  const security = nativeSecurity(plan.security);
  const c = plan.config;
  const size = c.messageSize;
  // Fixed and uniform sizes are drawn in Rust; a distribution as a table of sizes drawn here with
  // the kafkajs driver's seeded sampler (producer i: seed i + 1, the same sizes each run); a payload file as its bytes.
  const payload =
    typeof size === 'object' && 'payloadFile' in size ? readPayloadFile(size.payloadFile) : null;
  const sizeOptions = (
    i: number,
  ): Pick<NativeProducerOptions, 'messageSize' | 'messageSizeMax' | 'messageSizeTable' | 'payload'> => {
    if (payload) return { messageSize: payload.length, payload };
    if (typeof size === 'number') return { messageSize: size };
    if ('payloadFile' in size) throw new Error('unreachable: payload files are read above');
    if (!('distribution' in size)) return { messageSize: size.min, messageSizeMax: size.max };
    const table = sizeTable(size, i + 1);
    return {
      messageSize: 0,
      messageSizeTable: Buffer.from(table.buffer, table.byteOffset, table.byteLength),
    };
  };
  return (i) => ({
    bootstrap: plan.bootstrap,
    topics: plan.topics,
    acks: ACKS[c.acks],
    ...sizeOptions(i),
    keys: c.keys,
    compression: c.compression,
    batchSize: c.batchSize,
    lingerMs: c.lingerMs,
    maxInFlight: c.maxInFlight,
    idempotence: c.idempotence,
    properties: asText(c.config),
    ...(security ? { security } : {}),
    ...(plan.ratePerSec === null ? {} : { ratePerSec: plan.ratePerSec }),
    ...(plan.recordsEach ? { records: plan.recordsEach[i] ?? 0 } : {}),
    ...(plan.durationMs === null ? {} : { durationMs: plan.durationMs }),
    // Producer i marks its records with number i (the record check).
    ...(plan.verify ? { verifyProducer: i } : {}),
    ...(plan.unstamped ? { unstamped: true } : {}),
  });
}

/** The engine's options for each consumer of a plan. */
export function nativeConsumerOptions(plan: ConsumersPlan): NativeConsumerOptions {
  const security = nativeSecurity(plan.security);
  return {
    bootstrap: plan.bootstrap,
    topics: plan.topics,
    fromBeginning: plan.fromBeginning,
    groupId: plan.groupId,
    properties: asText(plan.properties),
    ...(security ? { security } : {}),
  };
}

export function nativeDriver(): LoadDriver {
  return {
    name: 'native',
    async startProducers(plan: ProducersPlan) {
      const options = nativeProducerOptions(plan);
      const makers = Array.from(
        { length: plan.config.count },
        (_, i) => () => NativeProducer.start(options(i)),
      );
      return new NativeSet(makers);
    },
    async startConsumers(plan: ConsumersPlan) {
      // Members of plan.groupId: each resolves once it has its partitions, the last one after the
      // group has settled with all of them.
      const options = nativeConsumerOptions(plan);
      const makers = Array.from({ length: plan.count }, () => () => NativeConsumer.start(options));
      return new NativeSet(makers).createNow();
    },
  };
}
