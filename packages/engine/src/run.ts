// Runs one scenario from start to finish: target, topics, clients, load, samples, summary.
// It knows nothing of the history; recorded-run.ts stores what it emits.
import { EventEmitter } from 'node:events';
import {
  type Environment,
  type FaultEvent,
  type FindMaxResult,
  isBootstrapList,
  parseDurationMs,
  type RunSummary,
  type Sample,
  type Scenario,
  type TargetProfile,
} from '@kbench/schema';
import { type Connection, createTopics, deleteRunResources, describeTarget } from './admin.js';
import { assertBacklogFits, backlogRecords } from './backlog-space.js';
import { BrokerStatsMeter } from './broker-stats.js';
import { type LoadClients, type LoadDriver, shares } from './drivers/driver.js';
import type { Log } from './drivers/kafkajs/client.js';
import { kafkajsDriver } from './drivers/kafkajs/index.js';
import { nativeDriver } from './drivers/native.js';
import { captureEnvironment } from './environment.js';
import { FaultTimeline } from './faults.js';
import { findMaxRate } from './find-max.js';
import { Meter } from './meter.js';
import { ProfileStore } from './profiles.js';
import { connectionHint } from './security.js';
import { assertSupported, rateCeiling } from './supported.js';
import { openTarget, type Target, targetProfile } from './target.js';

export type Phase =
  | 'starting'
  | 'setup'
  | 'preload'
  | 'search'
  | 'warmup'
  | 'measuring'
  | 'stopping'
  | 'done';

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
  /** The faults executed, in time order (empty without a fault timeline). */
  faults: FaultEvent[];
}

export interface RunOptions {
  /** A short id used in topic and group names. */
  runId: string;
  /** Where a bundled broker keeps its (temporary) data; the OS temp dir by default. */
  workDir?: string;
  /** Where `target: <name>` profiles are found; default $KBENCH_HOME/profiles. */
  profiles?: ProfileStore;
  /** A rate ceiling in records/s (the CLI's --max-rate), on top of the profile's maxRate. */
  maxRate?: number;
}

interface Clients {
  producers: LoadClients | null;
  consumers: LoadClients[];
}

const SAMPLE_MS = 1000;
const DRAIN_TIMEOUT_MS = 30_000;

