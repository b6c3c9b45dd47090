// Keeps the runs this process started and hands their live events to whoever listens.
import { dirname } from 'node:path';
import type { LiveRun, Progress } from '@kbench/engine';
import type { ProfileStore } from '@kbench/engine/profiles';
import {
  describeHolder,
  type History,
  RunSlot,
  RunSlotBusyError,
  type SlotHold,
  type StopResult,
} from '@kbench/history';
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

/** What a 409 for a busy run slot suggests, after naming the run that holds it. */
export const OVERRIDE_HINT =
  'wait for it, stop it, or pass concurrent: true (Run alongside, in the workbench) to run anyway';

/** Who runs a run and whether this server can stop it (GET /api/runs/:id/owner). */
export interface RunOwner {
  id: string;
  /** The process running it, as the run slot names it; null when no process on this machine does. */
  owner: string | null;
  /** True when this server's Stop reaches it (its own run, or a CLI run it can signal). */
  stoppable: boolean;
  /** Why it cannot be stopped from here, or null. */
  reason: string | null;
}

export class RunManager {
  private readonly live = new Map<string, LiveRun>();
  private readonly sweeps = new Map<string, Sweep>();
  /** The slot hold of each run started alone here, by run id. */
  private readonly holds = new Map<string, SlotHold>();
  /** The series under way, each holding the run slot between its runs too. */
  private readonly seriesHolds = new Map<Series, SlotHold>();
  /** Set once the server is closing: a series must not start its next run then. */
  private closing = false;
  /** One run at a time on this machine: shared with the CLI through KBENCH_HOME, beside the history. */
  readonly slot: RunSlot;

  constructor(
    private readonly history: History,
    private readonly profiles: ProfileStore,
  ) {
    this.slot = new RunSlot(dirname(history.path));
  }

  /**
   * Takes the run slot (a 409 naming the run that holds it when busy), or with `concurrent` runs
   * beside it. Taken synchronously, so two quick clicks cannot both get it.
   */
  private take(name: string, concurrent: boolean): SlotHold {
    if (this.closing) throw new HttpError(409, 'the server is shutting down');
    try {
      // The server's runs are stopped through its own API: a SIGINT would close the whole workbench.
      return this.slot.take({ name, command: 'kbench serve', stopsOnSigint: false }, { concurrent });
    } catch (err) {
      if (err instanceof RunSlotBusyError) throw new HttpError(409, `${err.message}; ${OVERRIDE_HINT}`);
      throw err;
    }
  }

  /**
   * Starts a run; one at a time on this machine, because two benchmarks on one machine measure each
   * other. With `concurrent` it runs beside whatever is going, and the runs record each other.
   */
  async start(
    scenario: Scenario,
    source: string | null,
    opts: { tags?: string[]; series?: Series; concurrent?: boolean } = {},
  ): Promise<LiveRun> {
    if (this.closing) throw new HttpError(409, 'the server is shutting down');
    const seriesHold = opts.series ? this.seriesHolds.get(opts.series) : undefined;
    const hold = seriesHold ?? this.take(scenario.name, opts.concurrent ?? false);
    // A series keeps the slot after each run; a run alone gives it back.
    const free = () => (seriesHold ? hold.endRun() : hold.release());
    let run: LiveRun;
    try {
      // Loaded on first use: the engine brings the native broker, which browsing the history does not need.
      const { newRunId, startRecordedRun } = await import('@kbench/engine');
      const id = newRunId();
      const others = hold.startRun(id, scenario.name);
      run = await startRecordedRun(scenario, {
        history: this.history,
        source,
        profiles: this.profiles,
        id,
        concurrentWith: others,
      });
    } catch (err) {
      free();
      throw err;
    }
    this.live.set(run.id, run);
    if (!seriesHold) this.holds.set(run.id, hold);
    void run.done.finally(() => {
      this.live.delete(run.id);
      this.holds.delete(run.id);
      free();
    });
    // The engine stores a run untagged; the tags follow at once, before anyone is told its id.
    if (opts.tags && opts.tags.length > 0) await this.history.setTags(run.id, opts.tags);
    return run;
  }

  /**
   * Runs a sweep's plans as a series that ends at the first run that fails or is stopped (the points
   * after it would measure a broken setup). Resolves with the first run.
   */
  async startSweep(
    knob: string,
    plans: Scenario[],
    source: string | null,
    opts: { concurrent?: boolean } = {},
  ): Promise<LiveRun> {
    const sweep: Sweep = { knob, total: plans.length, ids: [], finished: false, error: null };
    const { first } = await this.startSeries(
      plans.map((scenario) => ({ scenario, source })),
      {
        series: sweep,
        endOnFailure: true,
        onRun: (id) => this.sweeps.set(id, sweep),
        ...(opts.concurrent ? { concurrent: true } : {}),
      },
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
    opts: {
      series?: Series;
      endOnFailure?: boolean;
      onRun?: (id: string) => void;
      concurrent?: boolean;
    } = {},
  ): Promise<{ first: LiveRun; series: Series }> {
    const series: Series = opts.series ?? { total: items.length, ids: [], finished: false, error: null };
    const hold = this.take((items[0] as SeriesItem).scenario.name, opts.concurrent ?? false);
    this.seriesHolds.set(series, hold);
    const release = () => {
      this.seriesHolds.delete(series);
      hold.release();
    };
    const startItem = (item: SeriesItem) =>
      this.start(item.scenario, item.source, { series, ...(item.tags ? { tags: item.tags } : {}) });
    let first: LiveRun;
    try {
      first = await startItem(items[0] as SeriesItem);
    } catch (err) {
      release();
      throw err;
    }
    const end = (error: string | null = null) => {
      series.finished = true;
      series.error = error;
      release();
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

  /** Who runs a run: this server, another kbench process the run slot names, or nobody here. */
  owner(id: string, status: string): RunOwner {
    const here = this.holds.get(id) ?? [...this.seriesHolds.values()].find((h) => h.current.runId === id);
    if (this.live.has(id))
      return {
        id,
        owner: here ? describeHolder(here.current) : 'this workbench',
        stoppable: true,
        reason: null,
      };
    const holder = this.slot.holderOf(id);
    if (!holder) {
      const reason =
        status === 'running'
          ? 'no kbench process on this machine holds the run slot for it'
          : `it has ended (status ${status})`;
      return { id, owner: null, stoppable: false, reason };
    }
    const reason = this.slot.cannotSignal(holder);
    return { id, owner: describeHolder(holder), stoppable: reason === null, reason };
  }

  /** Stops a run another process owns (a CLI run), as Ctrl-C would, through the run slot. */
  stopElsewhere(id: string): StopResult {
    return this.slot.stop(id);
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
    for (const hold of this.seriesHolds.values()) hold.release();
    this.seriesHolds.clear();
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
