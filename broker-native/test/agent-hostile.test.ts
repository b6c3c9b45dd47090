// Hostile peers of a load agent (docs/agents.md, protocol v1), against the agent as a user runs it:
// the standalone `kbench-agent` binary, and the addon's startAgent in a Node process of its own (what
// `kbench agent` runs). Peers without the token cannot keep a controller out by holding every
// connection, and a controller's options that the agent cannot honour get an error naming the field,
// never a panic that leaves the agent busy, nor an allocation of gigabytes.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryOf } from './broker-process.js';

const ROOT = join(import.meta.dirname, '..');
const TOKEN = 'hostile-test-token';
const MAX_CONNECTIONS = 64;
const MiB = 1024 * 1024;

const IN_NODE = `
import { startAgent } from ${JSON.stringify(join(ROOT, 'index.js'))};
const agent = await startAgent({ listen: '127.0.0.1:0', token: process.env.KBENCH_AGENT_TOKEN, name: 'in-node' });
console.log('kbench agent in-node listening on ' + agent.address + ' (protocol 1)');
setInterval(() => {}, 1 << 30);
`;

const ways: Record<string, () => [string, string[]]> = {
  'the kbench-agent binary': () => [
    join(ROOT, 'target', 'release', 'kbench-agent'),
    ['--listen', '127.0.0.1:0'],
  ],
  'the addon in a Node process': () => [process.execPath, ['--input-type=module', '-e', IN_NODE]],
};

const children: ChildProcess[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }
});

/** Starts the agent and reads its address from the line it prints. */
async function startAgent(way: string): Promise<{ child: ChildProcess; port: number }> {
  const [command, args] = (ways[way] as () => [string, string[]])();
  const child = spawn(command, args, {
    env: { ...process.env, KBENCH_AGENT_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const m = / listening on 127\.0\.0\.1:(\d+) \(protocol 1\)$/.exec(line);
  expect(m, line).not.toBeNull();
  return { child, port: Number(m?.[1]) };
}

/** A peer of the agent: whatever it sends, and the agent's lines as they come. */
async function peer(port: number) {
  const socket = connect({ host: '127.0.0.1', port });
  sockets.push(socket);
  await once(socket, 'connect');
  const lines: string[] = [];
  const waiting: ((line: string | null) => void)[] = [];
  createInterface({ input: socket }).on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else lines.push(line);
  });
  const closed = new Promise<null>((resolve) => socket.once('close', () => resolve(null)));
  void closed.then(() => {
    for (const next of waiting.splice(0)) next(null);
  });
  let id = 0;
  const next = (): Promise<Record<string, unknown> | null> => {
    const line = lines.shift();
    if (line !== undefined) return Promise.resolve(JSON.parse(line));
    if (socket.destroyed) return Promise.resolve(null);
    return new Promise((resolve) => waiting.push((l) => resolve(l === null ? null : JSON.parse(l))));
  };
  return {
    closed,
    next,
    async call(request: Record<string, unknown>): Promise<Record<string, unknown>> {
      id += 1;
      socket.write(`${JSON.stringify({ ...request, id })}\n`);
      const reply = await next();
      if (reply === null)
        throw new Error(`the agent closed the connection instead of answering ${request.op}`);
      expect(reply.id).toBe(id);
      return reply;
    },
  };
}

async function controller(port: number) {
  const c = await peer(port);
  expect(await c.call({ op: 'hello', version: 1, token: TOKEN })).toMatchObject({ ok: true });
  return c;
}

/** A producer's options as a controller sends them, sending to `target`. */
const producer = (target: string, extra: Record<string, unknown>) => ({
  bootstrap: [target],
  topics: ['t'],
  acks: 1,
  messageSize: 100,
  keys: 'none',
  compression: 'none',
  batchSize: 16384,
  lingerMs: 5,
  maxInFlight: 5,
  idempotence: false,
  ...extra,
});

describe.each(Object.keys(ways))('a load agent run as %s', (way) => {
  it(`lets a controller in past ${MAX_CONNECTIONS} connections that never say hello, closing the oldest of them`, async () => {
    const { port } = await startAgent(way);
    const silent = [];
    for (let i = 0; i < MAX_CONNECTIONS; i++) silent.push(await peer(port));
    // Every place is held, and none has said hello: the controller's connection takes the oldest's.
    const c = await controller(port);
    expect((await c.call({ op: 'time' })).ok).toBe(true);
    expect(await silent[0]?.next()).toEqual({
      id: null,
      ok: false,
      error: `hello: this connection is closed to make room: the agent serves ${MAX_CONNECTIONS} connections at once, and this one had not said hello`,
    });
    await silent[0]?.closed;
    // Again and again: the silent peers cannot take the places of those that said hello.
    for (let i = 1; i <= 3; i++) {
      silent.push(await peer(port));
      await controller(port);
      expect((await silent[i]?.next())?.error).toMatch(/^hello: this connection is closed to make room/);
    }
    expect((await c.call({ op: 'time' })).ok).toBe(true);
  });

  it('refuses a durationMs past what a duration holds, naming it, and is free for the next run', async () => {
    const { port } = await startAgent(way);
    const target = '127.0.0.1:1';
    const c = await controller(port);
    expect(await c.call({ op: 'prepare', run: 'r1', target: [target] })).toEqual({ id: 2, ok: true });
    // Before, the agent panicked here: no reply, and every later run found it busy with r1.
    const reply = await c.call({
      op: 'startProducers',
      producers: [producer(target, { durationMs: 1e300 })],
    });
    expect(reply).toEqual({
      id: 3,
      ok: false,
      error: 'producers[0]: durationMs: 1e300 ms is longer than a duration can be',
    });
    expect(await c.call({ op: 'release' })).toEqual({ id: 4, ok: true });
    const next = await controller(port);
    expect(await next.call({ op: 'prepare', run: 'r2', target: [target] })).toEqual({ id: 2, ok: true });
  });

  it('refuses value sizes past 16 MiB, naming the field, without allocating them', async () => {
    const { child, port } = await startAgent(way);
    const target = '127.0.0.1:1';
    const c = await controller(port);
    await c.call({ op: 'prepare', run: 'r1', target: [target] });
    const before = memoryOf(child.pid as number).rss;
    // Before, each of these had the producer fill a pool of random bytes as large: 4 GiB each.
    const table = Buffer.alloc(8);
    table.writeUInt32LE(100, 0);
    table.writeUInt32LE(2 ** 32 - 1, 4);
    for (const [options, field] of [
      [{ messageSize: 2 ** 32 - 1 }, 'messageSize: 4294967295'],
      [{ messageSize: 10, messageSizeMax: 16 * MiB + 1 }, `messageSizeMax: ${16 * MiB + 1}`],
      [{ messageSizeTable: table.toString('base64') }, 'messageSizeTable[1]: 4294967295'],
    ] as const) {
      const reply = await c.call({ op: 'startProducers', producers: [producer(target, options)] });
      expect(reply.error).toBe(
        `producers[0]: ${field} bytes is more than a value may be (${16 * MiB}, the scenario's bound)`,
      );
    }
    expect(memoryOf(child.pid as number).rss - before).toBeLessThan(64 * MiB);
    expect((await c.call({ op: 'time' })).ok).toBe(true);
  });
});
