// The Prometheus text parser and the scraper on hostile input: bodies too large, lines too long,
// bytes that are not the format, too many series. Each is bounded, reported, and never throws; a
// real HTTP server (node:http on loopback) serves the bodies the scraper reads.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  ClusterMetrics,
  figuresBetween,
  histogramQuantile,
  type MetricsReading,
  readStandardFigures,
} from '../src/cluster-metrics.js';
import { parsePrometheusText } from '../src/prometheus-text.js';

async function serve(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('parsePrometheusText', () => {
  it('reads names, labels with escapes, special values and timestamps; skips comments', () => {
    const text = [
      '# HELP x_total A counter.',
      '# TYPE x_total counter',
      'x_total{a="1",b="q\\"uo\\\\te\\nd"} 12.5 1700000000000',
      'y +Inf',
      'z{} -3e2',
      'w NaN',
      '',
    ].join('\n');
    const parsed = parsePrometheusText(text);
    expect(parsed.badLines).toBe(0);
    expect(parsed.samples[0]).toEqual({ name: 'x_total', labels: { a: '1', b: 'q"uo\\te\nd' }, value: 12.5 });
    expect(parsed.samples[1]?.value).toBe(Number.POSITIVE_INFINITY);
    expect(parsed.samples[2]).toEqual({ name: 'z', labels: {}, value: -300 });
    expect(parsed.samples[3]?.value).toBeNaN();
  });

  it('refuses a line over the limit, counts garbage lines and keeps going', () => {
    const long = `big{l="${'x'.repeat(70 * 1024)}"} 1`;
    const text = [
      'ok 1',
      long,
      '{{{ not a line',
      'name{unclosed="v 1',
      'name{a=1} 2',
      'name 12abc',
      'after 2',
    ].join('\n');
    const parsed = parsePrometheusText(text);
    expect(parsed.samples.map((s) => s.name)).toEqual(['ok', 'after']);
    expect(parsed.longLines).toBe(1);
    expect(parsed.badLines).toBe(4);
    expect(parsed.problems[0]).toMatch(/line 2: longer than 65536 bytes, refused/);
  });

  it('keeps at most maxSeries samples and says how many it dropped', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `s{i="${i}"} ${i}`).join('\n');
    const parsed = parsePrometheusText(text, { limits: { maxSeries: 100 } });
    expect(parsed.samples).toHaveLength(100);
    expect(parsed.droppedSeries).toBe(900);
    expect(parsed.problems.at(-1)).toMatch(/900 samples past the first 100/);
  });

  it('reads only the names asked for, and bounds labels per sample', () => {
    const labels = Array.from({ length: 40 }, (_, i) => `l${i}="v"`).join(',');
    const text = `wanted 1\nother 2\nwanted{${labels}} 3\n`;
    const parsed = parsePrometheusText(text, { keep: (n) => n === 'wanted' });
    expect(parsed.samples).toEqual([{ name: 'wanted', labels: {}, value: 1 }]);
    expect(parsed.problems[0]).toMatch(/more than 32 labels/);
  });

  it('never throws on random bytes', () => {
    for (let i = 0; i < 50; i += 1) {
      const text = randomBytes(20_000).toString('latin1');
      const parsed = parsePrometheusText(text);
      expect(parsed.samples.length + parsed.badLines + parsed.longLines).toBeGreaterThanOrEqual(0);
      expect(parsed.problems.length).toBeLessThanOrEqual(5);
    }
    // A __proto__ label does not reach the object's prototype.
    const parsed = parsePrometheusText('p{__proto__="x",constructor="y"} 1');
    expect(Object.getPrototypeOf(parsed.samples[0]?.labels)).toBe(Object.prototype);
    expect(parsed.samples[0]?.labels).toEqual({ constructor: 'y' });
  });
});

