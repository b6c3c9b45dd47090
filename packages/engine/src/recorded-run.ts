// A run that lands in the history as it goes: the row is written before load starts, samples
// are flushed every few seconds (so a crash leaves what was measured), and the end is stored last.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { History, SampleHistograms } from '@kbench/history';
import type { AgentEndpoint, RunRecord, Sample, Scenario } from '@kbench/schema';
import { encodeHistogram } from './histogram-codec.js';
import type { ProfileStore } from './profiles.js';
import { type Progress, ScenarioRun } from './run.js';
import type { IntervalHistograms } from './stored-latency.js';

const FLUSH_EVERY_MS = 5000;

export interface RecordedRunOptions {
  history: History;
  /** The scenario file the run came from, if any. */
  source?: string | null;
  workDir?: string;
  /** Where `target: <name>` profiles are found; default $KBENCH_HOME/profiles. */
  profiles?: ProfileStore;
  /** A rate ceiling in records/s (the CLI's --max-rate), on top of the profile's maxRate. */
  maxRate?: number;
  /** Load agents the clients run on (--agents), and their token when the profile has none. */
  agents?: AgentEndpoint[];
  agentToken?: string;
  /** The run's id, when the caller named it before (in the run slot); a new one otherwise. */
  id?: string;
  /** The other runs going on this machine as it starts (SlotHold.startRun), recorded on both sides. */
  concurrentWith?: string[];
  /** The sweep value this run measures, and the series it belongs to, stored as the run's fields. */
  sweepValue?: string;
  series?: string;
}

/**
 * Events: 'sample' (Sample), 'progress' (Progress), 'log' ({ level, message }), 'fault' (FaultEvent),
 * 'end' (RunRecord).
 */
export interface LiveRun extends EventEmitter {
  readonly id: string;
  readonly scenario: Scenario;
  readonly startedAt: string;
  /** Resolves once the run has finished and is stored; never rejects (failures are status 'failed'). */
  readonly done: Promise<RunRecord>;
  stop(): void;
  samples(): Sample[];
  progress(): Progress;
}

export function newRunId(): string {
  return randomBytes(6).toString('hex');
}

class RecordedRun extends EventEmitter implements LiveRun {
  readonly startedAt = new Date().toISOString();
  done!: Promise<RunRecord>;
  private readonly collected: Sample[] = [];
  private pending: Sample[] = [];
  private pendingHistograms: SampleHistograms[] = [];
  private readonly run: ScenarioRun;

  constructor(
    readonly id: string,
    readonly scenario: Scenario,
    private readonly options: RecordedRunOptions,
  ) {
    super();
    this.run = new ScenarioRun(scenario, {
      runId: id,
      ...(options.workDir ? { workDir: options.workDir } : {}),
      ...(options.profiles ? { profiles: options.profiles } : {}),
      ...(options.maxRate !== undefined ? { maxRate: options.maxRate } : {}),
      ...(options.agents ? { agents: options.agents } : {}),
      ...(options.agentToken !== undefined ? { agentToken: options.agentToken } : {}),
    });
    this.run.on('sample', (sample: Sample) => {
      this.collected.push(sample);
      this.pending.push(sample);
      this.emit('sample', sample);
    });
    this.run.on('histograms', (h: IntervalHistograms) => {
      this.pendingHistograms.push({
        t: h.t,
        warmup: h.warmup,
        publish: h.publish ? encodeHistogram(h.publish) : null,
        e2e: h.e2e ? encodeHistogram(h.e2e) : null,
      });
    });
    this.run.on('progress', (progress: Progress) => this.emit('progress', progress));
    this.run.on('log', (entry) => this.emit('log', entry));
    this.run.on('fault', (event) => this.emit('fault', event));
  }

  stop(): void {
    this.run.stop();
  }

  samples(): Sample[] {
    return [...this.collected];
  }

  progress(): Progress {
    return this.run.progress();
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    const histograms = this.pendingHistograms;
    this.pending = [];
    this.pendingHistograms = [];
    await this.options.history.appendSamples(this.id, batch);
    await this.options.history.appendHistograms(this.id, histograms);
  }

  async begin(): Promise<void> {
    const { history, source } = this.options;
    const record: RunRecord = {
      id: this.id,
      status: 'running',
      scenario: this.scenario,
      source: source ?? null,
      environment: this.run.environment,
      summary: null,
      error: null,
      startedAt: this.startedAt,
      finishedAt: null,
      tags: [],
      notes: '',
      ...(this.options.concurrentWith?.length ? { concurrentWith: this.options.concurrentWith } : {}),
      ...(this.options.sweepValue === undefined ? {} : { sweepValue: this.options.sweepValue }),
      ...(this.options.series === undefined ? {} : { series: this.options.series }),
    };
    await history.createRun(record);
    this.done = this.execute(record);
  }

  private async execute(record: RunRecord): Promise<RunRecord> {
    const flusher = setInterval(() => {
      this.flush().catch((err: unknown) =>
        this.emit('log', { level: 'warn', message: `saving samples: ${String(err)}` }),
      );
    }, FLUSH_EVERY_MS);
    const outcome = await this.run.execute();
    clearInterval(flusher);
    const finishedAt = new Date().toISOString();
    let error = outcome.error;
    let concurrentWith = record.concurrentWith ?? [];
    try {
      await this.flush();
      await this.options.history.finishRun(this.id, {
        status: outcome.status,
        summary: outcome.summary,
        error,
        finishedAt,
        environment: outcome.environment,
        ...(outcome.faults.length > 0 ? { faults: outcome.faults } : {}),
      });
      // A run started beside this one after it began recorded itself here too.
      concurrentWith = await this.options.history.concurrentWith(this.id);
    } catch (err) {
      error = `${error ?? ''}${error ? '; ' : ''}the history could not be updated: ${String(err)}`;
    }
    const final: RunRecord = {
      ...record,
      status: outcome.status,
      environment: outcome.environment,
      summary: outcome.summary,
      error,
      finishedAt,
      ...(outcome.faults.length > 0 ? { faults: outcome.faults } : {}),
      ...(concurrentWith.length > 0 ? { concurrentWith } : {}),
    };
    this.emit('end', final);
    return final;
  }
}

/** Validated scenario in, a live run out; the run is in the history before this resolves. */
export async function startRecordedRun(scenario: Scenario, options: RecordedRunOptions): Promise<LiveRun> {
  const run = new RecordedRun(options.id ?? newRunId(), scenario, options);
  await run.begin();
  return run;
}
