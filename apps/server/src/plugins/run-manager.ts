// Keeps the runs this process started and hands their live events to whoever listens.
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { runSeries, type SeriesItem, withRunSlot } from '@kbench/app';
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
import type { RunOwner, RunRecord, Sample, Scenario, SeriesInfo, SweepInfo } from '@kbench/schema';
import fp from 'fastify-plugin';
import { HttpError } from '../http-error.js';

/** How long a new run waits for this server's ending series to let the slot go. */
const SERIES_END_WAIT_MS = 5000;

export interface RunListener {
  sample(sample: Sample): void;
  progress(progress: Progress): void;
  end(record: RunRecord): void;
}

/** Runs the server runs one after another: a reproduction, or a sweep's points. */
export type Series = SeriesInfo;

/** A sweep: a series over the values of one knob, which ends at the first run that does not complete. */
export type Sweep = SweepInfo;

/** What a 409 for a busy run slot suggests, after naming the run that holds it. */
export const OVERRIDE_HINT =
  'wait for it, stop it, or pass concurrent: true (Run alongside, in the workbench) to run anyway';

/** A busy run slot as the API answers it: 409, naming the run that holds it. */
function busy(err: RunSlotBusyError): HttpError {
  return new HttpError(409, `${err.message}; ${OVERRIDE_HINT}`);
}

export class RunManager {
  private readonly live = new Map<string, LiveRun>();
  private readonly sweeps = new Map<string, Sweep>();
  /** The series under way (a run alone is a series of one), each holding the run slot between its runs too. */
  private readonly seriesHolds = new Map<Series, SlotHold>();
  /** Series of this server not yet ended: the last one's slot is let go just after its last run is stored. */
  private readonly ending = new Set<Promise<unknown>>();
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
   * Starts a run; one at a time on this machine, because two benchmarks on one machine measure each
   * other. With `concurrent` it runs beside whatever is going, and the runs record each other.
   */
  async start(
    scenario: Scenario,
    source: string | null,
    opts: { tags?: string[]; concurrent?: boolean } = {},
  ): Promise<LiveRun> {
    const item: SeriesItem = { scenario, source, ...(opts.tags ? { tags: opts.tags } : {}) };
    return (await this.startSeries([item], opts.concurrent ? { concurrent: true } : {})).first;
  }

  /**
   * Runs a sweep's plans as a series that ends at the first run that fails or is stopped (the points
   * after it would measure a broken setup). Resolves with the first run.
   */
  async startSweep(knob: string, items: SeriesItem[], opts: { concurrent?: boolean } = {}): Promise<LiveRun> {
    const sweep: Sweep = { knob, total: items.length, ids: [], finished: false, error: null };
    const { first } = await this.startSeries(items, {
      series: sweep,
      endOnFailure: true,
      onRun: (id) => this.sweeps.set(id, sweep),
      ...(opts.concurrent ? { concurrent: true } : {}),
    });
    return first;
  }

  /**
   * Runs the items one after another (@kbench/app's runSeries), each stored with its tags, ending at
   * a stopped run (someone pressed Stop) and, with `endOnFailure`, at a failed one too. Takes the run
   * slot (a 409 naming the run that holds it when busy), or with `concurrent` runs beside it; taken
   * synchronously, so two quick clicks cannot both get it. Resolves once the first run has started;
   * the series keeps the slot until it ends, so no other run slips in between two of its runs.
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
    if (this.closing) throw new HttpError(409, 'the server is shutting down');
    // A run of this server whose end is stored (shown as completed) may still hold the slot for a
    // moment while it cleans up and its series finishes: wait for that rather than refuse with its name.
    if (this.ending.size > 0 && (await this.allLiveStored()))
      await Promise.race([Promise.allSettled([...this.ending]), delay(SERIES_END_WAIT_MS)]);
    const series: Series = opts.series ?? { total: items.length, ids: [], finished: false, error: null };
    let started: (run: LiveRun) => void = () => {};
    let notStarted: (err: unknown) => void = () => {};
    const first = new Promise<LiveRun>((resolve, reject) => {
      started = resolve;
      notStarted = reject;
    });
    // The server's runs are stopped through its own API: a SIGINT would close the whole workbench.
    const claim = {
      name: (items[0] as SeriesItem).scenario.name,
      command: 'kbench serve',
      stopsOnSigint: false,
    };
    const done = withRunSlot(this.slot, claim, opts.concurrent ?? false, async (hold) => {
      this.seriesHolds.set(series, hold);
      try {
        return await runSeries(items, {
          history: this.history,
          hold,
          profiles: this.profiles,
          ...(opts.endOnFailure ? { endOnFailure: true } : {}),
          interrupted: () => this.closing,
          onStart: (run) => {
            this.live.set(run.id, run);
            void run.done.finally(() => this.live.delete(run.id));
            series.ids.push(run.id);
            opts.onRun?.(run.id);
            started(run);
          },
        });
      } finally {
        this.seriesHolds.delete(series);
      }
    });
    this.ending.add(done);
    void done.then(
      () => this.ending.delete(done),
      () => this.ending.delete(done),
    );
    const end = (error: string | null) => {
      series.finished = true;
      series.error = error;
    };
    const cannotStart = (index: number, err: unknown) => {
      if (index === 0) notStarted(err instanceof RunSlotBusyError ? busy(err) : err);
      else end(`run ${index + 1} of ${items.length} could not start: ${(err as Error).message}`);
    };
    void done.then(
      ({ endedAt, interruptedAt }) => {
        if (endedAt) end(`${endedAt.status} at run ${endedAt.index + 1} of ${items.length}`);
        else if (interruptedAt === null) end(null);
        else cannotStart(interruptedAt, new HttpError(409, 'the server is shutting down'));
      },
      (err: unknown) => cannotStart(series.ids.length, err),
    );
    return { first: await first, series };
  }

  /** True when every run of this server has its end stored (it may still be cleaning up). */
  private async allLiveStored(): Promise<boolean> {
    for (const id of this.live.keys()) {
      if ((await this.history.getRun(id))?.status === 'running') return false;
    }
    return true;
  }

  /** The sweep a run belongs to, if any. */
  sweepOf(id: string): Sweep | undefined {
    return this.sweeps.get(id);
  }

  get(id: string): LiveRun | undefined {
    return this.live.get(id);
  }

  /** The runs of this server under way now. */
  liveRuns(): LiveRun[] {
    return [...this.live.values()];
  }

  /** Who runs a run: this server, another kbench process the run slot names, or nobody here. */
  owner(id: string, status: string): RunOwner {
    const here = [...this.seriesHolds.values()].find((h) => h.current.runId === id);
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
