// Load agents as a user runs them: `kbench agent` processes on this machine with a token file, and
// `kbench run --agents` sending a scenario's producers and consumers to them against the bundled
// broker. The stored run is checked against the agents' own figures (totals and histograms merge
// exactly), a skewed agent clock is corrected, a killed agent ends the run as the scenario says, and the
// record check (verify) runs over the agents' producers and never passes a run that lost one.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { throwawayTls } from '@kbench/broker-native';
import { LatencyHistogram } from '@kbench/engine';
import type { AgentsRun, RunRecord } from '@kbench/schema';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliResult, freePort, MAIN, REPO, runKbench } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

/** The environment without a token of the caller's, so each test says where its token comes from. */
function env(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { KBENCH_AGENT_TOKEN: _, KBENCH_AGENT_TEST_CLOCK_SKEW_MS: __, ...rest } = process.env;
  return { ...rest, KBENCH_HOME: home, ...extra };
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kbench-agents-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

interface Agent {
  child: ChildProcess;
  address: string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** Spawns `kbench agent --listen HOST:0 ARGS` and reads the address from its listening line. */
async function startAgent(
  home: string,
  args: string[],
  extraEnv: Record<string, string> = {},
  host = '127.0.0.1',
): Promise<Agent> {
  const child = spawn(process.execPath, [MAIN, 'agent', '--listen', `${host}:0`, ...args], {
    cwd: REPO,
    env: env(home, extraEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => String(line)),
    exited.then(([code]) => `(exited with ${code}: ${stderr})`),
  ]);
  const m = /^kbench agent (\S+) listening on (127\.0\.0\.\d+:\d+) \(protocol 1\)$/.exec(first);
  expect(m, first).not.toBeNull();
  return { child, address: m?.[2] as string, exited };
}

/** A token file and a home with a scenario file in it. */
async function setup(scenario: string): Promise<{ home: string; token: string; file: string }> {
  const home = await tempDir();
  const token = path.join(home, 'agent-token');
  await writeFile(token, 'test-token-1234\n', { mode: 0o600 });
  const file = path.join(home, 'scenario.yaml');
  await writeFile(file, scenario);
  return { home, token, file };
}

function kbench(home: string, args: string[], timeoutMs = 180_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd: REPO, env: env(home), timeout: timeoutMs },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** `kbench run FILE --agents AGENTS --agent-token-file TOKEN --json`, which must fail (exit 1): the run it printed. */
async function failedRun(home: string, file: string, agents: string, token: string): Promise<RunRecord> {
  const result = await kbench(home, ['run', file, '--agents', agents, '--agent-token-file', token, '--json']);
  expect(result.code, result.stderr).toBe(1);
  return JSON.parse(result.stdout) as RunRecord;
}

/** `kbench run ARGS --json` as a child: its exit code (within a minute), its output, and when load is measured. */
function spawnRun(home: string, args: string[]) {
  const child = spawn(process.execPath, [MAIN, 'run', ...args, '--json'], {
    cwd: REPO,
    env: env(home),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit') as Promise<[number | null]>;
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += String(d);
  });
  const measuring = new Promise<void>((resolve) => {
    child.stderr?.on('data', (d) => {
      stderr += String(d);
      if (/measuring/.test(stderr)) resolve();
    });
    void exited.then(() => resolve());
  });
  const exit = Promise.race([
    exited.then(([code]) => code),
    new Promise<number>((resolve) => setTimeout(() => resolve(-1), 60_000)),
  ]);
  return { measuring, exit, stdout: () => stdout, stderr: () => stderr };
}

/** Starts agents a and b, then `kbench run FILE --agents a,b ARGS`. */
async function runOnTwoAgents(home: string, token: string, file: string, args: string[] = []) {
  const a = await startAgent(home, ['--token-file', token, '--name', 'a']);
  const b = await startAgent(home, ['--token-file', token, '--name', 'b']);
  const result = await kbench(home, [
    'run',
    file,
    '--agents',
    `${a.address},${b.address}`,
    '--agent-token-file',
    token,
    ...args,
  ]);
  return { a, b, result };
}

const SCENARIO = `name: agents
driver: native
target: bundled
topics: { partitions: 4 }
producers: { count: 2, rate: 4000, messageSize: 200 }
consumers: { count: 2 }
duration: 5s
warmup: 1s
`;

function agentsOf(run: RunRecord): AgentsRun {
  const agents = run.environment.agents;
  if (!agents) throw new Error(`the run stored no agents: ${JSON.stringify(run.environment)}`);
  return agents;
}

function merged(agents: AgentsRun, side: 'produced' | 'consumed'): LatencyHistogram {
  const h = new LatencyHistogram();
  for (const a of agents.agents) h.addBuckets(a[side].histogram);
  return h;
}

describe('kbench run --agents', () => {
  it('splits the clients over two agents and stores the exact merge of their figures', async () => {
    const { home, token, file } = await setup(SCENARIO);
    const { a, b, result } = await runOnTwoAgents(home, token, file, ['--json']);
    expect(result.code, result.stderr).toBe(0);
    const run = JSON.parse(result.stdout) as RunRecord;
    expect(run.status).toBe('completed');
    const agents = agentsOf(run);
    expect(agents.agents.map((x) => [x.name, x.address, x.producers, x.consumers])).toEqual([
      ['a', a.address, 1, 1],
      ['b', b.address, 1, 1],
    ]);
    const summary = run.summary!;
    expect(summary.produced.records).toBeGreaterThan(0);
    const sum = (side: 'produced' | 'consumed') => agents.agents.reduce((n, x) => n + x[side].records, 0);
    expect(sum('produced')).toBe(summary.produced.records);
    expect(sum('consumed')).toBe(summary.consumed.records);
    for (const x of agents.agents) expect(x.produced.records).toBeGreaterThan(0);
    // The run's percentiles are those of the agents' merged histograms.
    const publish = merged(agents, 'produced').summaryMs();
    const e2e = merged(agents, 'consumed').summaryMs();
    for (const key of ['count', 'p50', 'p99', 'p999', 'max'] as const) {
      expect(publish[key]).toBe(summary.publishLatencyMs?.[key]);
      expect(e2e[key]).toBe(summary.endToEndLatencyMs?.[key]);
    }
    // One machine: the clocks agree to within the round trip.
    for (const x of agents.agents) expect(Math.abs(x.clockOffsetMs)).toBeLessThan(50);

    // kbench show prints the breakdown.
    const show = await runKbench(home, ['show', run.id]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(
      /load agents \(clients: producers p, consumers c; end-to-end latency right to within/,
    );
    const row = (x: (typeof agents.agents)[number]) =>
      new RegExp(
        `^${x.name} +${x.address.replace(/\./g, '\\.')} +\\S+ +${x.producers} p, ${x.consumers} c +-?[\\d.]+ ± [\\d.]+ ms +[\\d,.]+ rec/s`,
        'm',
      );
    for (const x of agents.agents) expect(show.stdout).toMatch(row(x));
  });

  it('corrects end-to-end latency by the measured offset of a skewed agent clock', async () => {
    const { home, token, file } = await setup(SCENARIO);
    const a = await startAgent(home, ['--token-file', token, '--name', 'skewed'], {
      KBENCH_AGENT_TEST_CLOCK_SKEW_MS: '500',
    });
    const b = await startAgent(home, ['--token-file', token, '--name', 'b']);
    const result = await kbench(home, [
      'run',
      file,
      '--agents',
      `producers@${a.address},consumers@${b.address}`,
      '--agent-token-file',
      token,
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const run = JSON.parse(result.stdout) as RunRecord;
    const agents = agentsOf(run);
    const [skewed, other] = agents.agents;
    expect([skewed?.producers, skewed?.consumers, other?.producers, other?.consumers]).toEqual([2, 0, 0, 2]);
    expect(skewed?.clockOffsetMs).toBeGreaterThan(450);
    expect(skewed?.clockOffsetMs).toBeLessThan(550);
    expect(skewed?.clockUncertaintyMs).toBeLessThan(50);
    expect(agents.e2eClockUncertaintyMs).toBeCloseTo(
      (skewed?.clockUncertaintyMs ?? 0) + (other?.clockUncertaintyMs ?? 0),
      2,
    );
    // Uncorrected, every record would read 500 ms older (or younger) than it is.
    expect(run.summary?.endToEndLatencyMs?.p50).toBeLessThan(100);
  });

  it('spreads three agents on their own loopback addresses over a 3-node cluster, one of them for both roles', async () => {
    const { home, token, file } = await setup(
      SCENARIO.replace(
        'topics: { partitions: 4 }',
        'cluster: { nodes: 3 }\ntopics: { partitions: 6, replicationFactor: 3 }',
      )
        .replace('producers: { count: 2,', 'producers: { count: 3,')
        .replace('consumers: { count: 2 }', 'consumers: { count: 3 }'),
    );
    const [p, c, both] = await Promise.all(
      ['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((host, i) =>
        startAgent(home, ['--token-file', token, '--name', `agent${i + 2}`], {}, host),
      ),
    );
    const result = await kbench(home, [
      'run',
      file,
      '--agents',
      `producers@${p?.address},consumers@${c?.address},${both?.address}`,
      '--agent-token-file',
      token,
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const run = JSON.parse(result.stdout) as RunRecord;
    const agents = agentsOf(run);
    // 3 producers over the two agents that take producers, 3 consumers over the two that take consumers.
    expect(agents.agents.map((x) => [x.address, x.producers, x.consumers])).toEqual([
      [p?.address, 2, 0],
      [c?.address, 0, 2],
      [both?.address, 1, 1],
    ]);
    const summary = run.summary!;
    const sum = (side: 'produced' | 'consumed') => agents.agents.reduce((n, x) => n + x[side].records, 0);
    expect(sum('produced')).toBe(summary.produced.records);
    expect(sum('consumed')).toBe(summary.consumed.records);
    expect(merged(agents, 'produced').summaryMs()).toEqual(summary.publishLatencyMs);
    expect(merged(agents, 'consumed').summaryMs()).toEqual(summary.endToEndLatencyMs);
    // Producers on one agent, consumers on another: the clocks agree, so does the latency.
    expect(agents.e2eClockUncertaintyMs).toBeLessThan(50);
    expect(summary.endToEndLatencyMs?.p50).toBeLessThan(100);
  });

  it('takes the agents, their token file and their CA from a profile (kbench profile add --agents), and speaks TLS to them', async () => {
    const { home, token, file } = await setup(SCENARIO.replace('target: bundled\n', ''));
    const tls = throwawayTls(['127.0.0.1']);
    const [ca, cert, key] = ['ca.pem', 'cert.pem', 'key.pem'].map((f) => path.join(home, f)) as [
      string,
      string,
      string,
    ];
    await Promise.all([
      writeFile(ca, tls.ca),
      writeFile(cert, tls.cert),
      writeFile(key, tls.key, { mode: 0o600 }),
    ]);
    const agent = await startAgent(home, [
      '--token-file',
      token,
      '--name',
      'secure',
      '--tls-cert',
      cert,
      '--tls-key',
      key,
    ]);
    const broker = spawn(
      process.execPath,
      [MAIN, 'broker', '--port', String(await freePort()), '--data-dir', path.join(home, 'broker')],
      {
        cwd: REPO,
        env: env(home),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const brokerExited = once(broker, 'exit');
    cleanups.push(async () => {
      if (broker.exitCode === null) {
        broker.kill('SIGTERM');
        await brokerExited;
      }
    });
    const [line] = (await once(createInterface({ input: broker.stdout! }), 'line')) as [string];
    const bootstrap = /^node 1 (127\.0\.0\.1:\d+) pid/.exec(line)?.[1];
    expect(bootstrap, line).toBeDefined();
    const added = await kbench(home, [
      'profile',
      'add',
      'fleet',
      '--bootstrap',
      bootstrap as string,
      '--agents',
      agent.address,
      '--agent-token-file',
      token,
      '--agent-ca',
      ca,
    ]);
    expect(added.code, added.stderr).toBe(0);
    const shown = JSON.parse((await kbench(home, ['profile', 'show', 'fleet', '--json'])).stdout);
    expect(shown).toMatchObject({
      agents: [{ address: agent.address, roles: ['producers', 'consumers'] }],
      agentTokenFile: token,
      agentTls: { ca },
    });
    const result = await kbench(home, ['run', file, '--target', 'fleet', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const run = JSON.parse(result.stdout) as RunRecord;
    expect(run.environment.profile).toBe('fleet');
    const [only] = agentsOf(run).agents;
    expect([only?.name, only?.producers, only?.consumers]).toEqual(['secure', 2, 2]);
    expect(only?.produced.records).toBe(run.summary?.produced.records);
  });

  it('checks the records of producers split over two agents: the record check passes, every acknowledged record found', async () => {
    // 3 producers over 2 agents: numbers 0 and 1 on a, 2 on b; marks that collided would read as duplicates.
    const { home, token, file } = await setup(`name: agents-verify
driver: native
target: bundled
topics: { partitions: 4 }
producers: { count: 3, rate: 3000, messageSize: 100 }
records: 9000
verify: true
`);
    const { result } = await runOnTwoAgents(home, token, file);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^record check: passed: all 9,000 acknowledged records found once each, in order$/m,
    );
    const id = /^run (\w+): /m.exec(result.stderr)?.[1];
    expect(id, result.stderr).toBeDefined();
    const stored = JSON.parse((await kbench(home, ['show', id as string, '--json'])).stdout) as RunRecord;
    expect(stored.summary?.produced.records).toBe(9000);
    const v = stored.summary?.verification;
    expect(v?.verdict, v?.statement).toBe('passed');
    expect(v?.totals).toEqual({
      acknowledged: 9000,
      found: 9000,
      lost: 0,
      duplicated: 0,
      reordered: 0,
      unacknowledgedPresent: 0,
      foreign: 0,
    });
    expect(v?.partitions).toHaveLength(4);
    expect(agentsOf(stored).agents.map((x) => [x.name, x.producers, x.produced.records > 0])).toEqual([
      ['a', 2, true],
      ['b', 1, true],
    ]);
  });

  const LOSSES = [
    { onLoss: 'fail', how: 'killed', signal: 'SIGKILL', reason: /^connection/ },
    { onLoss: 'continue', how: 'killed', signal: 'SIGKILL', reason: /^connection/ },
    // Stopped, not dead: its connection stays open and its answers stop.
    {
      onLoss: 'fail',
      how: 'frozen',
      signal: 'SIGSTOP',
      reason: /^no answer within 1000 ms \(agents\.lossTimeoutMs\)$/,
    },
  ] as const;
  for (const { onLoss, how, signal, reason } of LOSSES) {
    it(`records an agent ${how} mid-run and ${onLoss === 'fail' ? 'fails the run' : 'goes on without it'} (onLoss ${onLoss})`, async () => {
      const { home, token, file } = await setup(
        `${SCENARIO.replace('duration: 5s', 'duration: 8s')}agents: { onLoss: ${onLoss}, lossTimeoutMs: 1000 }\nverify: true\n`,
      );
      const a = await startAgent(home, ['--token-file', token, '--name', 'a']);
      const b = await startAgent(home, ['--token-file', token, '--name', 'b']);
      cleanups.push(async () => {
        b.child.kill('SIGCONT');
      });
      const run = spawnRun(home, [
        file,
        '--agents',
        `${a.address},${b.address}`,
        '--agent-token-file',
        token,
      ]);
      await run.measuring;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      b.child.kill(signal);
      const code = await run.exit;
      expect(code, run.stderr()).toBe(onLoss === 'fail' ? 1 : 0);
      const stored = JSON.parse(run.stdout()) as RunRecord;
      const lost = agentsOf(stored).agents.find((x) => x.name === 'b');
      expect(lost?.lostAtMs).toBeGreaterThan(0);
      expect(lost?.lostReason).toMatch(reason);
      // What b's producer had acknowledged went with it: the record check does not claim a pass.
      const check = stored.summary?.verification;
      expect(check?.verdict).toBe('not-run');
      expect(check?.totals).toBeNull();
      if (onLoss === 'fail') {
        expect(stored.status).toBe('failed');
        expect(stored.error).toMatch(/^agent b \(127\.0\.0\.1:\d+\) lost at \d+\.\d s into the load: /);
        expect(check?.statement).toBe('the record check did not run: the run ended before it');
      } else {
        expect(stored.status).toBe('completed');
        expect(agentsOf(stored).agents.find((x) => x.name === 'a')?.lostAtMs).toBeNull();
        expect(check?.statement).toMatch(
          /^the record check did not run: agent b \(127\.0\.0\.1:\d+\) was lost \d+\.\d s into the load \(connection[^)]*\): what its 1 producer had acknowledged is unknown$/,
        );
        const show = await runKbench(home, ['show', stored.id]);
        expect(show.stdout).toMatch(/warning: lost an agent during the run and went on without it \(b /);
      }
    });
  }

  it('refuses an agent busy with another run, naming the agent and that run, before any load', async () => {
    const { home, token, file } = await setup(SCENARIO.replace('duration: 5s', 'duration: 10s'));
    const agent = await startAgent(home, ['--token-file', token]);
    const first = spawnRun(home, [file, '--agents', agent.address, '--agent-token-file', token]);
    await first.measuring;
    // Another history, so that the run slot does not refuse it first.
    const other = await tempDir();
    const refused = await failedRun(other, file, agent.address, token);
    expect(refused.error).toMatch(
      new RegExp(
        `^agent \\S+ \\(${agent.address.replace(/\./g, '\\.')}\\): busy: run \\w+ from 127\\.0\\.0\\.1:\\d+ since `,
      ),
    );
    expect(refused.summary).toBeNull();
    expect(await first.exit).toBe(0);
  });

  it('--dry-run shows how the clients would be split over the agents, without contacting them', async () => {
    const { home, token, file } = await setup(SCENARIO);
    const args = [
      'run',
      file,
      '--dry-run',
      '--agents',
      'producers@10.0.0.1:7755,10.0.0.2:7755',
      '--agent-token-file',
      token,
    ];
    const json = await kbench(home, [...args, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).agents).toEqual([
      { address: '10.0.0.1:7755', roles: ['producers'], producers: 1, consumers: 0 },
      { address: '10.0.0.2:7755', roles: ['producers', 'consumers'], producers: 1, consumers: 2 },
    ]);
    const text = await kbench(home, args);
    expect(text.stdout).toMatch(/^agent 10\.0\.0\.2:7755: 1 producer\(s\), 2 consumer\(s\)$/m);
  });

  it('refuses usage mistakes with exit 2, naming the flag or field', async () => {
    const { home, token, file } = await setup(SCENARIO);
    const kafkajs = await kbench(home, [
      'run',
      file,
      '--set',
      'driver=kafkajs',
      '--agents',
      '127.0.0.1:7755',
      '--agent-token-file',
      token,
    ]);
    expect(kafkajs.code).toBe(2);
    expect(kafkajs.stderr).toMatch(/driver: load agents run the native engine: set driver: native/);
    const bad = await kbench(home, ['run', file, '--agents', '127.0.0.1', '--agent-token-file', token]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--agents: "127\.0\.0\.1": must be host:port/);
    const noToken = await kbench(home, ['run', file, '--agents', '127.0.0.1:7755']);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/agentToken: load agents need their token: --agent-token-file FILE/);
    const unknown = await kbench(home, [
      'run',
      file,
      '--agents',
      `127.0.0.1:${await freePort()}`,
      '--agent-token-file',
      token,
      '--json',
    ]);
    expect(unknown.code).toBe(1);
    expect((JSON.parse(unknown.stdout) as RunRecord).error).toMatch(
      /^agent 127\.0\.0\.1:\d+: nothing listens at/,
    );
  });
});

describe('kbench agent', () => {
  it('refuses to start without a token (exit 2, naming the flag)', async () => {
    const home = await tempDir();
    const result = await kbench(home, ['agent', '--listen', '127.0.0.1:0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /kbench agent: a token is required: --token-file FILE or the environment variable KBENCH_AGENT_TOKEN/,
    );
  });

  it('stops on SIGTERM with exit 0, and names a busy port in one line with exit 1', async () => {
    const { home, token } = await setup('');
    const agent = await startAgent(home, ['--token-file', token]);
    const busy = await kbench(home, ['agent', '--listen', agent.address, '--token-file', token]);
    expect(busy.code).toBe(1);
    expect(busy.stderr.trim().split('\n')).toEqual([
      `kbench agent: ${agent.address} is already in use (port ${agent.address.split(':')[1]}); is another agent running? choose another with --listen`,
    ]);
    agent.child.kill('SIGTERM');
    const [code, signal] = await agent.exited;
    expect([code, signal]).toEqual([0, null]);
  });

  it('refuses a wrong token, naming the agent, and sends no load', async () => {
    const { home, token, file } = await setup(SCENARIO);
    const agent = await startAgent(home, ['--token-file', token]);
    const wrong = path.join(home, 'wrong-token');
    await writeFile(wrong, 'not-the-token\n');
    const run = await failedRun(home, file, agent.address, wrong);
    expect(run.error).toMatch(
      new RegExp(`^agent ${agent.address.replace(/\./g, '\\.')}: hello\\.token: refused`),
    );
    expect(run.summary).toBeNull();
  });

  it("fails the run naming the agent and the field when an agent's figures cannot be measured ones, storing none of them", async () => {
    const { home, token, file } = await setup(SCENARIO);
    // An agent that speaks the protocol and reports an interval whose count is not its buckets'.
    const ops = [
      'hello',
      'time',
      'prepare',
      'startConsumers',
      'startProducers',
      'take',
      'stop',
      'acknowledged',
      'release',
    ];
    const interval = (count: number) => ({
      records: 10,
      valueBytes: 2000,
      wireBytes: 2100,
      errors: 0,
      errorMessages: [],
      latency: { buckets: [500], counts: [10], count, sum: 5000, max: 500 },
    });
    const bodies: Record<string, () => Record<string, unknown>> = {
      hello: () => ({ version: 1, ops, agent: { name: 'liar', kbench: '0.1.0', host: 'h', cores: 2 } }),
      time: () => ({ micros: Date.now() * 1000 }),
      startConsumers: () => ({ properties: {} }),
      startProducers: () => ({ properties: {} }),
      take: () => ({
        atMicros: Date.now() * 1000,
        producers: interval(1e9),
        consumers: interval(10),
        producersFinished: false,
        error: null,
      }),
      acknowledged: () => ({ acknowledged: [] }),
    };
    const server = createServer((socket) => {
      createInterface({ input: socket }).on('line', (line) => {
        const request = JSON.parse(line) as { id: number; op: string };
        socket.write(`${JSON.stringify({ id: request.id, ok: true, ...(bodies[request.op]?.() ?? {}) })}\n`);
      });
      socket.on('error', () => {});
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise((done) => server.close(() => done())));
    const address = `127.0.0.1:${(server.address() as { port: number }).port}`;
    const run = await failedRun(home, file, address, token);
    expect(run.error).toMatch(
      new RegExp(
        `^agent liar \\(${address.replace(/\./g, '\\.')}\\) lost at [\\d.]+ s into the load: a reply's producers\\.latency\\.count is 1000000000, not the sum of its buckets' counts \\(10\\)$`,
      ),
    );
    expect(run.summary).toBeNull();
  });
});
