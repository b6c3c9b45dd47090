// One run through the real engine and the bundled broker, driven over HTTP as the web app drives it.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningServer, startServer } from '../src/server.js';
import { makeWorkspace, type Workspace } from './fixtures.js';

let ws: Workspace;
let server: RunningServer;

beforeAll(async () => {
  ws = await makeWorkspace();
  server = await startServer({
    history: ws.history,
    scenariosDir: ws.scenariosDir,
    profilesDir: join(ws.dir, 'profiles'),
    port: 0,
  });
});

afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

interface ServerEvent {
  event: string;
  data: unknown;
}

function parseBlock(block: string): ServerEvent | undefined {
  const event = /^event: (.*)$/m.exec(block)?.[1];
  const data = /^data: (.*)$/m.exec(block)?.[1];
  return event === undefined || data === undefined ? undefined : { event, data: JSON.parse(data) as unknown };
}

/** Reads a server-sent event stream to its end, calling `onEvent` as each event arrives. */
async function readEvents(url: string, onEvent: (e: ServerEvent) => void = () => {}): Promise<ServerEvent[]> {
  const res = await fetch(url);
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const events: ServerEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const parsed = parseBlock(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (parsed) {
        events.push(parsed);
        onEvent(parsed);
      }
      end = buffer.indexOf('\n\n');
    }
  }
  return events;
}

async function startRun(body: unknown): Promise<Response> {
  return fetch(`${server.url}/api/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.url },
    body: JSON.stringify(body),
  });
}

describe('a real run', () => {
  it('runs a tiny scenario on the bundled broker to completion and stores its samples', async () => {
    const start = await fetch(`${server.url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url },
      body: JSON.stringify({
        scenario: {
          name: 'tiny',
          duration: '3s',
          warmup: '1s',
          producers: { count: 1 },
          consumers: { count: 1 },
        },
      }),
    });
    expect(start.status).toBe(201);
    const { id } = (await start.json()) as { id: string };

    // A second start while this one runs is refused.
    const second = await startRun({ path: 'quickstart.yaml' });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: string }).error).toContain(id);

    const events = await readEvents(`${server.url}/api/runs/${id}/events`);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('progress');
    expect(names).toContain('sample');
    expect(names.at(-1)).toBe('end');
    const end = events.at(-1)?.data as { status: string; summary: { produced: { recordsPerSec: number } } };
    expect(end.status).toBe('completed');
    expect(end.summary.produced.recordsPerSec).toBeGreaterThan(0);

    const record = (await (await fetch(`${server.url}/api/runs/${id}`)).json()) as { status: string };
    expect(record.status).toBe('completed');
    const samples = (await (await fetch(`${server.url}/api/runs/${id}/samples`)).json()) as {
      producedRecords: number;
    }[];
    expect(samples.length).toBeGreaterThanOrEqual(2);
    expect(samples.some((s) => s.producedRecords > 0)).toBe(true);
  });

  it('stops a run on request and stores it as stopped', async () => {
    const start = await startRun({ path: 'quickstart.yaml', set: ['duration=120s'] });
    expect(start.status).toBe(201);
    const { id } = (await start.json()) as { id: string };
    let stopAnswer: Promise<Response> | undefined;
    const events = await readEvents(`${server.url}/api/runs/${id}/events`, (e) => {
      // Stop as soon as load is measured: the first sample proves the run is under way.
      if (e.event === 'sample' && !stopAnswer) {
        stopAnswer = fetch(`${server.url}/api/runs/${id}/stop`, {
          method: 'POST',
          headers: { origin: server.url },
        });
      }
    });
    expect((await stopAnswer)?.status).toBe(202);
    expect(events.at(-1)).toMatchObject({ event: 'end', data: { id, status: 'stopped' } });
    const record = (await (await fetch(`${server.url}/api/runs/${id}`)).json()) as {
      status: string;
      source: string;
    };
    expect(record.status).toBe('stopped');
    expect(record.source).toMatch(/quickstart\.yaml$/);
  });

  it('lets go of a live run when its event stream is closed', async () => {
    const start = await startRun({ path: 'quickstart.yaml', set: ['duration=120s'] });
    const { id } = (await start.json()) as { id: string };
    const run = server.app.runs.get(id);
    expect(run).toBeDefined();
    const before = run!.listenerCount('sample');

    const abort = new AbortController();
    const res = await fetch(`${server.url}/api/runs/${id}/events`, { signal: abort.signal });
    const reader = res.body!.getReader();
    await reader.read(); // the stream is open and subscribed
    expect(run!.listenerCount('sample')).toBe(before + 1);
    abort.abort();
    await vi.waitFor(() => expect(run!.listenerCount('sample')).toBe(before), { timeout: 10_000 });

    run!.stop();
    expect((await run!.done).status).toBe('stopped');
  });
});

