// The one interface every load driver implements (the OpenMessaging Benchmark's shape: what load,
// which system and how it is driven stay apart). A driver runs a set of clients of one role,
// wherever they live (worker threads, Rust), and reports what they did when asked.
import type { Scenario } from '@kbench/schema';
import type { ClientInterval } from '../interval.js';
import type { ConnectionSecurity } from '../security.js';
import type { Acknowledged } from '../verification.js';

export interface ProducersPlan {
  bootstrap: string[];
  /** TLS and SASL settings (holds secrets; kafkajs only). */
  security?: ConnectionSecurity;
  topics: string[];
  clientId: string;
  config: Scenario['producers'];
  /** Records per second for each producer, or null for a closed loop. */
  ratePerSec: number | null;
  /** Records for each producer to send in all, or null when the run is bounded by time. */
  recordsEach: number[] | null;
  durationMs: number | null;
  /** Mark each record and keep what was acknowledged, for the record check (native driver only). */
  verify?: boolean;
  /**
   * Values carry no send time (a preloaded backlog, not part of the measured load): consumers
   * measure no end-to-end latency for them, rather than their age.
   */
  unstamped?: boolean;
}

export interface ConsumersPlan {
  bootstrap: string[];
  security?: ConnectionSecurity;
  topics: string[];
  clientId: string;
  groupId: string;
  count: number;
  fromBeginning: boolean;
  /** Kafka consumer properties (`consumers.config`), checked against the driver by the schema. */
  properties: Scenario['consumers']['config'];
}

/** A set of clients of one role. */
export interface LoadClients {
  /** Begins sending (producers); consumers read from the moment they are ready. */
  start(): void;
  /** What the set did since the last take, merged. */
  take(): Promise<ClientInterval>;
  /** Resolves when every producer has sent its share (never, for consumers, until stopped). */
  readonly finished: Promise<void>;
  /** Stops and disconnects every client; resolves when they are gone. */
  stop(): Promise<void>;
  lastError(): string | null;
  /** The Kafka properties the clients run with, by name, as the driver applied them (defaults included). */
  properties(): Record<string, string>;
  /**
   * With ProducersPlan.verify, once stopped: the sequences each producer had acknowledged, per
   * partition, or why they are not known (a load agent lost, say).
   */
  acknowledged?(): Acknowledged;
}

export interface LoadDriver {
  readonly name: 'kafkajs' | 'native';
  /** Resolves once every producer is connected. */
  startProducers(plan: ProducersPlan): Promise<LoadClients>;
  /** Resolves once every consumer has joined its group or been assigned its partitions. */
  startConsumers(plan: ConsumersPlan): Promise<LoadClients>;
}

/** Splits `total` into `parts` near-equal whole shares. */
export function shares(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}
