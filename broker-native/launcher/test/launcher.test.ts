// The launcher against the real kbench-broker binary: one broker, and a cluster of one OS process
// per node whose nodes are killed, restarted and stopped one by one or all together.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startBundledBroker, startBundledCluster } from '../src/index.js';

const dirs: string[] = [];
const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kbench-launcher-'));
  dirs.push(dir);
  return dir;
}

/** True while a process with this pid exists (signal 0 checks without sending anything). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

it('startBundledBroker runs kbench-broker on a free port, and stop ends the process', async () => {
  const broker = await startBundledBroker({ dataDir: tempDir() });
  stops.push(() => broker.stop());
  expect(broker.port).toBeGreaterThan(0);
  expect(broker.bootstrap).toBe(`127.0.0.1:${broker.port}`);
  expect(await acceptsConnections(broker.port)).toBe(true);
  expect(running(broker.pid)).toBe(true);

  await broker.stop();
  expect(running(broker.pid)).toBe(false);
});

it('startBundledCluster runs one process per node; kill, restart and stop act on them', async () => {
  const cluster = await startBundledCluster({ dataDir: tempDir(), nodes: 2 });
  stops.push(() => cluster.stop());
  const [one, two] = cluster.nodes();
  expect(one?.id).toBe(1);
  expect(two?.id).toBe(2);
  expect(one?.pid).not.toBe(two?.pid);
  expect(cluster.bootstrap).toBe(`127.0.0.1:${one?.port},127.0.0.1:${two?.port}`);

  await cluster.kill(2);
  expect(cluster.nodes()[1]?.pid).toBeNull();
  expect(running(two!.pid!)).toBe(false);
  expect(running(one!.pid!)).toBe(true);

  await cluster.restart(2);
  const restarted = cluster.nodes()[1];
  expect(restarted?.port).toBe(two?.port);
  expect(running(restarted!.pid!)).toBe(true);

  await cluster.stop();
  expect(running(one!.pid!)).toBe(false);
  expect(running(restarted!.pid!)).toBe(false);
});

it('startBundledCluster: two restarts of one node at once take turns, leaving one process for it', async () => {
  const cluster = await startBundledCluster({ dataDir: tempDir(), nodes: 2 });
  stops.push(() => cluster.stop());
  const before = cluster.nodes()[1];
  const pids: number[] = [];
  const note = () => {
    const pid = cluster.nodes()[1]?.pid;
    if (pid) pids.push(pid);
  };
  await Promise.all([cluster.restart(2).then(note), cluster.restart(2).then(note)]);
  // Each restart started a process of its own, one after the other: the first is gone, the second
  // serves on the node's port.
  expect(pids).toHaveLength(2);
  expect(pids[0]).not.toBe(pids[1]);
  expect(running(pids[0] as number)).toBe(false);
  const after = cluster.nodes()[1];
  expect(after?.pid).toBe(pids[1]);
  expect(after?.port).toBe(before?.port);
  expect(running(after?.pid as number)).toBe(true);
  expect(running(before?.pid as number)).toBe(false);
  expect(await acceptsConnections(after?.port as number)).toBe(true);
});

it('startBundledCluster: a kill while a restart is starting the node waits for it, then kills the node', async () => {
  const cluster = await startBundledCluster({ dataDir: tempDir(), nodes: 2 });
  stops.push(() => cluster.stop());
  const before = cluster.nodes()[1];
  const restarted = cluster.restart(2);
  let startedPid: number | null | undefined;
  await Promise.all([
    restarted.then(() => {
      startedPid = cluster.nodes()[1]?.pid;
    }),
    cluster.kill(2),
  ]);
  // The restart started a process, and the kill then killed it: the node is down, as the kill says.
  expect(startedPid).toBeGreaterThan(0);
  expect(startedPid).not.toBe(before?.pid);
  expect(running(startedPid as number)).toBe(false);
  expect(cluster.nodes()[1]?.pid).toBeNull();
  expect(await acceptsConnections(before?.port as number)).toBe(false);
});

it('startBundledCluster: a stop while a restart is starting a node stops that node too', async () => {
  const cluster = await startBundledCluster({ dataDir: tempDir(), nodes: 2 });
  const one = cluster.nodes()[0]?.pid as number;
  const restarted = cluster.restart(2).then(() => cluster.nodes()[1]?.pid);
  await cluster.stop();
  const startedPid = await restarted;
  expect(startedPid).toBeGreaterThan(0);
  expect(running(startedPid as number)).toBe(false);
  expect(running(one)).toBe(false);
});

it('startBundledCluster refuses a node count outside 1..5 before it starts anything', async () => {
  await expect(startBundledCluster({ dataDir: tempDir(), nodes: 6 })).rejects.toThrow(
    'nodes must be an integer from 1 to 5 (got 6)',
  );
});