describe('a stored run over HTTP', () => {
  it('returns the load generator figures and the executed faults', async () => {
    const start = await startRun({
      scenario: {
        name: 'paused node',
        duration: '3s',
        warmup: '1s',
        cluster: { nodes: 2 },
        topics: { partitions: 2, replicationFactor: 2 },
        producers: { count: 1, rate: 1000 },
        faults: [{ at: '1500ms', action: 'pause', node: 2, for: '300ms' }],
      },
    });
    expect(start.status).toBe(201);
    const { id } = (await start.json()) as { id: string };
    await readEvents(`${server.url}/api/runs/${id}/events`);
    const record = (await (await fetch(`${server.url}/api/runs/${id}`)).json()) as {
      status: string;
      error: string | null;
      summary: { client?: { cpuCores: number; includesBroker: boolean; producerBusy: number | null } };
      faults?: { action: string; node: number | null; durationMs: number | null; error: string | null }[];
    };
    expect(record.status, String(record.error)).toBe('completed');
    expect(record.summary.client?.cpuCores).toBeGreaterThan(0);
    expect(record.summary.client?.includesBroker).toBe(true);
    expect(record.summary.client?.producerBusy).toBeGreaterThan(0);
    expect(record.faults).toEqual([
      expect.objectContaining({ action: 'pause', node: 2, durationMs: 300, error: null }),
    ]);
  });

  it('says failed, and why, for a run that measured nothing', async () => {
    // Fifty records go out long before the 30 s warm-up ends.
    const start = await startRun({ scenario: { name: 'all in warm-up', records: 50, warmup: '30s' } });
    expect(start.status).toBe(201);
    const { id } = (await start.json()) as { id: string };
    const events = await readEvents(`${server.url}/api/runs/${id}/events`);
    expect(events.at(-1)).toMatchObject({ event: 'end', data: { id, status: 'failed' } });
    const record = (await (await fetch(`${server.url}/api/runs/${id}`)).json()) as {
      status: string;
      error: string | null;
      summary: unknown;
    };
    expect(record.status).toBe('failed');
    expect(record.error).toMatch(/no measured sample: all 50 records were sent/);
    expect(record.summary).toBeNull();
  });
});

interface SweepInfo {
  knob: string;
  total: number;
  ids: string[];
  finished: boolean;
  error: string | null;
}

/** The sweep run `id` belongs to, once it has ended. */
async function finishedSweep(id: string): Promise<SweepInfo> {
  const url = `${server.url}/api/runs/${id}/sweep`;
  return vi.waitFor(
    async () => {
      const sweep = (await (await fetch(url)).json()) as SweepInfo;
      expect(sweep.finished).toBe(true);
      return sweep;
    },
    { timeout: 90_000, interval: 500 },
  );
}

describe('a sweep started over HTTP', () => {
  it('runs one stored run per value, in turn, and says which ones', async () => {
    const res = await startRun({
      scenario: { name: 'sizes', records: 300, sweep: { knob: 'producers.messageSize', values: [10, 200] } },
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const sweep = await finishedSweep(id);
    expect(sweep).toMatchObject({ knob: 'producers.messageSize', total: 2, error: null });
    expect(sweep.ids[0]).toBe(id);
    const runs = await Promise.all(
      sweep.ids.map(
        async (runId) =>
          (await (await fetch(`${server.url}/api/runs/${runId}`)).json()) as {
            status: string;
            scenario: { producers: { messageSize: number } };
          },
      ),
    );
    expect(runs.map((r) => r.scenario.producers.messageSize)).toEqual([10, 200]);
    expect(runs.every((r) => r.status === 'completed')).toBe(true);
  });

  it('takes a new run as soon as the last one reads completed, as a person clicking Run again would', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await startRun({ scenario: { name: `again ${i}`, records: 200 } });
      expect(res.status, await res.clone().text()).toBe(201);
      const { id } = (await res.json()) as { id: string };
      for (;;) {
        const record = (await (await fetch(`${server.url}/api/runs/${id}`)).json()) as { status: string };
        if (record.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  });

  it('ends at a run that fails, saying which, and frees the run slot', async () => {
    // Nothing listens on port 1: the first point's run fails to connect.
    const profile = await fetch(`${server.url}/api/profiles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url },
      body: JSON.stringify({ name: 'nowhere', bootstrap: '127.0.0.1:1' }),
    });
    expect(profile.status).toBe(201);
    const res = await startRun({
      scenario: { name: 'targets', records: 300, sweep: { knob: 'target', values: ['nowhere', 'bundled'] } },
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const sweep = await finishedSweep(id);
    expect(sweep.ids).toEqual([id]);
    expect(sweep.error).toBe('failed at run 1 of 2');
    const run = (await (await fetch(`${server.url}/api/runs/${id}`)).json()) as { status: string };
    expect(run.status).toBe('failed');
    const next = await startRun({ scenario: { name: 'after', records: 100 } });
    expect(next.status).toBe(201);
  }, 120_000);

  it('ends at a run that measured nothing', async () => {
    const body = {
      scenario: { name: 'warm-ups', records: 50, sweep: { knob: 'warmup', values: ['30s', '0s'] } },
    };
    // The run the test before started may still hold the run slot.
    const res = await vi.waitFor(
      async () => {
        const answer = await startRun(body);
        expect(answer.status).not.toBe(409);
        return answer;
      },
      { timeout: 60_000, interval: 500 },
    );
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const sweep = await finishedSweep(id);
    expect(sweep.ids).toEqual([id]);
    expect(sweep.error).toBe('failed at run 1 of 2');
  });
});
