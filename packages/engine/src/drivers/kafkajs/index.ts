// The kafkajs driver: producers and consumers spread over worker threads, one per core at most.
import { existsSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type ClientInterval, emptyInterval, tallyError } from '../../interval.js';
import {
  type ConsumersPlan,
  type LoadClients,
  type LoadDriver,
  type ProducersPlan,
  shares,
} from '../driver.js';
import type { Log } from './client.js';
import type { FromWorker, ToWorker, WorkerPlan } from './protocol.js';

const STOP_TIMEOUT_MS = 15_000;

/** The compiled worker; tests run the sources, so fall back to the package's build output. */
function workerScript(): string {
  const candidates = [
    new URL('./worker.js', import.meta.url),
    new URL('../../../dist/drivers/kafkajs/worker.js', import.meta.url),
  ];
  for (const url of candidates) {
    const path = fileURLToPath(url);
    if (existsSync(path)) return path;
  }
  throw new Error('the kafkajs worker script is missing: build @kbench/engine first (npm run build)');
}

export function mergeIntervals(parts: ClientInterval[]): ClientInterval {
  const out = emptyInterval();
  for (const part of parts) {
    out.records += part.records;
    out.valueBytes += part.valueBytes;
    if (part.wireBytes !== undefined) out.wireBytes = (out.wireBytes ?? 0) + part.wireBytes;
    out.errors += part.errors;
    if (part.errorMessages) {
      const tally = out.errorMessages ?? [];
      for (const e of part.errorMessages) tallyError(tally, e.message, e.count);
      out.errorMessages = tally;
    }
    if (part.retries !== undefined) out.retries = (out.retries ?? 0) + part.retries;
    out.latency.buckets.push(...part.latency.buckets);
    out.latency.counts.push(...part.latency.counts);
    out.latency.count += part.latency.count;
    out.latency.sum += part.latency.sum;
    out.latency.max = Math.max(out.latency.max, part.latency.max);
    if (part.busy !== null) out.busy = Math.max(out.busy ?? 0, part.busy);
  }
  return out;
}

class WorkerSet implements LoadClients {
  readonly finished: Promise<void>;
  private error: string | null = null;
  private nextId = 0;
  private readonly pending = new Map<number, (interval: ClientInterval) => void>();
  private stopping: Promise<void> | null = null;
  private applied: Record<string, string> = {};

  private constructor(
    private readonly workers: Worker[],
    finished: Promise<void>[],
  ) {
    this.finished = Promise.all(finished).then(() => undefined);
  }

  /** Spawns one worker per plan and resolves once all are ready (or rejects with the first failure). */
  static async spawn(plans: WorkerPlan[], log: Log): Promise<WorkerSet> {
    const script = workerScript();
    const workers = plans.map((plan) => new Worker(script, { workerData: plan }));
    const finished = workers.map(
      (w) =>
        new Promise<void>((resolve) =>
          w.on('message', (m: FromWorker) => m.type === 'finished' && resolve()),
        ),
    );
    const set = new WorkerSet(workers, finished);
    for (const worker of workers) {
      worker.on('message', (m: FromWorker) => {
        if (m.type === 'interval') {
          set.pending.get(m.id)?.(m.interval);
          set.pending.delete(m.id);
        } else if (m.type === 'client-error') set.error = m.error;
        else if (m.type === 'log') log(m.level, m.message);
      });
      worker.on('error', (err) => {
        set.error = err.message;
      });
    }
    try {
      await Promise.all(
        workers.map(
          (w) =>
            new Promise<void>((resolve, reject) => {
              w.on('message', (m: FromWorker) => {
                if (m.type === 'ready') {
                  set.applied = m.properties;
                  resolve();
                } else if (m.type === 'failed') reject(new Error(m.error));
              });
              w.on('exit', (code) =>
                reject(new Error(`a kafkajs worker exited during setup (code ${code})`)),
              );
            }),
        ),
      );
    } catch (err) {
      await Promise.allSettled(workers.map((w) => w.terminate()));
      throw err;
    }
    return set;
  }

  private send(message: ToWorker): void {
    for (const worker of this.workers) worker.postMessage(message);
  }

  start(): void {
    this.send({ type: 'start' });
  }

  async take(): Promise<ClientInterval> {
    const parts = await Promise.all(
      this.workers.map(
        (worker) =>
          new Promise<ClientInterval>((resolve) => {
            const id = this.nextId++;
            this.pending.set(id, resolve);
            worker.postMessage({ type: 'take', id } satisfies ToWorker);
          }),
      ),
    );
    return mergeIntervals(parts);
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await Promise.all(
        this.workers.map(
          (worker) =>
            new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, STOP_TIMEOUT_MS);
              worker.on('message', (m: FromWorker) => {
                if (m.type === 'stopped') {
                  clearTimeout(timer);
                  resolve();
                }
              });
              worker.postMessage({ type: 'stop' } satisfies ToWorker);
            }),
        ),
      );
      await Promise.allSettled(this.workers.map((w) => w.terminate()));
      for (const resolve of this.pending.values()) resolve(emptyInterval());
      this.pending.clear();
    })();
    return this.stopping;
  }

  lastError(): string | null {
    return this.error;
  }

  properties(): Record<string, string> {
    return this.applied;
  }
}

/** Spreads `count` clients over at most one worker per core; returns the clients per worker. */
function spread(count: number): number[] {
  const workers = Math.max(1, Math.min(count, os.availableParallelism()));
  return shares(count, workers);
}

export function kafkajsDriver(log: Log): LoadDriver {
  return {
    name: 'kafkajs',
    startProducers(plan: ProducersPlan) {
      const perWorker = spread(plan.config.count);
      let next = 0;
      const plans: WorkerPlan[] = perWorker.map((count, index) => {
        const mine = plan.recordsEach?.slice(next, next + count) ?? null;
        next += count;
        return {
          role: 'producers',
          bootstrap: plan.bootstrap,
          ...(plan.security ? { security: plan.security } : {}),
          topics: plan.topics,
          clientId: plan.clientId,
          count,
          config: plan.config,
          ratePerSec: plan.ratePerSec,
          seed: index + 1,
          records: mine === null ? null : mine.reduce((a, b) => a + b, 0),
          durationMs: plan.durationMs,
          unstamped: plan.unstamped === true,
        };
      });
      return WorkerSet.spawn(plans, log);
    },
    startConsumers(plan: ConsumersPlan) {
      const plans: WorkerPlan[] = spread(plan.count).map((count) => ({
        role: 'consumers',
        bootstrap: plan.bootstrap,
        ...(plan.security ? { security: plan.security } : {}),
        topics: plan.topics,
        clientId: plan.clientId,
        groupId: plan.groupId,
        count,
        fromBeginning: plan.fromBeginning,
        properties: plan.properties,
      }));
      return WorkerSet.spawn(plans, log);
    },
  };
}
