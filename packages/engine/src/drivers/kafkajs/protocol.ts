// Messages between the kafkajs driver and its worker threads.
import type { ClientPropertyValue, Scenario } from '@kbench/schema';
import type { ClientInterval } from '../../interval.js';
import type { ConnectionSecurity } from '../../security.js';

export type WorkerPlan =
  | {
      role: 'producers';
      bootstrap: string[];
      security?: ConnectionSecurity;
      topics: string[];
      clientId: string;
      count: number;
      config: Scenario['producers'];
      ratePerSec: number | null;
      /** Seeds this worker's message-size draws, so a run draws the same sizes each time. */
      seed: number;
      /** Records for this worker's producers together, or null when bounded by time. */
      records: number | null;
      durationMs: number | null;
      /** Values carry no send time (a preloaded backlog): consumers measure no end-to-end latency for them. */
      unstamped: boolean;
    }
  | {
      role: 'consumers';
      bootstrap: string[];
      security?: ConnectionSecurity;
      topics: string[];
      clientId: string;
      groupId: string;
      count: number;
      fromBeginning: boolean;
      /** The scenario's consumer properties (producers carry theirs in config). */
      properties: Record<string, ClientPropertyValue>;
    };

export type ToWorker = { type: 'start' } | { type: 'take'; id: number } | { type: 'stop' };

export type FromWorker =
  /** Ready, with the Kafka properties its clients run with. */
  | { type: 'ready'; properties: Record<string, string> }
  | { type: 'failed'; error: string }
  | { type: 'interval'; id: number; interval: ClientInterval }
  | { type: 'finished' }
  | { type: 'client-error'; error: string }
  | { type: 'log'; level: 'error' | 'warn' | 'info'; message: string }
  | { type: 'stopped' };
