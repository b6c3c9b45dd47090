// The cluster's own metrics beside the client's, for real: an Apache Kafka 4.3.1 node started with
// the Prometheus JMX exporter java agent (from Maven Central), named in a profile's `metrics`; runs
// go to a real DuckDB history, and the stored samples carry the scraped node's figures. Then the
// standalone kbench-broker started with --metrics, read as kind auto; and a second endpoint, a plain
// HTTP server on loopback that stops answering mid-run, which leaves gaps while the run completes.

import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type ApacheKafka, freePort, startApacheKafka } from '@kbench/apache-kafka';
import { startBundledBroker } from '@kbench/broker-launcher';
import { History } from '@kbench/history';
import { parseScenario, type RunRecord, type Sample } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileStore, startRecordedRun } from '../src/index.js';

let workDir: string;
let kafka: ApacheKafka;
let history: History;
let profiles: ProfileStore;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-cluster-metrics-'));
  kafka = await startApacheKafka({ dataDir: path.join(workDir, 'kafka'), jmxExporter: true });
  history = await History.open(path.join(workDir, 'history.duckdb'));
  profiles = new ProfileStore(path.join(workDir, 'profiles'));
}, 600_000);

afterAll(async () => {
  await kafka?.stop();
  await rm(workDir, { recursive: true, force: true });
});

async function record(profile: string): Promise<{ run: RunRecord; samples: Sample[] }> {
  const scenario = parseScenario({
    name: 'cluster-metrics',
    target: profile,
    driver: 'kafkajs',
    duration: '6s',
    topics: { partitions: 2 },
    producers: { count: 1, rate: 2000, messageSize: 500 },
    consumers: { count: 1 },
  });
  const live = await startRecordedRun(scenario, { history, workDir, profiles });
  const run = await live.done;
  return { run, samples: await history.getSamples(run.id) };
}

describe("Apache Kafka's JMX exporter as a profile's metrics endpoint", () => {
  let run: RunRecord;
  let samples: Sample[];

  beforeAll(async () => {
    const url = kafka.nodes[0]?.metricsUrl;
    if (!url) throw new Error('started without the exporter');
    profiles.save({ name: 'jmx', bootstrap: kafka.bootstrap, metrics: [{ url, node: 'kafka-1' }] });
    ({ run, samples } = await record('jmx'));
  }, 300_000);

  it('stores, per sample, the node figures read from the exporter: bytes in, CPU, produce latency', () => {
    expect(run.status, String(run.error)).toBe('completed');
    const scraped = samples.flatMap((s) => s.broker ?? []).filter((n) => n.source === 'kafka-jmx');
    expect(scraped.length).toBeGreaterThanOrEqual(3);
    for (const n of scraped) expect(n).toMatchObject({ node: 1, name: 'kafka-1', underReplicated: 0 });
    expect(Math.max(...scraped.map((n) => n.bytesInPerSec))).toBeGreaterThan(0);
    expect(Math.max(...scraped.map((n) => n.bytesOutPerSec))).toBeGreaterThan(0);
    expect(Math.max(...scraped.map((n) => n.cpuCores ?? 0))).toBeGreaterThan(0);
    expect(scraped.some((n) => typeof n.produceP99Ms === 'number')).toBe(true);
  });

  it('lists the endpoint in the stored run: its kind found by auto, its scrapes and none failed', () => {
    expect(run.environment.metrics).toEqual([
      expect.objectContaining({
        url: kafka.nodes[0]?.metricsUrl,
        node: 1,
        name: 'kafka-1',
        kind: 'kafka-jmx',
        failed: 0,
        lastError: null,
        missing: [],
      }),
    ]);
    expect(run.environment.metrics?.[0]?.scrapes).toBeGreaterThanOrEqual(samples.length);
  });
});

describe("kbench-broker's own /metrics (kbench-broker --metrics) as a profile's endpoint", () => {
  let run: RunRecord;
  let samples: Sample[];

  beforeAll(async () => {
    const metricsPort = await freePort();
    const broker = await startBundledBroker({
      dataDir: path.join(workDir, 'kbench-broker'),
      args: ['--metrics', `127.0.0.1:${metricsPort}`],
    });
    try {
      profiles.save({
        name: 'kb',
        bootstrap: broker.bootstrap,
        metrics: [{ url: `http://127.0.0.1:${metricsPort}/metrics` }],
      });
      ({ run, samples } = await record('kb'));
    } finally {
      await broker.stop();
    }
  }, 300_000);

  it('is read as kbench: bytes in and out, under-replicated partitions and CPU per sample; no produce latency', () => {
    expect(run.status, String(run.error)).toBe('completed');
    const scraped = samples.flatMap((s) => s.broker ?? []).filter((n) => n.source === 'kbench');
    expect(scraped.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...scraped.map((n) => n.bytesInPerSec))).toBeGreaterThan(0);
    expect(Math.max(...scraped.map((n) => n.bytesOutPerSec))).toBeGreaterThan(0);
    expect(Math.max(...scraped.map((n) => n.cpuCores ?? 0))).toBeGreaterThan(0);
    for (const n of scraped) expect(n).toMatchObject({ underReplicated: 0, produceP99Ms: null });
    expect(run.environment.metrics?.[0]).toMatchObject({
      kind: 'kbench',
      failed: 0,
      missing: ['produceLatency'],
    });
  });
});

describe('an endpoint that stops answering mid-run', () => {
  let run: RunRecord;
  let samples: Sample[];
  let answered = 0;

  beforeAll(async () => {
    // Answers the first three scrapes (kbench-broker's names), then holds every request unanswered.
    const server = http.createServer((_req, res) => {
      answered += 1;
      if (answered > 3) return;
      res.end(
        `kbench_broker_bytes_in_total{node="1"} ${answered * 1000}\nprocess_cpu_seconds_total ${answered}\n`,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      profiles.save({
        name: 'stops',
        bootstrap: kafka.bootstrap,
        metrics: [
          { url: kafka.nodes[0]?.metricsUrl ?? '', kind: 'kafka-jmx' },
          { url: `http://127.0.0.1:${port}/metrics`, node: 'flaky' },
        ],
      });
      ({ run, samples } = await record('stops'));
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 300_000);

  it('completes, with the figures of the endpoint while it answered and gaps after', () => {
    expect(run.status, String(run.error)).toBe('completed');
    const flaky = samples.map((s) => s.broker?.find((n) => n.name === 'flaky'));
    expect(flaky.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    expect(flaky.at(-1)).toBeUndefined();
    // The other endpoint is read on every tick meanwhile.
    expect(
      samples.filter((s) => s.broker?.some((n) => n.source === 'kafka-jmx')).length,
    ).toBeGreaterThanOrEqual(samples.length - 1);
    const stored = run.environment.metrics?.find((m) => m.name === 'flaky');
    expect(stored).toMatchObject({ node: 2, kind: 'kbench' });
    expect(stored?.failed).toBeGreaterThanOrEqual(2);
    expect(stored?.lastError).toMatch(/no answer within 800 ms/);
  });
});
