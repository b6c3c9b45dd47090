import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { makeWorkspace, sample, storeFinishedRun, type Workspace } from './fixtures.js';

const PORT = 7420;
const HOST = `127.0.0.1:${PORT}`;

let ws: Workspace;
let app: FastifyInstance;

beforeAll(async () => {
  ws = await makeWorkspace();
  app = await buildApp({
    history: ws.history,
    scenariosDir: ws.scenariosDir,
    profilesDir: join(ws.dir, 'profiles'),
    port: PORT,
  });
});

afterAll(async () => {
  await app?.close();
  await ws?.remove();
});

/** Injects a request addressed as a browser on this machine would address it. */
function call(opts: InjectOptions & { url: string }) {
  return app.inject({ ...opts, headers: { host: HOST, ...opts.headers } });
}

describe('health', () => {
  it('answers ok with the server version', async () => {
    const res = await call({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, version: '0.1.0' });
  });
});

describe('scenario library', () => {
  it('lists every scenario file under the folder with its folder, name and validity', async () => {
    const res = await call({ method: 'GET', url: '/api/scenarios' });
    expect(res.statusCode).toBe(200);
    const list = res.json() as { path: string; folder: string; name: string; valid: boolean }[];
    expect(list.map((s) => s.path)).toEqual([
      'quickstart.yaml',
      'kreps-2014/bad-acks.yaml',
      'kreps-2014/producer-1-thread.yaml',
      'nested/deep/as-json.json',
      'sweeps/sizes.yaml',
    ]);
    expect(list[0]).toMatchObject({
      folder: '',
      name: 'quick start',
      description: 'one producer, one consumer',
      valid: true,
    });
    expect(list[3]).toMatchObject({ folder: 'nested/deep', name: 'from json', valid: true });
    expect(list[0]).toMatchObject({
      outline: {
        target: 'bundled',
        driver: 'kafkajs',
        producers: 1,
        consumers: 1,
        length: '3s',
        sweep: false,
      },
    });
  });

  it('marks an invalid scenario and names the bad field', async () => {
    const list = (await call({ method: 'GET', url: '/api/scenarios' })).json() as {
      path: string;
      valid: boolean;
      issues?: { path: string }[];
    }[];
    const bad = list.find((s) => s.path === 'kreps-2014/bad-acks.yaml');
    expect(bad?.valid).toBe(false);
    expect(bad?.issues?.map((i) => i.path)).toEqual(['producers.acks']);
  });

  it('returns a file with its text and the resolved scenario', async () => {
    const res = await call({ method: 'GET', url: '/api/scenarios/kreps-2014/producer-1-thread.yaml' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.text).toContain('kreps single producer');
    expect(body.scenario.producers).toMatchObject({
      count: 1,
      acks: 1,
      messageSize: 100,
      compression: 'none',
    });
    expect(body.scenario.duration).toBe('60s');
  });

  it('refuses a path that climbs out of the scenarios folder', async () => {
    const res = await call({ method: 'GET', url: '/api/scenarios/kreps-2014/..%2F..%2Fhistory.yaml' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/without \. or \.\. parts/);
  });

  it('answers 404 for a scenario that does not exist', async () => {
    const res = await call({ method: 'GET', url: '/api/scenarios/kreps-2014/missing.yaml' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'no scenario kreps-2014/missing.yaml' });
  });
});

describe("a person's own scenarios", () => {
  it('are listed under user/ and read from their own folder', async () => {
    const userDir = join(ws.dir, 'my-scenarios');
    await mkdir(userDir, { recursive: true });
    await writeFile(join(userDir, 'mine.yaml'), 'name: my own\nduration: 5s\n');
    const own = await buildApp({
      history: ws.history,
      scenariosDir: ws.scenariosDir,
      userScenariosDir: userDir,
      port: PORT,
    });
    try {
      const list = (await own.inject({ url: '/api/scenarios', headers: { host: HOST } })).json() as {
        path: string;
      }[];
      expect(list.map((s) => s.path)).toContain('user/mine.yaml');
      const file = await own.inject({ url: '/api/scenarios/user/mine.yaml', headers: { host: HOST } });
      expect(file.json()).toMatchObject({
        path: 'user/mine.yaml',
        scenario: { name: 'my own', duration: '5s' },
      });
    } finally {
      await own.close();
    }
  });

  it('are saved from the composer as YAML, validated first, without overwriting by accident', async () => {
    const userDir = join(ws.dir, 'saved-scenarios');
    const own = await buildApp({
      history: ws.history,
      scenariosDir: ws.scenariosDir,
      userScenariosDir: userDir,
      port: PORT,
    });
    const save = (body: object) =>
      own.inject({ method: 'POST', url: '/api/scenarios', headers: { host: HOST }, payload: body });
    try {
      const saved = await save({ file: 'acks-all', yaml: 'name: acks all\nproducers: { acks: all }\n' });
      expect(saved.statusCode).toBe(201);
      expect(saved.json()).toEqual({ path: 'user/acks-all.yaml' });
      expect(await readFile(join(userDir, 'acks-all.yaml'), 'utf8')).toContain('acks: all');
      expect((await save({ file: 'acks-all', yaml: 'name: again\n' })).statusCode).toBe(409);
      expect((await save({ file: 'acks-all', yaml: 'name: again\n', overwrite: true })).statusCode).toBe(201);
      const bad = await save({ file: 'bad', yaml: 'producers: { acks: 3 }\n' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().issues[0].path).toBe('producers.acks');
      expect((await save({ file: '../escape', yaml: 'name: x\n' })).statusCode).toBe(400);
    } finally {
      await own.close();
    }
  });
});

describe('starting a run with a bad scenario', () => {
  it('answers 400 with the field path of the problem', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/runs',
      payload: { scenario: { producers: { acks: 2 }, duration: '3s' } },
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.error).toBe('invalid scenario');
    expect(body.issues).toHaveLength(1);
    expect(body.issues[0].path).toBe('producers.acks');
    expect(body.issues[0].message).toMatch(/one of 0, 1, all/);
  });

  it('answers 400 naming verify when the record check is asked of the kafkajs driver', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/runs',
      payload: { scenario: { verify: true, duration: '3s' } },
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.issues).toEqual([
      {
        path: 'verify',
        message:
          'verify: true needs driver: native, whose producers mark each record (driver is kafkajs; --set driver=native)',
      },
    ]);
  });

  it('names a field broken by a --set override', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/runs',
      payload: { path: 'quickstart.yaml', set: ['topics.partitions=0'] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().issues.map((i: { path: string }) => i.path)).toEqual(['topics.partitions']);
  });

  it('names producers.messageSize.payloadFile for /dev/zero, a device it does not read', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/runs',
      payload: { scenario: { producers: { messageSize: { payloadFile: '/dev/zero' } }, duration: '3s' } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().issues).toEqual([
      {
        path: 'producers.messageSize.payloadFile',
        message:
          '/dev/zero is a character device; a payload file must be a regular file of at most the largest message (16777216 bytes, 16 MiB)',
      },
    ]);
  });

  it('names topics.count for more partition replicas than the bundled broker hosts', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/runs',
      payload: { scenario: { topics: { count: 200_000, partitions: 10_000 } } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().issues).toEqual([
      {
        path: 'topics.count',
        message:
          '200000 topics × 10000 partitions × RF 1 on 1 node = 2,000,000,000 partition replicas per node; the bundled broker hosts at most 150,000',
      },
    ]);
  });

  it('names the fault field: an unknown action, a node the cluster lacks, a bundled-only kind elsewhere', async () => {
    const post = (scenario: unknown) => call({ method: 'POST', url: '/api/runs', payload: { scenario } });
    const unknown = await post({ faults: [{ at: '1s', action: 'partition', node: 1 }] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().issues).toEqual([
      {
        path: 'faults[0].action',
        message:
          'must be one of kill, pause, restart, isolate, heal, slow-disk, rolling-restart, preferred-leaders, command (got "partition")',
      },
    ]);
    const missing = await post({
      cluster: { nodes: 3 },
      faults: [
        { at: '1s', action: 'isolate', node: 1 },
        { at: '1s', action: 'heal', node: 1 },
        { at: '2s', action: 'slow-disk', node: 4, delay: '5ms' },
      ],
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().issues).toEqual([
      { path: 'faults[2].node', message: 'node 4 does not exist: cluster.nodes is 3' },
    ]);
    const kafka = await post({
      target: 'kafka',
      faults: [{ at: '1s', action: 'slow-disk', node: 1, delay: '5ms' }],
    });
    expect(kafka.statusCode).toBe(400);
    expect(kafka.json().issues.map((i: { path: string }) => i.path)).toEqual(['faults[0].action']);
  });

  it('reports a YAML syntax error', async () => {
    const res = await call({ method: 'POST', url: '/api/runs', payload: { yaml: 'producers: [1, 2' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().issues[0].message).toMatch(/not valid YAML or JSON/);
  });

  it('refuses a body with no scenario, or with a field it does not know', async () => {
    const none = await call({ method: 'POST', url: '/api/runs', payload: { set: ['producers.acks=all'] } });
    expect(none.statusCode).toBe(400);
    expect(none.json().error).toMatch(/exactly one of scenario/);
    const extra = await call({ method: 'POST', url: '/api/runs', payload: { yaml: 'name: x', force: true } });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().error).toMatch(/additional properties/);
  });
});

describe('target profiles', () => {
  const profile = {
    name: 'shared',
    bootstrap: 'k1.example:9093',
    tls: { ca: '/etc/kafka/ca.pem' },
    sasl: { mechanism: 'scram-sha-256', username: 'bench', password: 'Very-secret-1' },
    maxRate: 1000,
  };

  it('are created, listed and deleted, and never answered with their secrets', async () => {
    const created = await call({ method: 'POST', url: '/api/profiles', payload: profile });
    expect(created.statusCode).toBe(201);
    expect(created.json().sasl).toEqual({
      mechanism: 'scram-sha-256',
      username: 'bench',
      password: '********',
    });
    expect(created.json().tls).toEqual({ ca: '/etc/kafka/ca.pem', rejectUnauthorized: true });
    const file = join(ws.dir, 'profiles', 'shared.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toContain('Very-secret-1');

    const list = await call({ method: 'GET', url: '/api/profiles' });
    expect(list.json().map((p: { name: string }) => p.name)).toEqual(['shared']);
    expect(list.body).not.toContain('Very-secret-1');

    const again = await call({ method: 'POST', url: '/api/profiles', payload: profile });
    expect(again.statusCode).toBe(409);
    expect(again.body).not.toContain('Very-secret-1');
    const replaced = await call({
      method: 'POST',
      url: '/api/profiles?replace=true',
      payload: { ...profile, maxRate: 500 },
    });
    expect(replaced.json().maxRate).toBe(500);
  });

  it('answers 400 naming each bad field', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/profiles',
      payload: {
        name: 'bundled',
        bootstrap: 'no port',
        sasl: { mechanism: 'md5', username: 'u', password: 'p' },
      },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid profile');
    expect(res.json().issues.map((i: { path: string }) => i.path)).toEqual([
      'name',
      'bootstrap',
      'sasl.mechanism',
    ]);
  });

  it('an OAUTHBEARER profile is answered with where its token comes from, and its mistakes are named', async () => {
    const oauth = {
      name: 'oidc',
      bootstrap: 'k:9094',
      tls: true,
      sasl: { mechanism: 'oauthbearer', tokenFile: '/run/t.jwt' },
    };
    const created = await call({ method: 'POST', url: '/api/profiles', payload: oauth });
    expect(created.statusCode).toBe(201);
    expect(created.json().sasl).toEqual({ mechanism: 'oauthbearer', tokenFile: '/run/t.jwt' });
    const both = await call({
      method: 'POST',
      url: '/api/profiles?replace=true',
      payload: { ...oauth, sasl: { ...oauth.sasl, tokenCommand: 'cat /run/t.jwt' } },
    });
    expect(both.statusCode).toBe(400);
    expect(both.json().issues).toEqual([
      { path: 'sasl.tokenCommand', message: 'set sasl.tokenFile or sasl.tokenCommand, not both' },
    ]);
    expect((await call({ method: 'DELETE', url: '/api/profiles/oidc' })).statusCode).toBe(200);
  });

  it('a profile is answered with its agents, their TLS, its metrics endpoints and its token masked', async () => {
    const fleet = {
      name: 'fleet',
      bootstrap: 'k:9092',
      agents: [{ address: '10.0.0.5:7755', roles: ['producers'] }, '10.0.0.6:7755'],
      agentToken: 's3cret-token',
      agentTls: { insecure: true },
      metrics: [{ url: 'http://k:9404/metrics', kind: 'kafka-jmx' }],
    };
    const created = await call({ method: 'POST', url: '/api/profiles', payload: fleet });
    expect(created.statusCode, created.body).toBe(201);
    const listed = (await call({ method: 'GET', url: '/api/profiles' })).json() as Record<string, unknown>[];
    for (const answer of [
      created.json() as Record<string, unknown>,
      listed.find((p) => p.name === 'fleet'),
    ]) {
      expect(answer?.agents).toEqual([
        { address: '10.0.0.5:7755', roles: ['producers'] },
        { address: '10.0.0.6:7755', roles: ['producers', 'consumers'] },
      ]);
      expect(answer?.agentTls).toEqual({ insecure: true });
      expect(answer?.metrics).toEqual([{ url: 'http://k:9404/metrics', kind: 'kafka-jmx' }]);
      expect(answer?.agentToken).not.toBe('s3cret-token');
    }
    expect(JSON.stringify(listed)).not.toContain('s3cret-token');
    expect((await call({ method: 'DELETE', url: '/api/profiles/fleet' })).statusCode).toBe(200);
  });

  // (Both drivers speak TLS and SASL now, so the driver is no longer refused for a SASL profile.)
  it('a run on a profile is checked against it: the rate has a ceiling', async () => {
    const fast = await call({
      method: 'POST',
      url: '/api/runs',
      payload: {
        scenario: {
          duration: '3s',
          producers: { rate: 800 },
          sweep: { knob: 'target', values: ['bundled', 'shared'] },
        },
      },
    });
    expect(fast.statusCode).toBe(400);
    expect(fast.json().issues).toEqual([
      { path: 'producers.rate', message: expect.stringContaining('above the rate ceiling of 500 records/s') },
    ]);
    expect(fast.json().issues[0].message).toContain('(in run 2,');
    const unknown = await call({
      method: 'POST',
      url: '/api/runs',
      payload: { scenario: { target: 'nowhere' } },
    });
    expect(unknown.json().issues[0]).toMatchObject({ path: 'target' });
  });

  it('are deleted by name', async () => {
    expect((await call({ method: 'DELETE', url: '/api/profiles/shared' })).json()).toEqual({
      deleted: 'shared',
    });
    expect((await call({ method: 'DELETE', url: '/api/profiles/shared' })).statusCode).toBe(404);
    expect((await call({ method: 'GET', url: '/api/profiles' })).json()).toEqual([]);
  });
});

describe('request guard', () => {
  it('refuses a Host header that is not this server on loopback', async () => {
    for (const host of ['evil.example:7420', '127.0.0.1:9999', 'localhost', '0.0.0.0:7420']) {
      const res = await app.inject({ method: 'GET', url: '/api/health', headers: { host } });
      expect(res.statusCode, host).toBe(403);
    }
  });

  it('accepts localhost and [::1] with the right port', async () => {
    for (const host of [`localhost:${PORT}`, `[::1]:${PORT}`]) {
      const res = await app.inject({ method: 'GET', url: '/api/health', headers: { host } });
      expect(res.statusCode, host).toBe(200);
    }
  });

  it('refuses a request sent from another origin', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/runs',
      headers: { origin: 'http://evil.example' },
      payload: { yaml: 'name: x' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatch(/cross-origin/);
  });

  it('accepts a request from its own origin', async () => {
    const res = await call({ method: 'GET', url: '/api/health', headers: { origin: `http://${HOST}` } });
    expect(res.statusCode).toBe(200);
  });
});

describe('runs that do not exist', () => {
  it.each([
    ['GET', '/api/runs/abcdef0123'],
    ['GET', '/api/runs/abcdef0123/samples'],
    ['GET', '/api/runs/abcdef0123/samples.csv'],
    ['GET', '/api/runs/abcdef0123/events'],
    ['DELETE', '/api/runs/abcdef0123'],
    ['POST', '/api/runs/abcdef0123/stop'],
  ] as const)('%s %s answers 404', async (method, url) => {
    const res = await call({ method, url });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'no run abcdef0123' });
  });

  it('answers 404 in JSON for an unknown API path', async () => {
    const res = await call({ method: 'GET', url: '/api/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatch(/not found/);
  });
});

describe('stored runs', () => {
  it('lists, shows, exports and deletes a run from the history', async () => {
    const stored = await storeFinishedRun(ws.history, 'aa11bb22cc33', 'stored run');

    const list = await call({ method: 'GET', url: '/api/runs?status=completed&search=stored' });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject([
      { id: stored.id, name: 'stored run', status: 'completed', driver: 'kafkajs' },
    ]);

    const byPrefix = await call({ method: 'GET', url: '/api/runs/aa11bb' });
    expect(byPrefix.statusCode).toBe(200);
    expect(byPrefix.json()).toMatchObject({
      id: stored.id,
      scenario: { name: 'stored run', duration: '3s' },
      environment: { cpuModel: 'test cpu', bootstrap: '127.0.0.1:9092' },
      summary: { produced: { recordsPerSec: 1100, wireMbPerSec: null } },
    });

    const samples = await call({ method: 'GET', url: `/api/runs/${stored.id}/samples` });
    expect(samples.json().map((s: { producedRecords: number }) => s.producedRecords)).toEqual([
      500, 1000, 1200,
    ]);

    const csv = await call({ method: 'GET', url: `/api/runs/${stored.id}/samples.csv` });
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="kbench-${stored.id}.csv"`);
    expect(csv.body.trim().split('\n')).toHaveLength(4);

    const stop = await call({ method: 'POST', url: `/api/runs/${stored.id}/stop` });
    expect(stop.statusCode).toBe(409);

    const del = await call({ method: 'DELETE', url: `/api/runs/${stored.id}` });
    expect(del.json()).toEqual({ deleted: stored.id });
    expect((await call({ method: 'GET', url: `/api/runs/${stored.id}` })).statusCode).toBe(404);
  });

  it('returns the whole stored summary: load generator figures and a find-max search', async () => {
    const stored = await storeFinishedRun(ws.history, 'ab12cd34ef56', 'searched run', { finish: false });
    const latency = {
      count: 10,
      p50: 1,
      p75: 2,
      p95: 3,
      p99: 4,
      p999: 5,
      p9999: 6,
      max: 7,
      mean: 2,
      worst10Mean: 5,
    };
    const summary = {
      measuredSeconds: 2,
      produced: { records: 2000, recordsPerSec: 1000, mbPerSec: 0.1, wireMbPerSec: 0.12, errors: 0 },
      consumed: { records: 2000, recordsPerSec: 1000, mbPerSec: 0.1 },
      publishLatencyMs: latency,
      endToEndLatencyMs: latency,
      client: { cpuCores: 1.5, includesBroker: true, producerBusy: 0.97, consumerBusy: null },
      findMax: {
        rate: 1000,
        trials: [
          {
            rate: null,
            achievedPerSec: 1200,
            publishP99Ms: 4,
            backlogGrowth: 0,
            errors: 0,
            pass: true,
            reason: 'ok',
          },
        ],
      },
    };
    await ws.history.finishRun(stored.id, {
      status: 'completed',
      summary,
      error: null,
      finishedAt: new Date().toISOString(),
    });
    const res = await call({ method: 'GET', url: `/api/runs/${stored.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json().summary).toEqual(summary);
  });

  it('replays a stored run as events and ends the stream', async () => {
    const stored = await storeFinishedRun(ws.history, 'dd44ee55ff66', 'replayed run');
    const res = await call({ method: 'GET', url: `/api/runs/${stored.id}/events` });
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const events = [...res.body.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events).toEqual(['sample', 'sample', 'sample', 'end']);
    const end = /event: end\ndata: (.*)\n/.exec(res.body)?.[1];
    expect(JSON.parse(end ?? '{}')).toMatchObject({ id: stored.id, status: 'completed' });
  });

  it('follows a run another process is recording until it ends', async () => {
    const id = '0123abcd4567';
    const running = await storeFinishedRun(ws.history, id, 'cli run', { finish: false });
    const stream = call({ method: 'GET', url: `/api/runs/${id}/events` });
    // The other process finishes the run while the stream is open.
    await ws.history.appendSamples(id, [sample(4, 900)]);
    await ws.history.finishRun(id, {
      status: 'stopped',
      summary: null,
      error: null,
      finishedAt: new Date().toISOString(),
    });
    const res = await stream;
    const events = [...res.body.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events).toEqual(['sample', 'sample', 'sample', 'sample', 'end']);
    expect(JSON.parse(/event: end\ndata: (.*)\n/.exec(res.body)?.[1] ?? '{}')).toMatchObject({
      id: running.id,
      status: 'stopped',
    });
  });

  it('refuses a bad status filter', async () => {
    const res = await call({ method: 'GET', url: '/api/runs?status=bogus' });
    expect(res.statusCode).toBe(400);
  });
});

describe('tags and notes', () => {
  it('are set on a stored run and found by search', async () => {
    const run = await storeFinishedRun(ws.history, 'ba11cc22dd33', 'tagged run');
    const res = await call({
      method: 'PATCH',
      url: `/api/runs/${run.id}`,
      payload: { tags: ['baseline', 'acks=1'], notes: 'before the fix' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ tags: ['baseline', 'acks=1'], notes: 'before the fix' });
    const found = await call({ method: 'GET', url: '/api/runs?search=baseline' });
    expect(found.json().map((r: { id: string }) => r.id)).toContain(run.id);
  });

  it('refuses a tag with a comma, naming the field', async () => {
    const run = await storeFinishedRun(ws.history, 'bb11cc22dd33', 'bad tag');
    const res = await call({ method: 'PATCH', url: `/api/runs/${run.id}`, payload: { tags: ['a,b'] } });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toContain('tags');
  });
});

describe('chart images', () => {
  it('draws one run’s charts as SVG and PNG, named for download', async () => {
    const run = await storeFinishedRun(ws.history, 'cc11dd22ee33', 'charted run');
    const svg = await call({ method: 'GET', url: `/api/charts/throughput.svg?ids=${run.id}` });
    expect(svg.statusCode).toBe(200);
    expect(svg.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(svg.headers['content-disposition']).toBe(`attachment; filename="kbench-${run.id}-throughput.svg"`);
    expect(svg.body.startsWith('<svg')).toBe(true);
    const png = await call({ method: 'GET', url: `/api/charts/latency.png?ids=${run.id}` });
    expect(png.statusCode).toBe(200);
    expect(png.rawPayload.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  });

  it('draws comparison charts for several runs', async () => {
    const a = await storeFinishedRun(ws.history, 'dd11ee22ff33', 'first');
    const b = await storeFinishedRun(ws.history, 'ee11ff22aa33', 'second');
    const res = await call({ method: 'GET', url: `/api/charts/publish-percentiles.svg?ids=${a.id},${b.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('first');
    expect(res.body).toContain('second');
  });

  it('writes a self-contained HTML report of a comparison', async () => {
    const a = await storeFinishedRun(ws.history, 'ab11ee22ff33', 'report one');
    const b = await storeFinishedRun(ws.history, 'ac11ff22aa33', 'report two');
    const res = await call({ method: 'GET', url: `/api/compare/report.html?ids=${a.id},${b.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('report one');
    expect(res.body).toContain('<svg');
    expect(res.body).not.toMatch(/<script|src="http/);
  });

  it('answers 404 for an unknown chart, naming the ones there are', async () => {
    const run = await storeFinishedRun(ws.history, 'ff11aa22bb33', 'one');
    const res = await call({ method: 'GET', url: `/api/charts/nope.svg?ids=${run.id}` });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toContain('throughput');
  });

  it('answers 400 for a bad file name or id list', async () => {
    expect((await call({ method: 'GET', url: '/api/charts/throughput.gif?ids=aa' })).statusCode).toBe(400);
    expect((await call({ method: 'GET', url: '/api/charts/throughput.svg?ids=a;b' })).statusCode).toBe(400);
  });
});
