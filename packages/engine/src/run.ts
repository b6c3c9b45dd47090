// Runs one scenario from start to finish: target, topics, clients, load, samples, summary.
// It knows nothing of the history; recorded-run.ts stores what it emits.
import { EventEmitter } from 'node:events';
import os from 'node:os';
import {
  type AgentEndpoint,
  type Environment,
  type FaultEvent,
  type FindMaxResult,
  isBootstrapList,
  type Phase,
  type Progress,
  parseDurationMs,
  type RunSummary,
  type Sample,
  type Scenario,
  ScenarioError,
  type TargetProfile,
  type Verification,
} from '@kbench/schema';
import {
  type Connection,
  createTopics,
  deleteRunResources,
  describeTarget,
  waitUntilServed,
} from './admin.js';
import { assertBacklogFits, backlogRecords, diskShortage } from './backlog-space.js';
import { BrokerStatsMeter } from './broker-stats.js';
import { ClusterMetrics } from './cluster-metrics.js';
import { AgentFleet, type AgentsSetup, readTokenFile } from './drivers/agents.js';
import { type LoadClients, type LoadDriver, shares } from './drivers/driver.js';
import type { Log } from './drivers/kafkajs/client.js';
import { kafkajsDriver } from './drivers/kafkajs/index.js';
import { nativeDriver, nativeSecurity } from './drivers/native.js';
import { captureEnvironment } from './environment.js';
import { FaultTimeline } from './faults.js';
import { findMaxRate } from './find-max.js';
import { diskOf, type HostReading, hostUse, ProcessTreeCpu, tryReadHost } from './host.js';
import { Meter } from './meter.js';
import { ownProcesses } from './own-processes.js';
import { ProfileStore } from './profiles.js';
import { faultRecoveries } from './recovery.js';
import { FAULT_MARGIN_MS, SampleSchedule } from './sample-schedule.js';
import { connectionHint, pem } from './security.js';
import type { IntervalHistograms } from './stored-latency.js';
import { assertSupported, rateCeiling } from './supported.js';
import { openTarget, type Target, targetProfile } from './target.js';
import { notVerified, verifyRecords, whyNotVerifiable } from './verification.js';

/** A run's phases and progress events are declared in @kbench/schema, which the web app reads too. */
export type { Phase, Progress };

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
  /** Load agents the clients run on (the CLI's --agents), in place of the profile's agents. */
  agents?: AgentEndpoint[];
  /** The agents' token when the profile has none (--agent-token-file, KBENCH_AGENT_TOKEN). */
  agentToken?: string;
}

interface Clients {
  producers: LoadClients | null;
  consumers: LoadClients[];
}

/** What a run opens and creates as its steps go: cleanup undoes exactly this. */
interface Resources {
  /** The prefix of the run's topic, group and client names. */
  readonly name: string;
  /** The topics load goes to. */
  readonly topics: string[];
  target: Target | null;
  /** Topics this run created (the only ones it may delete), filled as creation goes. */
  created: string[];
  /** Topics that were there already (they may hold records). */
  reused: string[];
  clients: Clients;
  /** Consumer groups started (their members may be spread over agents). */
  groups: number;
}

