// Runs one scenario from start to finish: target, topics, clients, load, samples, summary.
// It knows nothing of the history; recorded-run.ts stores what it emits.
import { EventEmitter } from 'node:events';
import {
  type Environment,
  parseDurationMs,
  type RunSummary,
  type Sample,
  type Scenario,
} from '@kbench/schema';
import type { Kafka } from 'kafkajs';
import { captureEnvironment } from './environment.js';
import { createKafka, type Log } from './kafkajs/client.js';
import { LoadConsumer } from './kafkajs/consumer.js';
import { LoadProducer } from './kafkajs/producer.js';
import { LoadControl } from './load-control.js';
import { Meter } from './meter.js';
import { PayloadSource } from './payload.js';
import { assertSupported } from './supported.js';
import { openTarget, type Target } from './target.js';

export type Phase = 'starting' | 'setup' | 'warmup' | 'measuring' | 'stopping' | 'done';

export interface Progress {
  phase: Phase;
  /** Since load began (0 before). */
  elapsedMs: number;
  /** Warm-up plus measured time, or null when the run is bounded by a record count. */
  totalMs: number | null;
  producedRecords: number;
  consumedRecords: number;
  targetRecords: number | null;
}

export interface RunOutcome {
  status: 'completed' | 'stopped' | 'failed';
  environment: Environment;
  summary: RunSummary | null;
  samples: Sample[];
  error: string | null;
}

export interface RunOptions {
  /** A short id used in topic and group names. */
  runId: string;
  /** Where a bundled broker keeps its (temporary) data; the OS temp dir by default. */
  workDir?: string;
}

const SAMPLE_MS = 1000;
const JOIN_TIMEOUT_MS = 30_000;
const DRAIN_TIMEOUT_MS = 30_000;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Events: 'sample' (Sample) once a second, 'progress' (Progress), 'log' ({ level, message }).
 * `execute()` never rejects: a failure is an outcome with status 'failed'.
 */
export class ScenarioRun extends EventEmitter {
  private phase: Phase = 'starting';
  private loadStartedAt = 0;
  private stopRequested = false;
  private control: LoadControl | null = null;
  private meter: Meter;
  private readonly samples: Sample[] = [];
  private readonly warmupMs: number;
  private readonly durationMs: number | null;
  private lastError: string | null = null;
  environment: Environment;

  constructor(
    readonly scenario: Scenario,
    private readonly options: RunOptions,
  ) {
    super();
    assertSupported(scenario);
    this.warmupMs = parseDurationMs(scenario.warmup) ?? 0;
    this.durationMs = scenario.duration === undefined ? null : (parseDurationMs(scenario.duration) ?? null);
    this.meter = new Meter(scenario.consumers.count > 0 ? scenario.consumers.groups : 0);
    this.environment = captureEnvironment(scenario, {
      kind: scenario.target === 'bundled' ? 'bundled' : 'external',
      bootstrap: '',
    });
  }

  /** Ends the load early; the run finishes as 'stopped' with what it measured so far. */
  stop(): void {
    this.stopRequested = true;
    this.control?.stop();
    this.emit('wake');
  }

  progress(): Progress {
    return {
      phase: this.phase,
      elapsedMs: this.loadStartedAt ? Math.round(performance.now() - this.loadStartedAt) : 0,
      totalMs: this.durationMs,
      producedRecords: this.meter.producedTotal,
      consumedRecords: this.meter.consumedTotal,
      targetRecords: this.scenario.records ?? null,
    };
  }

  private setPhase(phase: Phase): void {
    this.phase = phase;
    this.emit('progress', this.progress());
  }

  private log: Log = (level, text) => {
    this.emit('log', { level, message: text });
  };

  private onClientError = (err: unknown): void => {
    this.lastError = message(err);
  };

