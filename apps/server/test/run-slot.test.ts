// The run slot between the server and a CLI run (issue 14): a start while `kbench run` holds the slot
// is a 409 naming it, and Stop on that run stops the CLI process as Ctrl-C does. The CLI is the real
// built `kbench` (apps/cli/dist), spawned with no TTY and the server's history folder as KBENCH_HOME.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../src/server.js';
import { makeWorkspace, type Workspace } from './fixtures.js';

const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const KBENCH = join(REPO, 'apps/cli/dist/main.js');

let ws: Workspace;
let server: RunningServer;
let cli: ChildProcess | undefined;

beforeAll(async () => {
  if (!existsSync(KBENCH))
    throw new Error(`${KBENCH} is missing: build the CLI first (npm run build -w kbench)`);
  ws = await makeWorkspace();
  server = await startServer({
    history: ws.history,
    scenariosDir: ws.scenariosDir,
    profilesDir: join(ws.dir, 'profiles'),
    port: 0,
  });
});

afterAll(async () => {
  if (cli && cli.exitCode === null) cli.kill('SIGKILL');
  await server?.close();
  await ws?.remove();
});

const post = (path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { origin: server.url, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** `kbench run` in the server's KBENCH_HOME; resolves with its run id once the run is stored. */
function startCliRun(
  args: string[],
): Promise<{ id: string; exited: Promise<number | null>; stderr: () => string }> {
  const child = spawn(process.execPath, [KBENCH, 'run', ...args], {
    cwd: REPO,
    env: { ...process.env, KBENCH_HOME: ws.dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cli = child;
  let stderr = '';
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return new Promise((done, fail) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const id = /run ([0-9a-f]{12}): /.exec(stderr)?.[1];
      if (id) done({ id, exited, stderr: () => stderr });
    });
    void exited.then((code) => fail(new Error(`kbench run exited ${code} before starting:\n${stderr}`)));
  });
}

describe('a run started by the CLI', () => {
  it('holds the slot: a start is a 409 naming it, concurrent: true runs beside it, Stop stops the CLI cleanly', async () => {
    const run = await startCliRun(['scenarios/quickstart.yaml', '--set', 'duration=120s']);

    const refused = await post('/api/runs', { path: 'quickstart.yaml' });
    expect(refused.status).toBe(409);
    const { error } = (await refused.json()) as { error: string };
    expect(error).toMatch(
      new RegExp(
        `^another run is going: ${run.id} quickstart \\(kbench run, pid ${cli?.pid}, since \\d\\d:\\d\\d:\\d\\d\\); wait for it, stop it, or pass concurrent: true`,
      ),
    );

    // The override: a run beside it, recorded on both runs.
    const beside = await post('/api/runs', {
      scenario: { name: 'beside', duration: '2s', warmup: '1s' },
      concurrent: true,
    });
    expect(beside.status).toBe(201);
    const besideId = ((await beside.json()) as { id: string }).id;
    const besideEnd = await server.app.runs.get(besideId)?.done;
    expect(besideEnd?.concurrentWith).toEqual([run.id]);
    const getRun = async (id: string) =>
      (await (await fetch(`${server.url}/api/runs/${id}`)).json()) as {
        status: string;
        concurrentWith?: string[];
      };
    expect((await getRun(besideId)).concurrentWith).toEqual([run.id]);
    expect((await getRun(run.id)).concurrentWith).toEqual([besideId]);
    const listed = (await (await fetch(`${server.url}/api/runs`)).json()) as {
      id: string;
      concurrentWith?: string[];
    }[];
    expect(listed.find((r) => r.id === run.id)?.concurrentWith).toEqual([besideId]);

    const owner = (await (await fetch(`${server.url}/api/runs/${run.id}/owner`)).json()) as {
      owner: string;
      stoppable: boolean;
    };
    expect(owner.stoppable).toBe(true);
    expect(owner.owner).toContain(`(kbench run, pid ${cli?.pid}, since`);

    const stop = await post(`/api/runs/${run.id}/stop`);
    expect(stop.status).toBe(202);
    // Stopped as Ctrl-C stops it: the run is stored as stopped and the process exits 0.
    expect(await run.exited, run.stderr()).toBe(0);
    expect(run.stderr()).toContain('stopping');
    expect((await getRun(run.id)).status).toBe('stopped');

    // The slot is free again: the server's own run starts.
    const start = await post('/api/runs', { scenario: { name: 'after', duration: '2s', warmup: '1s' } });
    expect(start.status).toBe(201);
    const { id } = (await start.json()) as { id: string };
    await server.app.runs.get(id)?.done;
  }, 120_000);

  it('a run that has ended offers no Stop', async () => {
    const start = await post('/api/runs', { scenario: { name: 'ended', duration: '2s', warmup: '1s' } });
    const { id } = (await start.json()) as { id: string };
    await server.app.runs.get(id)?.done;
    const owner = (await (await fetch(`${server.url}/api/runs/${id}/owner`)).json()) as {
      stoppable: boolean;
      reason: string;
    };
    expect(owner).toMatchObject({ stoppable: false, reason: 'it has ended (status completed)' });
    const stop = await post(`/api/runs/${id}/stop`);
    expect(stop.status).toBe(409);
  }, 60_000);
});
