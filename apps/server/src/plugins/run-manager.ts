// Keeps the runs this process started and hands their live events to whoever listens.
import type { LiveRun, Progress } from '@kbench/engine';
import type { ProfileStore } from '@kbench/engine/profiles';
import type { History } from '@kbench/history';
import type { RunRecord, Sample, Scenario } from '@kbench/schema';
import fp from 'fastify-plugin';
import { HttpError } from '../http-error.js';

export interface RunListener {
  sample(sample: Sample): void;
  progress(progress: Progress): void;
  end(record: RunRecord): void;
}

/** One run of a series: its scenario, where it came from, and the tags its stored run gets. */
export interface SeriesItem {
  scenario: Scenario;
  source: string | null;
  tags?: string[];
}

/** Runs the server runs one after another: a reproduction, or a sweep's points. */
export interface Series {
  total: number;
  /** Runs started so far, in order. */
  ids: string[];
  finished: boolean;
  /** Why the series ended early, if it did. */
  error: string | null;
}

/** A sweep: a series over the values of one knob, which ends at the first run that does not complete. */
export interface Sweep extends Series {
  knob: string;
}

export class RunManager {
  private readonly live = new Map<string, LiveRun>();
  private readonly sweeps = new Map<string, Sweep>();
  /** Set while a start is under way, so two quick clicks cannot start two runs. */
  private starting = false;
  /** The series under way, which holds the run slot between its runs too. */
  private activeSeries: Series | null = null;
  /** Set once the server is closing: a series must not start its next run then. */
  private closing = false;

  constructor(
    private readonly history: History,
    private readonly profiles: ProfileStore,
  ) {}

  /** Starts a run; one at a time, because two benchmarks on one machine measure each other. */
  async start(
    scenario: Scenario,
    source: string | null,
    opts: { tags?: string[]; series?: Series } = {},
  ): Promise<LiveRun> {
    if (this.closing) throw new HttpError(409, 'the server is shutting down');
    const running = this.current();
    const seriesBusy = this.activeSeries !== null && this.activeSeries !== opts.series;
    if (running || this.starting || seriesBusy) {
      const which = running ? ` (${running.id})` : seriesBusy ? ' (a reproduction, between two runs)' : '';
      throw new HttpError(409, `a run is already in progress${which}; stop it or wait for it to end`);
    }
    this.starting = true;
    try {
      // Loaded on first use: the engine brings the native broker, which browsing the history does not need.
      const { startRecordedRun } = await import('@kbench/engine');
      const run = await startRecordedRun(scenario, {
        history: this.history,
        source,
        profiles: this.profiles,
      });
      this.live.set(run.id, run);
      void run.done.finally(() => this.live.delete(run.id));
      // The engine stores a run untagged; the tags follow at once, before anyone is told its id.
      if (opts.tags && opts.tags.length > 0) await this.history.setTags(run.id, opts.tags);
      return run;
    } finally {
      this.starting = false;
    }
  }

  /**
   * Runs a sweep's plans as a series that ends at the first run that fails or is stopped (the points
   * after it would measure a broken setup). Resolves with the first run.
   */
  async startSweep(knob: string, plans: Scenario[], source: string | null): Promise<LiveRun> {
    const sweep: Sweep = { knob, total: plans.length, ids: [], finished: false, error: null };
    const { first } = await this.startSeries(
      plans.map((scenario) => ({ scenario, source })),
      { series: sweep, endOnFailure: true, onRun: (id) => this.sweeps.set(id, sweep) },
    );
    return first;
  }

  /**
   * Runs the items one after another, each stored with its tags, ending at a stopped run (someone
   * pressed Stop) and, with `endOnFailure`, at a failed one too. Resolves once the first run has
   * started; the series keeps the run slot until it ends, so no other run slips in between two of
   * its runs.
   */
  async startSeries(
    items: SeriesItem[],
    opts: { series?: Series; endOnFailure?: boolean; onRun?: (id: string) => void } = {},
  ): Promise<{ first: LiveRun; series: Series }> {
    const series: Series = opts.series ?? { total: items.length, ids: [], finished: false, error: null };
    const startItem = (item: SeriesItem) =>
      this.start(item.scenario, item.source, { series, ...(item.tags ? { tags: item.tags } : {}) });
    const first = await startItem(items[0] as SeriesItem);
    this.activeSeries = series;
    const end = (error: string | null = null) => {
      series.finished = true;
      series.error = error;
      if (this.activeSeries === series) this.activeSeries = null;
    };
    const follow = async (run: LiveRun, index: number): Promise<void> => {
      series.ids.push(run.id);
      opts.onRun?.(run.id);
      const record = await run.done;
      const next = items[index + 1];
      if (!next) return end();
      if (record.status === 'stopped' || (opts.endOnFailure && record.status !== 'completed'))
        return end(`${record.status} at run ${index + 1} of ${items.length}`);
      try {
        await follow(await startItem(next), index + 1);
      } catch (err) {
        end(`run ${index + 2} of ${items.length} could not start: ${(err as Error).message}`);
      }
    };
    void follow(first, 0);
    return { first, series };
  }

  /** The sweep a run belongs to, if any. */
  sweepOf(id: string): Sweep | undefined {
    return this.sweeps.get(id);
  }

  get(id: string): LiveRun | undefined {
    return this.live.get(id);
  }

  current(): LiveRun | undefined {
    return this.live.values().next().value;
  }

  /** Sends a live run's events to a listener until it ends; returns the function that detaches it. */
  subscribe(run: LiveRun, listener: RunListener): () => void {
    let attached = true;
    const onSample = (s: Sample) => listener.sample(s);
    const onProgress = (p: Progress) => listener.progress(p);
    run.on('sample', onSample);
    run.on('progress', onProgress);
    const detach = () => {
      if (!attached) return;
      attached = false;
      run.off('sample', onSample);
      run.off('progress', onProgress);
    };
    // `done` resolves once the record is stored, so a listener that then reads the history sees it.
    void run.done.then((record: RunRecord) => {
      if (!attached) return;
      detach();
      listener.end(record);
    });
    return detach;
  }

  /** Stops every live run and waits until each is stored (on server shutdown). */
  async stopAll(): Promise<void> {
    this.closing = true;
    const runs = [...this.live.values()];
    for (const run of runs) run.stop();
    await Promise.all(runs.map((run) => run.done));
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    runs: RunManager;
  }
}

export const runManagerPlugin = fp(
  async (app) => {
    const manager = new RunManager(app.history, app.profiles);
    app.decorate('runs', manager);
    app.addHook('onClose', async () => manager.stopAll());
  },
  { name: 'run-manager', dependencies: ['history'] },
);