  async execute(): Promise<RunOutcome> {
    let target: Target | null = null;
    const producers: LoadProducer[] = [];
    const consumers: LoadConsumer[] = [];
    let kafka: Kafka | null = null;
    const topics = Array.from(
      { length: this.scenario.topics.count },
      (_, i) => `${this.scenario.topics.prefix}-${this.options.runId}-${i}`,
    );
    try {
      target = await openTarget(this.scenario, this.options.workDir);
      this.environment = captureEnvironment(this.scenario, {
        kind: target.kind,
        bootstrap: target.bootstrap.join(','),
      });
      if (this.stopRequested) return this.finish('stopped', null);
      this.setPhase('setup');
      kafka = createKafka(`kbench-${this.options.runId}`, target.bootstrap, this.log);
      await this.createTopics(kafka, topics);

      const s = this.scenario;
      for (let g = 0; g < (s.consumers.count > 0 ? s.consumers.groups : 0); g++) {
        for (let c = 0; c < s.consumers.count; c++) {
          consumers.push(
            new LoadConsumer({
              kafka,
              groupId: `${s.topics.prefix}-${this.options.runId}-g${g}`,
              topics,
              // Our topics are new and empty, so reading from the beginning is "latest" without the race
              // of resolving the latest offset after load has begun.
              fromBeginning: true,
              meter: this.meter,
              onError: this.onClientError,
            }),
          );
        }
      }
      for (const consumer of consumers) await consumer.start();
      await Promise.all(consumers.map((consumer) => consumer.waitForJoin(JOIN_TIMEOUT_MS)));

      const control = new LoadControl(
        this.durationMs === null ? null : performance.now() + this.durationMs,
        s.records ?? null,
        () => performance.now(),
      );
      this.control = control;
      const payload = new PayloadSource(s.producers);
      const ratePerSec = typeof s.producers.rate === 'number' ? s.producers.rate / s.producers.count : null;
      for (let p = 0; p < s.producers.count; p++) {
        producers.push(
          new LoadProducer({
            kafka,
            topics,
            config: s.producers,
            ratePerSec,
            control,
            meter: this.meter,
            payload,
            onError: this.onClientError,
          }),
        );
      }
      await Promise.all(producers.map((producer) => producer.connect()));
      if (this.stopRequested) return this.finish('stopped', null);

      await this.load(control, producers);
      return this.finish(this.stopRequested ? 'stopped' : 'completed', null);
    } catch (err) {
      return this.finish('failed', message(err));
    } finally {
      this.setPhase('stopping');
      this.control?.stop();
      await Promise.allSettled([...producers, ...consumers].map((client) => client.disconnect()));
      await target?.close().catch((err: unknown) => this.log('warn', `closing the target: ${message(err)}`));
      this.setPhase('done');
    }
  }

  private async createTopics(kafka: Kafka, topics: string[]): Promise<void> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { partitions, replicationFactor, minInsyncReplicas, config } = this.scenario.topics;
      const configEntries = Object.entries({
        'min.insync.replicas': String(minInsyncReplicas),
        ...config,
      }).map(([name, value]) => ({ name, value }));
      await admin.createTopics({
        waitForLeaders: true,
        topics: topics.map((topic) => ({
          topic,
          numPartitions: partitions,
          replicationFactor,
          configEntries,
        })),
      });
    } finally {
      await admin.disconnect();
    }
  }

  /** Drives producers and cuts a sample every second until the control says stop. */
  private async load(control: LoadControl, producers: LoadProducer[]): Promise<void> {
    this.loadStartedAt = performance.now();
    this.setPhase(this.warmupMs > 0 ? 'warmup' : 'measuring');
    let producing = true;
    const produced = Promise.all(producers.map((producer) => producer.run())).finally(() => {
      producing = false;
      this.emit('wake');
    });
    let lastCut = this.loadStartedAt;
    let tick = 0;
    let endedOnTick = false;
    // Without producers (consumers only) the run is bounded by time alone.
    const running = () => (producers.length > 0 ? producing : !control.stopped);
    while (running() && !this.stopRequested) {
      tick += 1;
      const due = this.loadStartedAt + tick * SAMPLE_MS;
      await this.sleepUntil(due, running);
      if (!running() || this.stopRequested) break; // producers finished or a stop was asked for
      const now = performance.now();
      this.cut(now, lastCut);
      lastCut = now;
      if (this.durationMs !== null && now - this.loadStartedAt >= this.durationMs) {
        endedOnTick = true;
        break;
      }
    }
    control.stop();
    const stoppedAt = performance.now();
    await Promise.race([produced, new Promise((resolve) => setTimeout(resolve, DRAIN_TIMEOUT_MS))]);
    // The last, partial interval: acks that arrive while draining belong to records sent in it.
    if (!endedOnTick && stoppedAt > lastCut) this.cut(stoppedAt, lastCut);
  }

  private cut(now: number, lastCut: number): void {
    const t = Math.round((now - this.loadStartedAt) / 100) / 10;
    // An interval belongs to warm-up when most of it lies there (timers fire a little late).
    const warmup = (lastCut + now) / 2 - this.loadStartedAt < this.warmupMs;
    const sample = this.meter.cut(t, now - lastCut, warmup);
    this.samples.push(sample);
    if (!warmup && this.phase === 'warmup') this.setPhase('measuring');
    this.emit('sample', sample);
    this.emit('progress', this.progress());
  }

  /** Sleeps until `due` (timers may fire early, so it checks the clock) or until the run should end. */
  private async sleepUntil(due: number, running: () => boolean): Promise<void> {
    while (running() && !this.stopRequested && performance.now() < due) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.off('wake', done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(1, due - performance.now()));
        this.on('wake', done);
      });
    }
  }

  private finish(status: RunOutcome['status'], error: string | null): RunOutcome {
    const summary = this.samples.some((s) => !s.warmup) ? this.meter.summary() : null;
    if (
      status === 'completed' &&
      summary &&
      summary.produced.records === 0 &&
      this.scenario.producers.count > 0
    ) {
      return {
        status: 'failed',
        environment: this.environment,
        summary,
        samples: this.samples,
        error: `no record was acknowledged${this.lastError ? `; last client error: ${this.lastError}` : ''}`,
      };
    }
    return { status, environment: this.environment, summary, samples: this.samples, error };
  }
}