describe('the standard figures', () => {
  const reading = (at: number, extra: Partial<MetricsReading>): MetricsReading => ({
    at,
    kind: 'kbench',
    bytesIn: null,
    bytesOut: null,
    cpuSeconds: null,
    underReplicated: null,
    produceP50Ms: null,
    produceP99Ms: null,
    produceBuckets: null,
    ...extra,
  });

  it('turn counters into rates, and a counter that went down (a restart) counts from zero', () => {
    const a = reading(0, { bytesIn: 1000, bytesOut: 500, cpuSeconds: 10 });
    const b = reading(2000, { bytesIn: 5000, bytesOut: 100, cpuSeconds: 11, underReplicated: 2 });
    const f = figuresBetween(a, b, 1, 'n1');
    expect(f).toMatchObject({ node: 1, name: 'n1', source: 'kbench', underReplicated: 2 });
    expect(f.bytesInPerSec).toBe(2000);
    expect(f.bytesOutPerSec).toBe(50); // reset: 100 bytes since
    expect(f.cpuCores).toBe(0.5);
  });

  it("take a histogram's quantiles over the interval only", () => {
    const before = new Map([
      [0.001, 100],
      [0.01, 100],
      [Number.POSITIVE_INFINITY, 100],
    ]);
    const after = new Map([
      [0.001, 100],
      [0.01, 200],
      [Number.POSITIVE_INFINITY, 200],
    ]);
    // The 100 new observations all lie in (1 ms, 10 ms]: the median interpolates to 5.5 ms.
    expect(histogramQuantile(before, after, 0.5)).toBeCloseTo(0.0055, 6);
    expect(histogramQuantile(after, after, 0.5)).toBeNull();
  });

  it('map each kind: Redpanda by request label, Kafka broker-wide series before per-topic ones', () => {
    const rp = parsePrometheusText(
      [
        'redpanda_kafka_request_bytes_total{redpanda_request="produce"} 700',
        'redpanda_kafka_request_bytes_total{redpanda_request="consume"} 300',
        'redpanda_cpu_busy_seconds_total{shard="0"} 1.5',
        'redpanda_cpu_busy_seconds_total{shard="1"} 2.5',
        'redpanda_kafka_under_replicated_replicas{redpanda_topic="a"} 1',
        'redpanda_kafka_under_replicated_replicas{redpanda_topic="b"} 2',
        'redpanda_kafka_request_latency_seconds_bucket{redpanda_request="produce",le="0.001"} 4',
        'redpanda_kafka_request_latency_seconds_bucket{redpanda_request="produce",le="+Inf"} 5',
      ].join('\n'),
    ).samples;
    expect(readStandardFigures(rp, 'redpanda', 0)).toMatchObject({
      bytesIn: 700,
      bytesOut: 300,
      cpuSeconds: 4,
      underReplicated: 3,
    });
    const kafka = parsePrometheusText(
      [
        'kafka_server_brokertopicmetrics_bytesin_total 900',
        'kafka_server_brokertopicmetrics_bytesin_total{topic="t"} 800',
        'kafka_network_requestmetrics_totaltimems{request="Produce",quantile="0.50"} 3',
        'kafka_network_requestmetrics_totaltimems{request="Produce",quantile="0.99"} 9',
      ].join('\n'),
    ).samples;
    expect(readStandardFigures(kafka, 'kafka-jmx', 0)).toMatchObject({
      bytesIn: 900,
      bytesOut: null,
      produceP50Ms: 3,
      produceP99Ms: 9,
    });
  });
});

describe('the scraper on a hostile endpoint', () => {
  it('cuts a body over the limit, reports it, and still reads the figures before the cut', async () => {
    const logs: string[] = [];
    const head = 'kbench_broker_bytes_in_total{node="1"} 100\nprocess_cpu_seconds_total 1\n';
    let count = 0;
    const server = await serve((_req, res) => {
      count += 1;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(head.replace('100', String(100 * count)));
      // 4 MiB of junk lines after the figures, with a 2 MiB limit.
      const junk = `junk_series{a="${'z'.repeat(1000)}"} 1\n`.repeat(4096);
      res.end(junk);
    });
    try {
      const metrics = new ClusterMetrics(
        [{ url: server.url, kind: 'kbench' }],
        (_l, line) => logs.push(line),
        {
          maxBodyBytes: 2 * 1024 * 1024,
        },
      );
      await metrics.reset();
      const nodes = await new Promise<ReturnType<ClusterMetrics['cut']>>((resolve) =>
        setTimeout(() => resolve(metrics.cut()), 950),
      );
      expect(nodes).toHaveLength(1);
      expect(nodes[0]?.bytesInPerSec).toBeGreaterThan(0);
      expect(logs.some((l) => /answered more than 2097152 bytes/.test(l))).toBe(true);
      expect(metrics.describe()[0]).toMatchObject({ scrapes: 2, failed: 0, kind: 'kbench' });
    } finally {
      await server.close();
    }
  });

  it('records garbage, an error status and a hung endpoint as failed scrapes (gaps), never throwing', async () => {
    let mode: 'garbage' | 'status' | 'hang' = 'garbage';
    const server = await serve((_req, res) => {
      if (mode === 'garbage') res.end(randomBytes(50_000));
      else if (mode === 'status') {
        res.writeHead(500);
        res.end('no');
      }
      // hang: never answers
    });
    try {
      const metrics = new ClusterMetrics([{ url: server.url, kind: 'auto' }], () => {}, { timeoutMs: 300 });
      await metrics.reset();
      expect(metrics.describe()[0]?.lastError).toMatch(/no series of Kafka's JMX exporter/);
      mode = 'status';
      await new Promise((r) => setTimeout(r, 950));
      expect(await metrics.cut()).toEqual([]);
      expect(metrics.describe()[0]?.lastError).toBe('HTTP 500');
      mode = 'hang';
      await new Promise((r) => setTimeout(r, 950));
      expect(await metrics.cut()).toEqual([]);
      expect(metrics.describe()[0]).toMatchObject({ scrapes: 3, failed: 3, kind: null });
      expect(metrics.describe()[0]?.lastError).toMatch(/no answer within 300 ms/);
    } finally {
      await server.close();
    }
  });
});
