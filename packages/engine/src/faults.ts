// The fault timeline: kill, pause, restart, isolate nodes of a cluster the run started, slow their
// disks, restart them in turn, move leaders back, and run the user's commands, at set times from the
// start of load. Every fault is recorded, a failed one with
// its error; none ends the run.
import {
  COMMAND_TIMEOUT_MS,
  type FaultEvent,
  type PartitionMove,
  parseDurationMs,
  type RollingStep,
  type Scenario,
} from '@kbench/schema';
import { type RunningCommand, startCommand } from './command-fault.js';
import type { Log } from './drivers/kafkajs/client.js';
import type { BundledFaults, FaultController } from './target.js';

type Fault = Scenario['faults'][number];

/** How often a fault's leader election is polled, and on how many of the run's partitions at most. */
const ELECTION_POLL_MS = 20;
const ELECTION_PARTITIONS = 256;
/** How long a rolling restart waits for each node to be back in the ISR of all its partitions. */
export const ROLLING_WAIT_MS = 30_000;

/** ms until every partition a fault's node led had another leader, or null and why. */
export interface LeaderElection {
  ms: number | null;
  note: string | null;
}

/** `leader:<topic>-<partition>` split into its parts, or null for a node id. */
export function parseLeaderRef(
  node: number | string | undefined,
): { topic: string; partition: number } | null {
  if (typeof node !== 'string') return null;
  const match = /^leader:(.+)-(\d+)$/.exec(node);
  return match ? { topic: match[1] as string, partition: Number(match[2]) } : null;
}

/**
 * The index n of the run topic `<prefix>-<run id>-<n>` that a fault's `<topic>` means: either the
 * index itself (`leader:0-0`) or the prefix and index (`leader:kbench-0-0`). Null when it is neither.
 */
export function faultTopicIndex(topic: string, s: Scenario): number | null {
  const bare = topic.startsWith(`${s.topics.prefix}-`) ? topic.slice(s.topics.prefix.length + 1) : topic;
  if (!/^\d+$/.test(bare)) return null;
  const n = Number(bare);
  return n < s.topics.count ? n : null;
}

/** What a fault waited for before it acted: the fault still under way on its node, and for how long. */
interface Waited {
  ms: number;
  action: string;
}

/** ` (due at 6s, it waited 2400 ms for the restart of node 2 to end)`, or '' when it did not wait. */
function waitedText(waited: Waited | null, due: number, node: number | null): string {
  return waited
    ? ` (due at ${due}s, it waited ${waited.ms} ms for the ${waited.action} of node ${node} to end)`
    : '';
}