/** The Kafka properties the run's clients ran with, as their driver applied them. */
function appliedProperties(clients: Clients): NonNullable<Environment['clientProperties']> {
  const consumers = clients.consumers[0]?.properties();
  return {
    ...(clients.producers ? { producers: clients.producers.properties() } : {}),
    ...(consumers ? { consumers } : {}),
  };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Events: 'sample' (Sample) once a second, 'progress' (Progress), 'log' ({ level, message }),
 * 'fault' (FaultEvent) as each fault of the timeline is executed.
 * `execute()` never rejects: a failure is an outcome with status 'failed'.
 */
export class ScenarioRun extends EventEmitter {
  private phase: Phase = 'starting';
  private loadStartedAt = 0;
  private stopRequested = false;
  private readonly meter: Meter;
  private readonly samples: Sample[] = [];
  private readonly warmupMs: number;
  private readonly durationMs: number | null;
  private lastError: string | null = null;
  private lastCpuMicros = 0;
  private findMax: FindMaxResult | null = null;
  /** Records preloaded so far and in all, while the backlog is being written. */
  private preloadProgress: { done: number; target: number } | null = null;
  /** The rate ceiling in force (records/s), if any. */
  private readonly ceiling: number | undefined;
  private readonly profiles: ProfileStore;
  /** The target profile the scenario names, if any. */
  private readonly profile: TargetProfile | undefined;
  /** The scenario's fault timeline, once the target is open (bundled only). */
  private faults: FaultTimeline | null = null;
  /** Per-second broker figures (bundled only). */
  private brokerStats: BrokerStatsMeter | null = null;
  environment: Environment;

  constructor(
    readonly scenario: Scenario,
    private readonly options: RunOptions,
  ) {
    super();
    this.profiles = options.profiles ?? new ProfileStore();
    assertSupported(scenario, {
      profiles: this.profiles,
      ...(options.maxRate ? { maxRate: options.maxRate } : {}),
    });
    this.profile = targetProfile(scenario.target, this.profiles);
    this.ceiling = rateCeiling(this.profile, options.maxRate);
    this.warmupMs = parseDurationMs(scenario.warmup) ?? 0;
    this.durationMs = scenario.duration === undefined ? null : (parseDurationMs(scenario.duration) ?? null);
    this.meter = new Meter(scenario.consumers.count > 0 ? scenario.consumers.groups : 0);
    this.environment = this.describe(null);
  }

  /** Ends the load early; the run finishes as 'stopped' with what it measured so far. */
  stop(): void {
    this.stopRequested = true;
    this.emit('wake');
  }

  progress(): Progress {
    if (this.preloadProgress) {
      return {
        phase: this.phase,
        elapsedMs: 0,
        totalMs: null,
        producedRecords: this.preloadProgress.done,
        consumedRecords: 0,
        targetRecords: this.preloadProgress.target,
      };
    }
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

  private driver(): LoadDriver {
    return this.scenario.driver === 'native' ? nativeDriver() : kafkajsDriver(this.log);
  }

  /** The environment for the target as far as it is known (null: not opened yet). */
  private describe(target: Target | null): Environment {
    const s = this.scenario;
    const kind = target?.kind ?? (s.target === 'bundled' || s.target === 'kafka' ? s.target : 'external');
    const known = this.profile?.bootstrap ?? (isBootstrapList(s.target) ? s.target : '');
    return captureEnvironment(s, {
      kind,
      bootstrap: target ? target.bootstrap.join(',') : known,
      ...(this.profile ? { profile: this.profile } : {}),
      ...(this.ceiling !== undefined ? { rateCeiling: this.ceiling } : {}),
    });
  }

  async execute(): Promise<RunOutcome> {
    let target: Target | null = null;
    const clients: Clients = { producers: null, consumers: [] };
    const s = this.scenario;
    const name = `${s.topics.prefix}-${this.options.runId}`;
    const topics = Array.from({ length: s.topics.count }, (_, i) => `${name}-${i}`);
    /** Topics this run created (the only ones it may delete), filled as creation goes. */
    const created: string[] = [];
    try {
      target = await openTarget(s, {
        profiles: this.profiles,
        ...(this.options.workDir ? { workDir: this.options.workDir } : {}),
      });
      this.environment = this.describe(target);
      // Before anything is written: a backlog that would fill this machine's disk is refused.
      if (target.dataDir) assertBacklogFits(s, target.dataDir);
      this.meter.brokerInProcess = target.kind === 'bundled';
      if (target.brokerStats) this.brokerStats = new BrokerStatsMeter(() => target!.brokerStats!());
      if (s.faults.length > 0 && target.faults) {
        this.faults = new FaultTimeline(s.faults, target.faults, topics, s, this.log, (event) =>
          this.emit('fault', event),
        );
      }
      if (this.stopRequested) return this.finish('stopped', null);
      this.setPhase('setup');
      const connection: Connection = {
        bootstrap: target.bootstrap,
        ...(target.security ? { security: target.security } : {}),
      };
      // Idle topics only sit on the broker (the 2016 topic-count benchmark); load never touches them.
      const idle = Array.from({ length: s.topics.idle }, (_, i) => `${name}-idle-${i}`);
      const { reused } = await createTopics(
        connection,
        `${name}-admin`,
        [...topics, ...idle],
        s.topics,
        this.log,
        created,
      );
      if (target.kind !== 'bundled') {
        try {
          const cluster = await describeTarget(connection, `${name}-admin`, topics[0], this.log);
          this.environment.cluster = cluster;
          if (target.kind === 'external') this.environment.versions.broker = cluster.versionHint;
        } catch (err) {
          this.log('warn', `describing the target: ${message(err)}`);
        }
      }
      const driver = this.driver();
      if (s.consumers.backlog > 0) await this.preload(driver, connection, topics, `${name}-preload`);
      // Consumers start last, right before load, because they begin reading (a backlog, say) as soon as
      // they join, and what they read before load starts is not measured. find-max needs them first.
      const startConsumers = async () => {
        const groups = s.consumers.count > 0 ? s.consumers.groups : 0;
        for (let g = clients.consumers.length; g < groups && !this.stopRequested; g++) {
          clients.consumers.push(
            await driver.startConsumers({
              ...connection,
              topics,
              clientId: `${name}-c`,
              groupId: `${name}-g${g}`,
              count: s.consumers.count,
              properties: s.consumers.config,
              // Without a backlog our topics are new and empty, so reading from the beginning is "latest"
              // without the race of resolving the latest offset after load has begun (not so for a
              // reused topic, which may hold records already).
              fromBeginning:
                s.consumers.startAt !== 'latest' || (s.consumers.backlog === 0 && reused.length === 0),
            }),
          );
        }
      };
      let rate = typeof s.producers.rate === 'number' ? s.producers.rate : null;
      if (s.producers.rate === 'max' && this.ceiling !== undefined) {
        rate = this.ceiling;
        this.log('info', `rate max capped at the ceiling: a fixed ${this.ceiling} records/s (open loop)`);
      }
      if (s.producers.rate === 'find-max' && !this.stopRequested) {
        await startConsumers();
        this.findMax = await this.search(driver, connection, topics, `${name}-p`, clients.consumers);
        if (this.findMax.rate === null) {
          const last = this.findMax.trials.at(-1);
          return this.finish(
            'failed',
            `find-max: no rate met the bounds${last ? ` (last trial: ${last.reason})` : ''}`,
          );
        }
        rate = this.findMax.rate;
      }
      if (s.producers.count > 0 && !this.stopRequested) {
        clients.producers = await driver.startProducers({
          ...connection,
          topics,
          clientId: `${name}-p`,
          config: s.producers,
          ratePerSec: rate === null ? null : rate / s.producers.count,
          recordsEach: s.records === undefined ? null : shares(s.records, s.producers.count),
          durationMs: this.durationMs,
        });
      }
      await startConsumers();
      if (this.stopRequested) return this.finish('stopped', null);
      await this.load(clients);
      this.environment.clientProperties = appliedProperties(clients);
      this.lastError =
        clients.producers?.lastError() ?? clients.consumers.map((c) => c.lastError()).find((e) => e) ?? null;
      return this.finish(this.stopRequested ? 'stopped' : 'completed', null);
    } catch (err) {
      return this.finish('failed', message(err));
    } finally {
      await this.faults?.stop();
      this.setPhase('stopping');
      await Promise.allSettled([clients.producers, ...clients.consumers].map((c) => c?.stop()));
      if (target) await this.cleanUp(target, name, created, clients.consumers.length);
      await target?.close().catch((err: unknown) => this.log('warn', `closing the target: ${message(err)}`));
      this.setPhase('done');
    }
  }

  /**
   * Deletes the topics and consumer groups this run created, unless topics.keep. A bundled broker is
   * thrown away whole, so only clusters that outlive the run (external, kafka) are cleaned.
   */
  private async cleanUp(target: Target, name: string, created: string[], groups: number): Promise<void> {
    if (target.kind === 'bundled' || created.length === 0) return;
    if (this.scenario.topics.keep) {
      if (target.kind === 'external')
        this.log('info', `kept the run's ${created.length} topic(s): ${name}-*`);
      return;
    }
    await deleteRunResources(
      { bootstrap: target.bootstrap, ...(target.security ? { security: target.security } : {}) },
      `${name}-admin`,
      { topics: created, groups: Array.from({ length: groups }, (_, g) => `${name}-g${g}`) },
      this.log,
    );
  }

  /**
   * Fills the topics with `consumers.backlog` bytes before the measured phase, as fast as the
   * producers go, so consumers that start at the earliest offset have a backlog to drain.
   */
  private async preload(
    driver: LoadDriver,
    connection: Connection,
    topics: string[],
    clientId: string,
  ): Promise<void> {
    const s = this.scenario;
    const records = backlogRecords(s);
    const producers = Math.max(1, s.producers.count);
    const loader = await driver.startProducers({
      ...connection,
      topics,
      clientId,
      config: { ...s.producers, count: producers, rate: 'max', acks: 1 },
      ratePerSec: null,
      recordsEach: shares(records, producers),
      durationMs: null,
    });
    this.preloadProgress = { done: 0, target: records };
    this.setPhase('preload');
    let finished = false;
    void loader.finished.then(() => {
      finished = true;
    });
    loader.start();
    const count = async (progress: { done: number; target: number }) => {
      const interval = await loader.take();
      progress.done += interval.records;
      // Consumers that start at the latest offset never read the preloaded records.
      if (s.consumers.startAt !== 'latest') this.meter.preloaded(interval.records);
      if (interval.errors > 0) this.lastError = loader.lastError();
      this.emit('progress', this.progress());
    };
    try {
      while (!finished && !this.stopRequested) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        await count(this.preloadProgress);
      }
      // What was acknowledged between the last count and the end.
      await count(this.preloadProgress);
    } finally {
      await loader.stop();
      this.preloadProgress = null;
    }
  }

  /** Runs find-max trials on the run's topics, with its consumers reading along. */
  private async search(
    driver: LoadDriver,
    connection: Connection,
    topics: string[],
    clientId: string,
    consumers: LoadClients[],
  ): Promise<FindMaxResult> {
    const s = this.scenario;
    const trialMs = parseDurationMs(s.findMax.trial) ?? 10_000;
    this.setPhase('search');
    const runTrial = async (rate: number | null) => {
      const producers = await driver.startProducers({
        ...connection,
        topics,
        clientId,
        config: s.producers,
        ratePerSec: rate === null ? null : rate / s.producers.count,
        recordsEach: null,
        durationMs: trialMs,
      });
      const meter = new Meter(consumers.length);
      try {
        await Promise.all(consumers.map((c) => c.take()));
        const started = performance.now();
        producers.start();
        let last = started;
        let backlogAfterRampUp = 0;
        for (let tick = 1; last - started < trialMs && !this.stopRequested; tick++) {
          await this.sleepUntil(started + tick * SAMPLE_MS, () => true);
          const [produced, ...consumed] = await Promise.all([
            producers.take(),
            ...consumers.map((c) => c.take()),
          ]);
          meter.addProduced(produced);
          for (const interval of consumed) meter.addConsumed(interval);
          const now = performance.now();
          // The first second of a trial is ramp-up: left out of its verdict.
          meter.cut(tick, now - last, tick === 1);
          if (tick === 1) backlogAfterRampUp = meter.backlog();
          last = now;
        }
        const summary = meter.summary();
        return {
          achievedPerSec: summary.produced.recordsPerSec,
          publishP99Ms: summary.publishLatencyMs?.p99 ?? null,
          backlogGrowth: consumers.length > 0 ? Math.max(0, meter.backlog() - backlogAfterRampUp) : 0,
          errors: summary.produced.errors,
        };
      } finally {
        await producers.stop();
      }
    };
    return findMaxRate(
      runTrial,
      s.findMax,
      (trial) => {
        const rate = trial.rate === null ? 'closed-loop probe' : `${Math.round(trial.rate)} rec/s`;
        this.log('info', `find-max: ${rate} -> ${trial.pass ? 'pass' : `fail (${trial.reason})`}`);
        this.emit('trial', trial);
      },
      () => this.stopRequested,
      this.ceiling,
    );
  }

  /** Starts the producers and cuts a sample every second until time is up, records are sent, or a stop. */
  private async load(clients: Clients): Promise<void> {
    const { producers } = clients;
    await this.brokerStats?.reset().catch((err: unknown) => {
      this.log('warn', `reading broker stats: ${message(err)}`);
      this.brokerStats = null;
    });
    this.loadStartedAt = performance.now();
    const cpu = process.cpuUsage();
    this.lastCpuMicros = cpu.user + cpu.system;
    this.setPhase(this.warmupMs > 0 ? 'warmup' : 'measuring');
    let producing = producers !== null;
    // What consumers read during a find-max search is not part of the run. (After a preload they
    // start right before this moment, so what they drained in between counts in the first sample.)
    if (this.findMax) await Promise.all(clients.consumers.map((c) => c.take()));
    producers?.start();
    this.faults?.start(this.loadStartedAt);
    void producers?.finished.then(() => {
      producing = false;
      this.emit('wake');
    });
    const timeUp = () =>
      this.durationMs !== null && performance.now() - this.loadStartedAt >= this.durationMs;
    // Bounded by records: until producers finish; by time: until the duration has passed.
    const running = () => (this.durationMs === null ? producing : !timeUp());
    let lastCut = this.loadStartedAt;
    let tick = 0;
    let endedOnTick = false;
    while (running() && !this.stopRequested) {
      tick += 1;
      await this.sleepUntil(this.loadStartedAt + tick * SAMPLE_MS, running);
      if (this.stopRequested || !running()) break;
      const now = performance.now();
      await this.cut(clients, now, lastCut);
      lastCut = now;
      if (timeUp()) {
        endedOnTick = true;
        break;
      }
    }
    await this.endFaults();
    if (endedOnTick) return;
    // The last, partial interval; acks that arrive while draining belong to records sent in it.
    const stoppedAt = performance.now();
    if (producers && !this.stopRequested) {
      await Promise.race([
        producers.finished,
        new Promise((resolve) => setTimeout(resolve, DRAIN_TIMEOUT_MS)),
      ]);
    }
    if (producers && !this.stopRequested && this.durationMs === null) await this.drainConsumers(clients);
    if (stoppedAt > lastCut) await this.cut(clients, Math.max(stoppedAt, lastCut + 1), lastCut);
  }

  /**
   * A run bounded by records ends when the last record is acknowledged, but its consumers may still
   * be reading: wait (up to DRAIN_TIMEOUT_MS) until every group has read every record, so each one's
   * end-to-end latency is measured. What they read counts in the last sample, whose time span stays
   * the load's, so the produce rate is not diluted by the wait.
   */
  private async drainConsumers(clients: Clients): Promise<void> {
    if (clients.consumers.length === 0) return;
    // The last acknowledgements first, so the backlog counts every record sent.
    const produced = await clients.producers?.take();
    if (produced) this.meter.addProduced(produced);
    const deadline = performance.now() + DRAIN_TIMEOUT_MS;
    while (this.meter.backlog() > 0 && !this.stopRequested && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      for (const interval of await Promise.all(clients.consumers.map((c) => c.take())))
        this.meter.addConsumed(interval);
    }
    const behind = Math.round(this.meter.backlog());
    if (behind > 0 && !this.stopRequested)
      this.log(
        'warn',
        `consumers were still ${behind} records behind ${DRAIN_TIMEOUT_MS / 1000} s after load ended`,
      );
  }

  /** Faults not yet due when load ends are not run; those under way are waited for. */
  private async endFaults(): Promise<void> {
    await this.faults?.stop();
  }

  private async cut(clients: Clients, now: number, lastCut: number): Promise<void> {
    const [broker, produced, ...consumed] = await Promise.all([
      this.brokerStats?.cut(now - lastCut).catch((err: unknown) => {
        this.log('warn', `reading broker stats: ${message(err)}`);
        return undefined;
      }),
      clients.producers?.take(),
      ...clients.consumers.map((c) => c.take()),
    ]);
    const cpu = process.cpuUsage();
    this.meter.addCpu(cpu.user + cpu.system - this.lastCpuMicros);
    this.lastCpuMicros = cpu.user + cpu.system;
    if (produced) this.meter.addProduced(produced);
    for (const interval of consumed) if (interval) this.meter.addConsumed(interval);
    const t = Math.round((now - this.loadStartedAt) / 100) / 10;
    // An interval belongs to warm-up when most of it lies there (timers fire a little late).
    const warmup = (lastCut + now) / 2 - this.loadStartedAt < this.warmupMs;
    const sample = this.meter.cut(t, now - lastCut, warmup);
    if (broker) sample.broker = broker;
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
    const measured = this.samples.some((s) => !s.warmup) ? this.meter.summary() : null;
    const summary = measured && this.findMax ? { ...measured, findMax: this.findMax } : measured;
    const base = {
      environment: this.environment,
      summary,
      samples: this.samples,
      faults: this.faults?.events ?? [],
    };
    const last = this.lastError ? `; last client error: ${this.lastError}` : '';
    if (status === 'completed' && this.scenario.producers.count > 0 && this.meter.producedTotal === 0) {
      return { ...base, status: 'failed', error: withHint(`no record was acknowledged${last}`) };
    }
    // A run that measured nothing has no figures to report: it failed, whatever it sent.
    if (status === 'completed' && summary === null) {
      return { ...base, status: 'failed', error: withHint(`${this.nothingMeasured()}${last}`) };
    }
    return { ...base, status, error: status === 'failed' && error !== null ? withHint(error) : error };
  }

  /** Why a run that ran its course has no measured sample. */
  private nothingMeasured(): string {
    const s = this.scenario;
    if (this.samples.length === 0) return 'no measured sample: the run ended before its first sample';
    if (s.records !== undefined)
      return `no measured sample: all ${s.records} records were sent within the ${s.warmup} warm-up (raise records or shorten warmup)`;
    return `no measured sample: every sample fell in the ${s.warmup} warm-up (the last at ${this.samples.at(-1)?.t} s)`;
  }
}

/** A failure's message with what to do about it, when the message says which of the usual mistakes it is. */
function withHint(error: string): string {
  const hint = connectionHint(error);
  return hint ? `${error} (hint: ${hint})` : error;
}