function connectionTo(target: Target): Connection {
  return { bootstrap: target.bootstrap, ...(target.security ? { security: target.security } : {}) };
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
 * Events: 'sample' (Sample) once a second (or every scenario.sampleIntervalMs, finer around faults), 'histograms'
 * (IntervalHistograms: that sample's latency histograms), 'progress' (Progress), 'log' ({ level, message }),
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
  /** When samples are cut: every scenario.sampleIntervalMs (default 1000), finer around faults. */
  private readonly schedule: SampleSchedule;
  private lastT = 0;
  private readonly durationMs: number | null;
  private lastError: string | null = null;
  private lastCpuMicros = 0;
  /** The machine's counters at the last cut (null where they cannot be read), and the data's disk. */
  private lastHost: HostReading | null = null;
  private hostDisk: string | null = null;
  /** The run's own processes (ownProcesses), found as load starts; null when they cannot be told. */
  private ownCpu: ProcessTreeCpu | undefined;
  private findMax: FindMaxResult | null = null;
  /** Records preloaded so far and in all, while the backlog is being written. */
  private preloadProgress: { done: number; target: number } | null = null;
  /** The rate ceiling in force (records/s), if any. */
  private readonly ceiling: number | undefined;
  private readonly profiles: ProfileStore;
  /** The target profile the scenario names, if any. */
  private readonly profile: TargetProfile | undefined;
  /** The scenario's fault timeline, once the target is open (command faults on any target). */
  private faults: FaultTimeline | null = null;
  /** The samples' latency histograms, kept for the faults' recovery figures (runs with faults only). */
  private readonly intervals: IntervalHistograms[] = [];
  /** Each sample's retried records (null where the driver does not count them), for the same figures. */
  private readonly retries: (number | null)[] = [];
  /** Per-second broker figures (bundled only). */
  private brokerStats: BrokerStatsMeter | null = null;
  /** Where the target keeps its data on this machine (bundled, managed Apache Kafka), watched while load runs. */
  private dataDir: string | null = null;
  /** The profile's Prometheus endpoints, scraped on the sample tick (absent without any). */
  private clusterMetrics: ClusterMetrics | null = null;
  private readonly loadDriver: LoadDriver;
  /** How to reach the run's load agents, when its clients run on agents. */
  private readonly agentsSetup: AgentsSetup | null;
  private fleet: AgentFleet | null = null;
  /** The record check runs (faults or verify: true, on the native driver). */
  private readonly verifying: boolean;
  private verification: Verification | null = null;
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
    this.schedule = SampleSchedule.of(scenario);
    this.durationMs = scenario.duration === undefined ? null : (parseDurationMs(scenario.duration) ?? null);
    this.meter = new Meter(scenario.consumers.count > 0 ? scenario.consumers.groups : 0);
    this.environment = this.describe(null);
    this.loadDriver = scenario.driver === 'native' ? nativeDriver() : kafkajsDriver(this.log);
    this.agentsSetup = this.agentsFrom(options);
    // Every run with faults checks what was acknowledged, and any that asks; verify: true where the check cannot run is refused.
    const wanted = scenario.verify || scenario.faults.length > 0;
    const why = wanted ? whyNotVerifiable(scenario) : null;
    if (scenario.verify && why !== null)
      throw new ScenarioError([{ path: 'verify', message: why }], 'verify: true cannot run');
    this.verifying = wanted && why === null;
    if (wanted && why !== null) this.verification = notVerified(scenario, why);
  }

  /** The agents the run names (--agents, or the profile's), checked against the scenario; null for none. */
  private agentsFrom(options: RunOptions): AgentsSetup | null {
    const s = this.scenario;
    const endpoints = options.agents ?? this.profile?.agents;
    if (!endpoints || endpoints.length === 0) return null;
    const not = (path: string, message: string) => {
      throw new ScenarioError([{ path, message }], 'not supported with load agents');
    };
    if (s.driver !== 'native')
      not(
        'driver',
        `load agents run the native engine: set driver: native (got ${s.driver}; --set driver=native)`,
      );
    if (s.producers.rate === 'find-max')
      not('producers.rate', 'find-max does not run on agents yet: give a rate or max');
    if (s.consumers.backlog > 0)
      not('consumers.backlog', 'a preloaded backlog does not run on agents yet: set 0');
    for (const role of ['producers', 'consumers'] as const) {
      if (s[role].count > 0 && !endpoints.some((e) => e.roles.includes(role)))
        not(
          `${role}.count`,
          `no agent takes ${role} (agents: ${endpoints.map((e) => `${e.roles.length === 1 ? `${e.roles[0]}@` : ''}${e.address}`).join(', ')}): name one as ${role}@host:port or without a role`,
        );
    }
    const profile = this.profile;
    const token =
      profile?.agentToken ??
      (profile?.agentTokenFile !== undefined
        ? readTokenFile(profile.agentTokenFile, 'agentTokenFile')
        : options.agentToken);
    if (token === undefined)
      not(
        'agentToken',
        "load agents need their token: --agent-token-file FILE, the environment variable KBENCH_AGENT_TOKEN, or the profile's agentToken or agentTokenFile",
      );
    const tls = profile?.agentTls;
    return {
      endpoints,
      token: token as string,
      tls: tls !== undefined,
      ...(tls?.ca !== undefined ? { tlsCa: pem(tls.ca, 'agentTls.ca') } : {}),
      ...(tls?.insecure ? { tlsInsecure: true } : {}),
      onLoss: s.agents.onLoss,
      lossTimeoutMs: s.agents.lossTimeoutMs,
      log: this.log,
    };
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

  /**
   * The run as a sequence of steps: open the target, set up its topics, preload a backlog, search for the
   * rate (find-max), start producers, then consumers, and load. A stop is honoured in one place between
   * steps (a step under way ends at its own next wait); cleanup always runs, whatever ended the run.
   * A step fails by throwing.
   */
  async execute(): Promise<RunOutcome> {
    const s = this.scenario;
    const name = `${s.topics.prefix}-${this.options.runId}`;
    const run: Resources = {
      name,
      topics: Array.from({ length: s.topics.count }, (_, i) => `${name}-${i}`),
      target: null,
      created: [],
      reused: [],
      clients: { producers: null, consumers: [] },
      groups: 0,
    };
    // Consumers start last, right before load, because they begin reading (a backlog, say) as soon as
    // they join, and what they read before load starts is not measured. find-max needs them first.
    const steps: (() => Promise<void>)[] = [
      ...(this.agentsSetup ? [() => this.connectAgents(this.agentsSetup!)] : []),
      () => this.open(run),
      () => this.setUp(run),
      ...(s.consumers.backlog > 0 ? [() => this.preload(run)] : []),
      ...(s.producers.rate === 'find-max' ? [() => this.searchRate(run)] : []),
      () => this.startProducers(run),
      () => this.startConsumers(run),
      () => this.measure(run.clients),
      ...(this.verifying ? [() => this.verifyRecords(run)] : []),
    ];
    try {
      for (const step of steps) {
        if (this.stopRequested) break;
        await step();
      }
      return this.finish(this.stopRequested ? 'stopped' : 'completed', null);
    } catch (err) {
      return this.finish('failed', message(err));
    } finally {
      await this.cleanUp(run);
    }
  }

  /** Says hello to every agent and measures its clock, before anything is started. */
  private async connectAgents(setup: AgentsSetup): Promise<void> {
    this.fleet = await AgentFleet.connect(setup);
    this.environment.agents = this.fleet.breakdown(0);
    // verify: true asks for the check: an agent that cannot take part fails the run before any load.
    const why = this.scenario.verify ? this.fleet.whyNotVerifiable() : null;
    if (why !== null) throw new Error(`verify: ${why}`);
  }

  /** Opens (or starts) the target, and what watches it: broker figures and the fault timeline. */
  private async open(run: Resources): Promise<void> {
    const s = this.scenario;
    const target = await openTarget(s, {
      profiles: this.profiles,
      ...(this.options.workDir ? { workDir: this.options.workDir } : {}),
    });
    run.target = target;
    this.environment = {
      ...this.describe(target),
      ...(this.fleet ? { agents: this.fleet.breakdown(0) } : {}),
    };
    await this.fleet?.prepare(this.options.runId, target.bootstrap);
    // Before anything is written: a backlog that would fill this machine's disk is refused.
    if (target.dataDir) {
      assertBacklogFits(s, target.dataDir);
      this.dataDir = target.dataDir;
      this.assertDiskRoom();
    }
    this.meter.brokerInProcess = target.kind === 'bundled';
    this.hostDisk = target.dataDir ? diskUnder(target.dataDir) : null;
    if (target.brokerStats) this.brokerStats = new BrokerStatsMeter(() => target.brokerStats!());
    if (this.profile?.metrics) this.clusterMetrics = new ClusterMetrics(this.profile.metrics, this.log);
    if (s.faults.length > 0) {
      this.faults = new FaultTimeline(s.faults, target.faults ?? null, run.topics, s, this.log, (event) => {
        // A fault carried out later or for longer than its timeline says keeps samples fine after it too.
        const now = performance.now() - this.loadStartedAt;
        this.schedule.extend(now, now + FAULT_MARGIN_MS);
        this.emit('fault', event);
      });
    }
  }

  /** Creates the run's topics (and the idle ones), and describes a target that is not ours. */
  private async setUp(run: Resources): Promise<void> {
    const s = this.scenario;
    const target = run.target!;
    this.setPhase('setup');
    const connection = connectionTo(target);
    // Idle topics only sit on the broker (the 2016 topic-count benchmark); load never touches them.
    const idle = Array.from({ length: s.topics.idle }, (_, i) => `${run.name}-idle-${i}`);
    const { reused } = await createTopics(
      connection,
      `${run.name}-admin`,
      [...run.topics, ...idle],
      s.topics,
      this.log,
      run.created,
    );
    run.reused = reused;
    if (target.kind !== 'bundled') {
      // The bundled broker serves a partition as soon as its metadata names a leader.
      await waitUntilServed(connection, `${run.name}-admin`, run.topics, this.log);
      try {
        const cluster = await describeTarget(connection, `${run.name}-admin`, run.topics[0], this.log);
        this.environment.cluster = cluster;
        if (target.kind === 'external') this.environment.versions.broker = cluster.versionHint;
      } catch (err) {
        this.log('warn', `describing the target: ${message(err)}`);
      }
    }
  }

  /** find-max: the consumers join first (they read along during the trials), then the trials pick the rate. */
  private async searchRate(run: Resources): Promise<void> {
    await this.startConsumers(run);
    this.findMax = await this.search(
      connectionTo(run.target!),
      run.topics,
      `${run.name}-p`,
      run.clients.consumers,
    );
    if (this.findMax.rate === null) {
      const last = this.findMax.trials.at(-1);
      throw new Error(`find-max: no rate met the bounds${last ? ` (last trial: ${last.reason})` : ''}`);
    }
  }

  /** Starts the producers (their load begins with the measured phase) at the rate the run holds to. */
  private async startProducers(run: Resources): Promise<void> {
    const s = this.scenario;
    let rate = typeof s.producers.rate === 'number' ? s.producers.rate : null;
    if (s.producers.rate === 'max' && this.ceiling !== undefined) {
      rate = this.ceiling;
      this.log('info', `rate max capped at the ceiling: a fixed ${this.ceiling} records/s (open loop)`);
    }
    if (this.findMax) rate = this.findMax.rate;
    if (s.producers.count === 0) return;
    const plan = {
      ...connectionTo(run.target!),
      topics: run.topics,
      clientId: `${run.name}-p`,
      config: s.producers,
      ratePerSec: rate === null ? null : rate / s.producers.count,
      recordsEach: s.records === undefined ? null : shares(s.records, s.producers.count),
      durationMs: this.durationMs,
      ...(this.verifying ? { verify: true } : {}),
    };
    run.clients.producers = this.fleet
      ? this.fleet.producers(plan)
      : await this.loadDriver.startProducers(plan);
  }

  /** Starts each consumer group not started yet, one after the other; a stop leaves the rest unstarted. */
  private async startConsumers(run: Resources): Promise<void> {
    const s = this.scenario;
    const { consumers } = run.clients;
    const groups = s.consumers.count > 0 ? s.consumers.groups : 0;
    const plan = (g: number) => ({
      ...connectionTo(run.target!),
      topics: run.topics,
      clientId: `${run.name}-c`,
      groupId: `${run.name}-g${g}`,
      count: s.consumers.count,
      properties: s.consumers.config,
      // Without a backlog our topics are new and empty, so reading from the beginning is "latest"
      // without the race of resolving the latest offset after load has begun (not so for a
      // reused topic, which may hold records already).
      fromBeginning:
        s.consumers.startAt !== 'latest' || (s.consumers.backlog === 0 && run.reused.length === 0),
    });
    if (this.fleet) {
      // On agents every group starts in one request per agent.
      if (groups === 0 || run.groups > 0) return;
      run.groups = groups;
      consumers.push(await this.fleet.startConsumers(Array.from({ length: groups }, (_, g) => plan(g))));
      return;
    }
    for (let g = consumers.length; g < groups && !this.stopRequested; g++) {
      run.groups = g + 1;
      consumers.push(await this.loadDriver.startConsumers(plan(g)));
    }
  }

  /** The measured load, then what the clients ran with and the last error they saw. */
  private async measure(clients: Clients): Promise<void> {
    await this.load(clients);
    this.environment.clientProperties = appliedProperties(clients);
    this.lastError =
      clients.producers?.lastError() ?? clients.consumers.map((c) => c.lastError()).find((e) => e) ?? null;
  }

  /**
   * After the measured phase: producers stop (requests in flight get their answers), then every
   * partition of the run's topics is read from its start and checked against what was acknowledged.
   */
  private async verifyRecords(run: Resources): Promise<void> {
    const producers = run.clients.producers;
    if (!producers?.acknowledged || !run.target) return;
    this.setPhase('stopping');
    await producers.stop();
    const acknowledged = producers.acknowledged();
    const security = nativeSecurity(run.target.security);
    const connection = { bootstrap: run.target.bootstrap, ...(security ? { security } : {}) };
    try {
      this.verification =
        'unknown' in acknowledged
          ? notVerified(this.scenario, acknowledged.unknown)
          : await verifyRecords(this.scenario, connection, run.topics, acknowledged.ranges);
    } catch (err) {
      this.verification = notVerified(this.scenario, `reading the log failed: ${message(err)}`);
    }
    const level = this.verification.verdict === 'failed' ? 'warn' : 'info';
    this.log(level, `record check: ${this.verification.statement}`);
  }

  /** Always runs last: faults end, clients stop, what the run created goes, and the target closes. */
  private async cleanUp(run: Resources): Promise<void> {
    const { target, clients } = run;
    await this.faults?.stop();
    this.setPhase('stopping');
    await Promise.allSettled([clients.producers, ...clients.consumers].map((c) => c?.stop()));
    await this.fleet?.stop();
    if (target) await this.deleteResources(target, run);
    await target?.close().catch((err: unknown) => this.log('warn', `closing the target: ${message(err)}`));
    this.setPhase('done');
  }

  /**
   * Deletes the topics and consumer groups this run created, unless topics.keep. A bundled broker is
   * thrown away whole, so only clusters that outlive the run (external, kafka) are cleaned.
   */
  private async deleteResources(target: Target, run: Resources): Promise<void> {
    const { name, created } = run;
    if (target.kind === 'bundled' || created.length === 0) return;
    if (this.scenario.topics.keep) {
      if (target.kind === 'external')
        this.log('info', `kept the run's ${created.length} topic(s): ${name}-*`);
      return;
    }
    await deleteRunResources(
      connectionTo(target),
      `${name}-admin`,
      {
        topics: created,
        groups: Array.from({ length: run.groups }, (_, g) => `${name}-g${g}`),
      },
      this.log,
    );
  }

  /**
   * Fills the topics with `consumers.backlog` bytes before the measured phase, as fast as the
   * producers go, so consumers that start at the earliest offset have a backlog to drain.
   */
  private async preload(run: Resources): Promise<void> {
    const s = this.scenario;
    const records = backlogRecords(s);
    const producers = Math.max(1, s.producers.count);
    const loader = await this.loadDriver.startProducers({
      ...connectionTo(run.target!),
      topics: run.topics,
      clientId: `${run.name}-preload`,
      config: { ...s.producers, count: producers, rate: 'max', acks: 1 },
      ratePerSec: null,
      recordsEach: shares(records, producers),
      durationMs: null,
      // A backlog's records are not the measured load: their end-to-end latency would be their age.
      unstamped: true,
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
      this.assertDiskRoom();
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
    connection: Connection,
    topics: string[],
    clientId: string,
    consumers: LoadClients[],
  ): Promise<FindMaxResult> {
    const s = this.scenario;
    const trialMs = parseDurationMs(s.findMax.trial) ?? 10_000;
    this.setPhase('search');
    const runTrial = async (rate: number | null) => {
      const producers = await this.loadDriver.startProducers({
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
        const going = () => !this.stopRequested && last - started < trialMs;
        for (let tick = 1; going(); tick++) {
          await this.sleepUntil(started + tick * SAMPLE_MS, going);
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

  /** Throws (failing the run) when the file system of the target's data here is short of room. */
  private assertDiskRoom(): void {
    const short = this.dataDir ? diskShortage(this.dataDir) : null;
    if (short) throw new Error(short);
  }

  /** Starts the producers and cuts samples on the schedule until time is up, records are sent, or a stop. */
  private async load(clients: Clients): Promise<void> {
    const { producers } = clients;
    await this.brokerStats?.reset().catch((err: unknown) => {
      this.log('warn', `reading broker stats: ${message(err)}`);
      this.brokerStats = null;
    });
    await this.clusterMetrics?.reset();
    const own = await ownProcesses(this.environment, this.fleet !== null).catch(() => null);
    this.ownCpu = own ? new ProcessTreeCpu(own) : undefined;
    this.loadStartedAt = performance.now();
    if (this.fleet) this.fleet.loadStartedAt = this.loadStartedAt;
    const cpu = process.cpuUsage();
    this.lastCpuMicros = cpu.user + cpu.system;
    this.lastHost = tryReadHost(this.hostDisk, this.ownCpu);
    this.meter.machine = this.lastHost ? { cores: os.cpus().length, disk: this.hostDisk } : null;
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
    // Bounded by records: until producers finish; by time: until the duration has passed. A stop is
    // heard here, by the loop and by its sleep.
    const going = () => !this.stopRequested && (this.durationMs === null ? producing : !timeUp());
    let lastCut = this.loadStartedAt;
    let due = 0;
    let endedOnTick = false;
    while (going()) {
      due = this.schedule.next(due);
      await this.sleepUntil(this.loadStartedAt + due, going);
      if (!going()) break;
      const now = performance.now();
      await this.cut(clients, now, lastCut);
      lastCut = now;
      // At every sample (a statfs call): a run that would fill the disk fails, with its samples kept.
      this.assertDiskRoom();
      if (timeUp()) {
        endedOnTick = true;
        break;
      }
    }
    await this.endFaults();
    if (endedOnTick) return;
    // The last, partial interval; acks that arrive while draining belong to records sent in it.
    const stoppedAt = performance.now();
    // A stopped load ends at once: no waiting for the last acks, nor for consumers to catch up.
    if (producers && !this.stopRequested) {
      await Promise.race([
        producers.finished,
        new Promise((resolve) => setTimeout(resolve, DRAIN_TIMEOUT_MS)),
      ]);
      if (!this.stopRequested && this.durationMs === null) await this.drainConsumers(clients);
    }
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
    const [broker, scraped, produced, ...consumed] = await Promise.all([
      this.brokerStats?.cut(now - lastCut).catch((err: unknown) => {
        this.log('warn', `reading broker stats: ${message(err)}`);
        return undefined;
      }),
      this.clusterMetrics?.cut(),
      clients.producers?.take(),
      ...clients.consumers.map((c) => c.take()),
    ]);
    const cpu = process.cpuUsage();
    this.meter.addCpu(cpu.user + cpu.system - this.lastCpuMicros);
    this.lastCpuMicros = cpu.user + cpu.system;
    const host = this.lastHost ? tryReadHost(this.hostDisk, this.ownCpu) : null;
    if (this.lastHost && host) {
      this.meter.addMachine(hostUse(this.lastHost, host));
      this.lastHost = host;
    }
    if (produced) this.meter.addProduced(produced);
    for (const interval of consumed) if (interval) this.meter.addConsumed(interval);
    // Seconds since load began, to 0.1 s at the default interval and to the millisecond below it
    // (kept increasing: two late timers must not give two samples one time).
    const digits = this.schedule.finestMs >= SAMPLE_MS ? 10 : 1000;
    const t = Math.max(
      Math.round(((now - this.loadStartedAt) / 1000) * digits) / digits,
      this.lastT + 1 / digits,
    );
    this.lastT = t;
    // An interval belongs to warm-up when most of it lies there (timers fire a little late).
    const warmup = (lastCut + now) / 2 - this.loadStartedAt < this.warmupMs;
    const sample = this.meter.cut(t, now - lastCut, warmup);
    this.fleet?.cut(warmup);
    if (broker) sample.broker = broker;
    if (scraped && scraped.length > 0) sample.broker = [...(broker ?? []), ...scraped];
    this.samples.push(sample);
    if (!warmup && this.phase === 'warmup') this.setPhase('measuring');
    this.emit('sample', sample);
    const histograms: IntervalHistograms = { t, warmup, ...this.meter.lastHistograms };
    if (this.faults) {
      this.intervals.push(histograms);
      this.retries.push(this.meter.lastRetries);
    }
    this.emit('histograms', histograms);
    this.emit('progress', this.progress());
  }

  /** Sleeps until `due` (timers may fire early, so it checks the clock) or until `going` turns false. */
  private async sleepUntil(due: number, going: () => boolean): Promise<void> {
    while (going() && performance.now() < due) {
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
    const found = measured && this.findMax ? { ...measured, findMax: this.findMax } : measured;
    // A run stopped (or failed) before its record check says so rather than leaving the check out.
    const verification =
      this.verification ??
      (this.verifying
        ? notVerified(this.scenario, `the run ${status === 'stopped' ? 'was stopped' : 'ended'} before it`)
        : null);
    const summary = found && verification ? { ...found, verification } : found;
    if (this.fleet) this.environment.agents = this.fleet.breakdown(summary?.measuredSeconds ?? 0);
    if (this.clusterMetrics) this.environment.metrics = this.clusterMetrics.describe();
    this.measureRecoveries();
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
    // Nor has a run whose producers or consumers did nothing while it was measured.
    const idle = status === 'completed' && summary ? this.idleSide(summary) : null;
    if (idle !== null) return { ...base, status: 'failed', error: withHint(`${idle}${last}`) };
    return { ...base, status, error: status === 'failed' && error !== null ? withHint(error) : error };
  }

  /** Each executed fault's recovery figures (docs/scenarios.md#recovery-figures), set on its event. */
  private measureRecoveries(): void {
    const faults = this.faults;
    if (!faults || faults.events.length === 0) return;
    const rate = this.scenario.producers.rate;
    const targetRate =
      typeof rate === 'number' ? rate : rate === 'find-max' ? (this.findMax?.rate ?? null) : null;
    const sampled = faultRecoveries(faults.events, {
      samples: this.samples,
      intervals: this.intervals,
      retries: this.retries,
      targetRate,
    });
    faults.events.forEach((event, i) => {
      const recovery = sampled[i];
      if (!recovery) return;
      const election = faults.leaderElection(event);
      event.recovery = { ...recovery, leaderElectionMs: election.ms, leaderNote: election.note };
    });
  }

  /** Why a run that ran its course has no measured sample. */
  /**
   * Why the measured phase holds nothing of a side the scenario asked for, or null: producers that
   * had no record acknowledged after the warm-up (though some were during it), consumers that read
   * nothing (a consumer-only run on an empty topic completed with zeros before).
   */
  private idleSide(summary: RunSummary): string | null {
    const s = this.scenario;
    if (s.producers.count > 0 && summary.produced.records === 0)
      return `no record was acknowledged after the ${s.warmup} warm-up`;
    if (s.consumers.count > 0 && summary.consumed.records === 0)
      return s.producers.count > 0
        ? 'no record was consumed while the run was measured, though its producers wrote'
        : 'no record was consumed: producers.count is 0, so the consumers read only what other clients write to the topics, and nothing was there for them';
    return null;
  }

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

/** The disk under a target's data directory, or null when it is on none (tmpfs) or cannot be told. */
function diskUnder(dir: string): string | null {
  try {
    return diskOf(dir);
  } catch {
    return null;
  }
}