/** Runs a scenario's faults at their times; `start` when load starts, `stop` when it ends. */
export class FaultTimeline {
  /** Executed faults in the order they completed; a run's outcome holds this very array. */
  readonly events: FaultEvent[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private startedAt = 0;
  private stopped = false;
  /** The node each `leader:` reference last resolved to, so a later restart brings back that node. */
  private readonly resolved = new Map<string, number>();
  /** Command faults whose command is still running. */
  private readonly commands = new Set<RunningCommand>();
  /** When each node was acted on, and how: a later fault on it ends the watch of an earlier one's election. */
  private readonly acted: { node: number; at: number; action: string }[] = [];
  /** The leader election each fault on a node caused, measured while the run went on. */
  private readonly elections = new Map<FaultEvent, LeaderElection>();
  /**
   * Each node's fault still under way (a restart waits seconds for a Kafka JVM to answer), which the
   * node's next fault waits for: two faults never act on one node at once, and each is timed from
   * when it acted, not from when it was due.
   */
  private readonly busy = new Map<number, { action: string; done: Promise<void> }>();

  constructor(
    private readonly faults: Fault[],
    /** Null on a target whose nodes kbench did not start: only command faults run there. */
    private readonly controller: FaultController | null,
    /** The run's topic names, index n = `<prefix>-<run id>-<n>`. */
    private readonly topics: string[],
    private readonly scenario: Scenario,
    private readonly log: Log,
    private readonly onEvent: (event: FaultEvent) => void = () => {},
  ) {}

  /** Schedules every fault relative to `loadStartedAt` (a performance.now() time). */
  start(loadStartedAt: number): void {
    this.startedAt = loadStartedAt;
    for (const fault of this.faults) {
      const due = loadStartedAt + (parseDurationMs(fault.at) ?? 0);
      const timer = setTimeout(
        () => {
          if (this.stopped) return;
          const running = this.execute(fault).finally(() => this.inFlight.delete(running));
          this.inFlight.add(running);
        },
        Math.max(0, due - performance.now()),
      );
      this.timers.push(timer);
    }
  }

  /**
   * Cancels faults not yet due (they are not recorded), kills commands still running, and waits
   * for the faults under way.
   */
  async stop(): Promise<FaultEvent[]> {
    if (!this.stopped) {
      this.stopped = true;
      for (const timer of this.timers) clearTimeout(timer);
      for (const command of this.commands) command.killAtRunEnd();
      const skipped = this.faults.length - this.events.length - this.inFlight.size;
      if (skipped > 0 && this.startedAt > 0)
        this.log('info', `${skipped} fault(s) of the timeline fell after the end of load and were not run`);
    }
    await Promise.allSettled([...this.inFlight]);
    this.events.sort((a, b) => a.t - b.t);
    return this.events;
  }

  /** Seconds since load started, to 0.1 s. */
  private now(): number {
    return Math.round((performance.now() - this.startedAt) / 100) / 10;
  }

  private async execute(fault: Fault): Promise<void> {
    if (fault.action === 'command') return this.runCommand(fault);
    if (fault.action === 'rolling-restart') return this.rollingRestart();
    if (fault.action === 'preferred-leaders') return this.preferredLeaders();
    const due = this.now();
    let t = due;
    const lasts = fault.action === 'pause' || fault.action === 'isolate' || fault.action === 'slow-disk';
    const durationMs = lasts && fault.for !== undefined ? (parseDurationMs(fault.for) ?? 0) : null;
    let node: number | null = typeof fault.node === 'number' ? fault.node : null;
    let error: string | null = null;
    let election: Promise<LeaderElection> | null = null;
    // Set when it acts: what it waited for first.
    const wait: { before: Waited | null } = { before: null };
    try {
      if (!this.controller) throw new Error('kbench did not start this target: it has no nodes to act on');
      if (node === null) {
        const ref = String(fault.node);
        const earlier = this.resolved.get(ref);
        const returning = fault.action === 'restart' || fault.action === 'heal';
        node = returning && earlier !== undefined ? earlier : await this.resolveLeader(ref);
        this.resolved.set(ref, node);
      }
      // Only these move leadership: an isolated node stops heart-beating to its peers. (A restart
      // brings a node back: the election, if any, belongs to the fault that took it down.)
      const moves =
        fault.action === 'kill' ||
        fault.action === 'pause' ||
        (fault.action === 'isolate' && (fault.from ?? 'peers') === 'peers');
      const lasting = durationMs === null ? undefined : durationMs;
      const acting = node;
      const acted = await this.onNode(node, fault.action, async (before) => {
        // Timed from here: the partitions it leads once the fault before it on the node has ended.
        wait.before = before;
        t = this.now();
        const led = moves ? await this.partitionsLedBy(acting) : [];
        const at = performance.now();
        const controller = this.controller as FaultController;
        if (fault.action === 'kill') await controller.kill(acting);
        else if (fault.action === 'restart') await controller.restart(acting);
        else if (fault.action === 'pause') await controller.pause(acting, durationMs ?? 0);
        else if (fault.action === 'isolate')
          await this.bundled().isolate(acting, fault.from ?? 'peers', lasting);
        else if (fault.action === 'heal') await this.bundled().heal(acting);
        else await this.bundled().slowDisk(acting, (parseDurationMs(fault.delay) ?? 0) * 1000, lasting);
        return { led, at };
      });
      const { led, at: actedAt } = acted;
      this.acted.push({ node, at: actedAt, action: fault.action });
      election = moves
        ? this.watchElection(node, led, actedAt, durationMs)
        : Promise.resolve({
            ms: null,
            note:
              fault.action === 'restart'
                ? 'a restart brings a node back: an election belongs to the fault that took it down'
                : `a ${fault.action} moves no leader by itself`,
          });
      const what =
        fault.action === 'isolate'
          ? ` from ${fault.from ?? 'peers'}`
          : fault.action === 'slow-disk'
            ? `: ${fault.delay} added to each fdatasync`
            : '';
      const lasts_ = durationMs === null ? '' : ` for ${durationMs} ms`;
      this.log(
        'info',
        `fault at ${t}s: ${fault.action} node ${node}${what}${lasts_}${waitedText(wait.before, due, node)}`,
      );
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      this.log(
        'warn',
        `fault at ${t}s: ${fault.action} ${fault.node} failed: ${error}${waitedText(wait.before, due, node)}`,
      );
    }
    const event: FaultEvent = {
      t,
      action: fault.action,
      target: fault.node ?? '',
      node,
      durationMs,
      error,
      ...(wait.before ? { waitedMs: wait.before.ms } : {}),
    };
    this.record(event);
    if (election) this.elections.set(event, await election);
  }

  /** The bundled cluster's own faults, or why this target has none. */
  private bundled(): BundledFaults {
    const bundled = this.controller?.bundled;
    if (!bundled)
      throw new Error('only the bundled cluster takes this fault (kbench runs its nodes in this process)');
    return bundled;
  }

  /**
   * Runs `act` on `node` once the timeline's fault still under way on the node (if any) has ended,
   * failed or not; `act` is told what it waited for (null: nothing).
   */
  private onNode<T>(node: number, action: string, act: (waited: Waited | null) => Promise<T>): Promise<T> {
    const before = this.busy.get(node);
    const asked = performance.now();
    const run = (async () => {
      if (!before) return act(null);
      await before.done;
      return act({ ms: Math.round(performance.now() - asked), action: before.action });
    })();
    const mine = {
      action,
      done: run.then(
        () => {},
        () => {},
      ),
    };
    this.busy.set(node, mine);
    void mine.done.then(() => {
      if (this.busy.get(node) === mine) this.busy.delete(node);
    });
    return run;
  }

  /**
   * Restarts every node in turn, the next only once the one before is back in the ISR of all its
   * partitions (at most ROLLING_WAIT_MS each). One event, with each node's times.
   */
  private async rollingRestart(): Promise<void> {
    const t = this.now();
    const steps: RollingStep[] = [];
    let error: string | null = null;
    try {
      const controller = this.controller;
      if (!controller) throw new Error('kbench did not start this target: it has no nodes to act on');
      for (const node of controller.nodes()) {
        if (this.stopped) break;
        const step: RollingStep = { node, t: this.now(), upT: null, inSyncT: null, error: null };
        steps.push(step);
        try {
          // After a fault of the timeline still under way on the node: the step's t is when it began.
          await this.onNode(node, 'restart', async (before) => {
            step.t = this.now();
            if (before)
              this.log(
                'info',
                `rolling-restart: node ${node} waited ${before.ms} ms for its ${before.action} to end`,
              );
            return controller.restart(node);
          }).catch((err: unknown) => {
            throw new Error(
              `node ${node} did not start again: ${err instanceof Error ? err.message : String(err)}`,
            );
          });
          step.upT = this.now();
          const deadline = performance.now() + ROLLING_WAIT_MS;
          while (!this.stopped) {
            if ((await controller.outOfSync(node)) === 0) {
              step.inSyncT = this.now();
              break;
            }
            if (performance.now() > deadline)
              throw new Error(
                `node ${node} was not back in the ISR of all its partitions within ${ROLLING_WAIT_MS / 1000} s`,
              );
            await new Promise((resolve) => setTimeout(resolve, ELECTION_POLL_MS * 5));
          }
          if (step.inSyncT === null)
            throw new Error(`load ended before node ${node} was back in the ISR of all its partitions`);
        } catch (err) {
          step.error = err instanceof Error ? err.message : String(err);
          error = `${step.error}; the nodes after it were not restarted`;
          break;
        }
      }
      if (!error && this.stopped && steps.length < controller.nodes().length)
        error = `load ended after ${steps.length} of ${controller.nodes().length} nodes`;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    this.log(
      error ? 'warn' : 'info',
      `fault at ${t}s: rolling-restart ${error ?? `of ${steps.length} nodes done`}`,
    );
    const event: FaultEvent = {
      t,
      action: 'rolling-restart',
      target: '',
      node: null,
      durationMs: null,
      error,
      steps,
    };
    this.elections.set(event, { ms: null, note: 'a rolling restart: see its steps for each node' });
    this.record(event);
  }

  /**
   * Moves leadership back to the preferred replicas (the bundled controller's, or Kafka's PREFERRED
   * election), and records which of the run's partitions (at most ELECTION_PARTITIONS) moved.
   */
  private async preferredLeaders(): Promise<void> {
    const t = this.now();
    let error: string | null = null;
    let moved: number | undefined;
    let moves: PartitionMove[] | undefined;
    try {
      const controller = this.controller;
      if (!controller) throw new Error('kbench did not start this target: it has no nodes to act on');
      ({ moved, moves } = await controller.preferredLeaders(this.runPartitions()));
      const which = moves.map((m) => `${m.topic}-${m.partition} ${m.from ?? 'none'}->${m.to}`).join(', ');
      this.log(
        'info',
        `fault at ${t}s: preferred-leaders moved ${moved} partition(s) back${which ? ` (the run's: ${which})` : ''}`,
      );
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      this.log('warn', `fault at ${t}s: preferred-leaders failed: ${error}`);
    }
    const event: FaultEvent = {
      t,
      action: 'preferred-leaders',
      target: '',
      node: null,
      durationMs: null,
      error,
      ...(moved === undefined ? {} : { moved }),
      ...(moves === undefined ? {} : { moves }),
    };
    this.elections.set(event, { ms: null, note: 'a preferred leader election: leaders move by design' });
    this.record(event);
  }

  /** How long the cluster took to lead a fault's node's partitions elsewhere (a fault on a node, that did not fail). */
  leaderElection(event: FaultEvent): LeaderElection {
    return (
      this.elections.get(event) ?? {
        ms: null,
        note:
          event.action === 'command'
            ? 'a command fault: kbench cannot tell what it did to leadership'
            : event.error
              ? 'the fault failed'
              : `not measured for a ${event.action} fault`,
      }
    );
  }

  /** The run's partitions, at most ELECTION_PARTITIONS of them (the first topics' first). */
  private runPartitions(): { topic: string; partition: number }[] {
    const { partitions } = this.scenario.topics;
    const topics = this.topics.slice(0, Math.ceil(ELECTION_PARTITIONS / partitions));
    return topics
      .flatMap((topic) => Array.from({ length: partitions }, (_, partition) => ({ topic, partition })))
      .slice(0, ELECTION_PARTITIONS);
  }

  /** The run's partitions (at most ELECTION_PARTITIONS) that `node` leads now. */
  private async partitionsLedBy(node: number): Promise<{ topic: string; partition: number }[]> {
    const some = this.runPartitions();
    const leaders = await this.leadersOf(some);
    return some.filter((_, i) => leaders[i] === node);
  }

  /** The leader of each partition (null: none, or not known), in one request where the target can. */
  private async leadersOf(partitions: { topic: string; partition: number }[]): Promise<(number | null)[]> {
    const controller = this.controller;
    if (!controller) return partitions.map(() => null);
    if (controller.leaders) {
      const topics = [...new Set(partitions.map((p) => p.topic))];
      const known = await controller.leaders(topics).catch(() => []);
      return partitions.map(
        (p) => known.find((k) => k.topic === p.topic && k.partition === p.partition)?.leader ?? null,
      );
    }
    const out: (number | null)[] = [];
    for (const p of partitions) out.push(await controller.leaderOf(p.topic, p.partition).catch(() => null));
    return out;
  }

  /**
   * Polls every ELECTION_POLL_MS until each partition in `led` has a leader other than `node`: the
   * time from the fault's action to the last such election. Ends early when the run stops, or when a
   * paused node is back before any election.
   */
  private async watchElection(
    node: number,
    led: { topic: string; partition: number }[],
    actedAt: number,
    pauseMs: number | null,
  ): Promise<LeaderElection> {
    if (led.length === 0) return { ms: null, note: `node ${node} led none of the run's partitions` };
    const waiting = new Set(led);
    while (!this.stopped) {
      const still = [...waiting];
      const leaders = await this.leadersOf(still);
      still.forEach((p, i) => {
        const leader = leaders[i];
        if (leader !== null && leader !== undefined && leader !== node) waiting.delete(p);
      });
      if (waiting.size === 0) return { ms: Math.round(performance.now() - actedAt), note: null };
      const again = this.acted.find((a) => a.node === node && a.at > actedAt);
      if (again)
        return {
          ms: null,
          note: `node ${node} was ${again.action === 'restart' ? 'restarted' : `acted on again (${again.action})`} before its partitions had a new leader`,
        };
      if (pauseMs !== null && performance.now() - actedAt > pauseMs + ELECTION_POLL_MS * 5)
        return {
          ms: null,
          note: `node ${node} was back after ${pauseMs} ms and still led its partitions: no election`,
        };
      await new Promise((resolve) => setTimeout(resolve, ELECTION_POLL_MS));
    }
    return { ms: null, note: `load ended before every partition node ${node} led had a new leader` };
  }

  private record(event: FaultEvent): void {
    this.events.push(event);
    this.onEvent(event);
  }

  /** Runs a command fault's command; the run goes on meanwhile, and its end kills the command. */
  private async runCommand(fault: Fault): Promise<void> {
    const t = this.now();
    const line = fault.run ?? '';
    const timeoutMs = parseDurationMs(fault.timeout ?? COMMAND_TIMEOUT_MS.default) ?? 60_000;
    this.log('info', `fault at ${t}s: command ${JSON.stringify(line)} started`);
    const running = startCommand(line, timeoutMs, () => this.now());
    this.commands.add(running);
    const command = await running.done;
    this.commands.delete(running);
    const error = command.timedOut
      ? `timed out after ${timeoutMs / 1000} s and was killed`
      : command.killedAtRunEnd
        ? 'still running when the run ended, and was killed'
        : command.exitCode !== 0
          ? command.exitCode === null
            ? `ended by ${command.signal}`
            : `exit code ${command.exitCode}`
          : null;
    const outcome = error ?? 'exit 0';
    this.log(error ? 'warn' : 'info', `fault at ${t}s: command ${JSON.stringify(line)}: ${outcome}`);
    this.record({ t, action: 'command', target: line, node: null, durationMs: null, error, command });
  }

  private async resolveLeader(ref: string): Promise<number> {
    const parsed = parseLeaderRef(ref);
    const index = parsed ? faultTopicIndex(parsed.topic, this.scenario) : null;
    const topic = index === null ? undefined : this.topics[index];
    if (!parsed || topic === undefined) throw new Error(`${ref} names no topic of this run`);
    const leader = await this.controller?.leaderOf(topic, parsed.partition);
    if (leader === null || leader === undefined)
      throw new Error(`${topic} partition ${parsed.partition} has no leader right now`);
    return leader;
  }
}
