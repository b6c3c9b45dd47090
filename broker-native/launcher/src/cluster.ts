// A bundled cluster of kbench-broker nodes, one OS process per node, sharing a
// cluster directory: so a node can be killed with SIGKILL, paused with SIGSTOP
// and started again, as `kbench broker --processes` and fault scenarios do.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundledBrokerBinary } from './broker.js';

export interface BundledClusterOptions {
  dataDir: string;
  /** 1 to 5. */
  nodes: number;
  /** Node i listens on basePort + i - 1; 0 picks a free port per node (kept across restarts). */
  basePort?: number;
  /** none | batch | interval:<ms> */
  fsync?: string;
  sessionTimeoutMs?: number;
  replicaLagMs?: number;
  /** Create topics on first use (kbench-broker's default); false passes --no-auto-create-topics. */
  autoCreateTopics?: boolean;
  /** More kbench-broker flags for every node (e.g. --tls-cert F --tls-key F --sasl M --user U:P). */
  extraArgs?: string[];
}

export interface BundledClusterNode {
  id: number;
  port: number;
  /** Null while the node is down. */
  pid: number | null;
}

export interface BundledCluster {
  bootstrap: string;
  nodes(): BundledClusterNode[];
  /** SIGKILL: no flush, no clean shutdown; the page cache survives. */
  kill(id: number): Promise<void>;
  /** SIGSTOP, then SIGCONT after `ms`; resolves when the node runs again. */
  pause(id: number, ms: number): Promise<void>;
  /** Starts a node again on its port and data directory (killing it first if it runs). */
  restart(id: number): Promise<void>;
  /** SIGTERM to every node (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

interface Slot {
  id: number;
  port: number;
  child: ChildProcess | null;
  /** The restart under way, if any: a later restart of the node waits for it. */
  restarting: Promise<void> | null;
}

/** Starts `nodes` kbench-broker processes sharing `<dataDir>/cluster`; node i keeps its data in `<dataDir>/node-i`. */
export async function startBundledCluster(options: BundledClusterOptions): Promise<BundledCluster> {
  if (!Number.isInteger(options.nodes) || options.nodes < 1 || options.nodes > 5)
    throw new Error(`nodes must be an integer from 1 to 5 (got ${options.nodes})`);
  const clusterDir = join(options.dataDir, 'cluster');
  mkdirSync(clusterDir, { recursive: true });
  const binary = bundledBrokerBinary();
  const slots: Slot[] = [];
  const killAll = () => {
    for (const s of slots) s.child?.kill('SIGKILL');
  };
  process.once('exit', killAll);

  const launch = async (slot: Slot): Promise<void> => {
    const args = [
      '--node-id',
      String(slot.id),
      '--port',
      String(slot.port),
      '--data-dir',
      join(options.dataDir, `node-${slot.id}`),
      '--cluster-dir',
      clusterDir,
    ];
    if (options.fsync !== undefined) args.push('--fsync', options.fsync);
    if (options.autoCreateTopics === false) args.push('--no-auto-create-topics');
    if (options.sessionTimeoutMs !== undefined)
      args.push('--session-timeout-ms', String(options.sessionTimeoutMs));
    if (options.replicaLagMs !== undefined) args.push('--replica-lag-ms', String(options.replicaLagMs));
    args.push(...(options.extraArgs ?? []));
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! });
    const first = await Promise.race([
      once(lines, 'line').then(([line]) => line as string),
      once(child, 'exit').then(([code]) => `(exited with ${code})`),
    ]);
    const match = /^node (\d+) [^:]+:(\d+) pid (\d+)$/.exec(first);
    if (!match || Number(match[1]) !== slot.id) {
      child.kill('SIGKILL');
      throw new Error(`kbench-broker node ${slot.id} did not start: ${first}`);
    }
    lines.on('line', () => {});
    slot.port = Number(match[2]);
    slot.child = child;
    child.once('exit', () => {
      if (slot.child === child) slot.child = null;
    });
  };

  try {
    for (let id = 1; id <= options.nodes; id++) {
      const slot: Slot = {
        id,
        port: options.basePort ? options.basePort + id - 1 : 0,
        child: null,
        restarting: null,
      };
      slots.push(slot);
      await launch(slot);
    }
  } catch (error) {
    killAll();
    process.removeListener('exit', killAll);
    throw error;
  }

  const slot = (id: number): Slot => {
    const found = slots.find((s) => s.id === id);
    if (!found) throw new Error(`no node ${id} (nodes are 1..${slots.length})`);
    return found;
  };
  const killNow = async (id: number) => {
    const child = slot(id).child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  // A kill of a node that a restart is still starting waits for that start, and kills what it
  // started: the starting process is not the node's yet, so killing at once would kill nothing.
  const kill = async (id: number) => {
    await slot(id).restarting?.catch(() => undefined);
    await killNow(id);
  };
  return {
    bootstrap: slots.map((s) => `127.0.0.1:${s.port}`).join(','),
    nodes: () => slots.map((s) => ({ id: s.id, port: s.port, pid: s.child?.pid ?? null })),
    kill,
    async pause(id, ms) {
      const child = slot(id).child;
      if (!child) throw new Error(`node ${id} is not running`);
      child.kill('SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, ms));
      child.kill('SIGCONT');
    },
    async restart(id) {
      // Two restarts of one node take turns. Otherwise the second would find no process to kill
      // while the first is still starting its own, and start a second process on the same port
      // and data directory.
      const s = slot(id);
      const earlier = s.restarting;
      const mine = (async () => {
        await earlier?.catch(() => undefined);
        await killNow(id);
        await launch(s);
      })();
      s.restarting = mine;
      try {
        await mine;
      } finally {
        if (s.restarting === mine) s.restarting = null;
      }
    },
    async stop(graceMs = 5000) {
      // A process a restart is still starting is not in its slot yet: let it start, then stop it.
      await Promise.all(slots.map((s) => s.restarting?.catch(() => undefined)));
      await Promise.all(
        slots.map(async (s) => {
          const child = s.child;
          if (!child || child.exitCode !== null || child.signalCode !== null) return;
          const exited = once(child, 'exit');
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(timer);
        }),
      );
      process.removeListener('exit', killAll);
    },
  };
}
