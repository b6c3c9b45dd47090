// The cluster's own figures beside the client's: the Prometheus endpoints a profile names are read
// once a second during the run (GET, only the URLs listed), and each endpoint's series are mapped,
// by its kind, to a standard set stored per sample like the bundled broker's per-node figures:
// bytes in and out per second, produce request latency p50/p99, under-replicated partitions, CPU.
// A scrape that fails or times out (the timeout is shorter than the tick) is a gap in the samples,
// counted in the run's environment; it never ends the run.
import type { BrokerNodeSample, MetricsEndpoint, MetricsEndpointRun, MetricsKind } from '@kbench/schema';
import { PROM_LIMITS, type PromSample, parsePrometheusText } from './prometheus-text.js';

export type ScrapedKind = Exclude<MetricsKind, 'auto'>;

/** What one scrape of an endpoint read, before it becomes rates. Null: the endpoint has no such series. */
export interface MetricsReading {
  /** performance.now() when the answer arrived. */
  at: number;
  kind: ScrapedKind;
  bytesIn: number | null;
  bytesOut: number | null;
  cpuSeconds: number | null;
  underReplicated: number | null;
  /** Quantile gauges the endpoint computes itself (Kafka's JMX exporter), in ms. */
  produceP50Ms: number | null;
  produceP99Ms: number | null;
  /** A cumulative latency histogram (Redpanda): upper bound in seconds -> count, for quantiles over the interval. */
  produceBuckets: Map<number, number> | null;
}

export const STANDARD_FIGURES = [
  'bytesInPerSec',
  'bytesOutPerSec',
  'produceLatency',
  'underReplicated',
  'cpuCores',
] as const;

/** Each kind's series, by metric name (lower case); a name may carry a label that picks the figure. */
const KIND_PREFIXES: [ScrapedKind, string][] = [
  ['redpanda', 'redpanda_'],
  ['kbench', 'kbench_broker_'],
  ['kafka-jmx', 'kafka_'],
];

const KAFKA_BYTES_IN = [
  'kafka_server_brokertopicmetrics_bytesin_total',
  'kafka_server_brokertopicmetrics_bytesinpersec_total',
  'kafka_server_brokertopicmetrics_bytesinpersec_count',
];
const KAFKA_BYTES_OUT = [
  'kafka_server_brokertopicmetrics_bytesout_total',
  'kafka_server_brokertopicmetrics_bytesoutpersec_total',
  'kafka_server_brokertopicmetrics_bytesoutpersec_count',
];
const KAFKA_URP = [
  'kafka_server_replicamanager_underreplicatedpartitions',
  'kafka_server_replicamanager_underreplicatedpartitions_value',
];
const KAFKA_PRODUCE_TIME = ['kafka_network_requestmetrics_totaltimems'];
/** The exporter's default format without rules: the bean's name as a label. */
const KAFKA_DEFAULT_COUNT = 'kafka_server_brokertopicmetrics_count';
const KAFKA_DEFAULT_VALUE = 'kafka_server_replicamanager_value';

const WANTED = new Set([
  ...KAFKA_BYTES_IN,
  ...KAFKA_BYTES_OUT,
  ...KAFKA_URP,
  ...KAFKA_PRODUCE_TIME,
  KAFKA_DEFAULT_COUNT,
  KAFKA_DEFAULT_VALUE,
  'redpanda_kafka_request_bytes_total',
  'redpanda_kafka_under_replicated_replicas',
  'redpanda_cpu_busy_seconds_total',
  'redpanda_kafka_request_latency_seconds_bucket',
  'kbench_broker_bytes_in_total',
  'kbench_broker_bytes_out_total',
  'kbench_broker_under_replicated',
  'process_cpu_seconds_total',
]);

/** Whether a metric name is one kbench reads (names compared in lower case: exporters may keep case). */
export function wantedSeries(name: string): boolean {
  return WANTED.has(name.toLowerCase());
}

/** The kind whose series an exposition holds, or null when it holds none kbench knows. */
export function detectKind(samples: PromSample[]): ScrapedKind | null {
  for (const [kind, prefix] of KIND_PREFIXES) {
    if (samples.some((s) => s.name.toLowerCase().startsWith(prefix))) return kind;
  }
  return null;
}

/** The sum of the named series' values (those passing `where`), or null when there are none. */
function sum(samples: PromSample[], names: string[], where: (s: PromSample) => boolean = () => true) {
  let total: number | null = null;
  for (const s of samples) {
    if (!names.includes(s.name.toLowerCase()) || !where(s) || !Number.isFinite(s.value)) continue;
    total = (total ?? 0) + s.value;
  }
  return total;
}

function label(s: PromSample, name: string): string | undefined {
  for (const [k, v] of Object.entries(s.labels)) if (k.toLowerCase() === name) return v;
  return undefined;
}

/** A broker-wide figure: the series without a topic label when there are such, else every topic's summed. */
function brokerWide(samples: PromSample[], names: string[], where: (s: PromSample) => boolean = () => true) {
  const all = (s: PromSample) => where(s) && label(s, 'topic') === undefined;
  return sum(samples, names, all) ?? sum(samples, names, where);
}

/** Maps one exposition to the standard figures of its kind. */
export function readStandardFigures(samples: PromSample[], kind: ScrapedKind, at: number): MetricsReading {
  const cpu = sum(samples, ['process_cpu_seconds_total']);
  const base = {
    at,
    kind,
    produceP50Ms: null,
    produceP99Ms: null,
    produceBuckets: null,
  };
  if (kind === 'kbench') {
    return {
      ...base,
      bytesIn: sum(samples, ['kbench_broker_bytes_in_total']),
      bytesOut: sum(samples, ['kbench_broker_bytes_out_total']),
      underReplicated: sum(samples, ['kbench_broker_under_replicated']),
      cpuSeconds: cpu,
    };
  }
  if (kind === 'redpanda') {
    const request = (which: string) => (s: PromSample) => label(s, 'redpanda_request') === which;
    const buckets = new Map<number, number>();
    for (const s of samples) {
      if (s.name.toLowerCase() !== 'redpanda_kafka_request_latency_seconds_bucket') continue;
      if (!request('produce')(s)) continue;
      const le = label(s, 'le');
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      if (le === undefined || Number.isNaN(bound) || !Number.isFinite(s.value)) continue;
      buckets.set(bound, (buckets.get(bound) ?? 0) + s.value);
    }
    return {
      ...base,
      bytesIn: sum(samples, ['redpanda_kafka_request_bytes_total'], request('produce')),
      bytesOut: sum(samples, ['redpanda_kafka_request_bytes_total'], request('consume')),
      underReplicated: sum(samples, ['redpanda_kafka_under_replicated_replicas']),
      cpuSeconds: sum(samples, ['redpanda_cpu_busy_seconds_total']) ?? cpu,
      produceBuckets: buckets.size > 0 ? buckets : null,
    };
  }
  const named = (bean: string) => (s: PromSample) => label(s, 'name')?.toLowerCase() === bean;
  const produceQuantile = (q: number) => {
    const s = samples.find(
      (x) =>
        KAFKA_PRODUCE_TIME.includes(x.name.toLowerCase()) &&
        label(x, 'request')?.toLowerCase() === 'produce' &&
        Number(label(x, 'quantile')) === q &&
        Number.isFinite(x.value),
    );
    return s ? s.value : null;
  };
  return {
    ...base,
    bytesIn:
      brokerWide(samples, KAFKA_BYTES_IN) ??
      brokerWide(samples, [KAFKA_DEFAULT_COUNT], named('bytesinpersec')),
    bytesOut:
      brokerWide(samples, KAFKA_BYTES_OUT) ??
      brokerWide(samples, [KAFKA_DEFAULT_COUNT], named('bytesoutpersec')),
    underReplicated:
      sum(samples, KAFKA_URP) ?? sum(samples, [KAFKA_DEFAULT_VALUE], named('underreplicatedpartitions')),
    cpuSeconds: cpu,
    produceP50Ms: produceQuantile(0.5),
    produceP99Ms: produceQuantile(0.99),
  };
}

/** A counter's growth between two readings; a counter that went down was reset (a restart): it counts from 0. */
function growth(before: number | null, after: number | null): number | null {
  if (before === null || after === null) return null;
  return after >= before ? after - before : after;
}

/** The q-quantile (0..1) of the observations between two cumulative histograms, in the buckets' unit; interpolated in its bucket. */
export function histogramQuantile(
  before: Map<number, number> | null,
  after: Map<number, number>,
  q: number,
): number | null {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((le) => {
    const now = after.get(le) ?? 0;
    const then = before?.get(le) ?? 0;
    return now >= then ? now - then : now;
  });
  // Cumulative counts must not fall as the bound rises (a reset between two reads can break that).
  for (let i = 1; i < counts.length; i += 1)
    counts[i] = Math.max(counts[i] as number, counts[i - 1] as number);
  const total = counts.at(-1) ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  for (let i = 0; i < bounds.length; i += 1) {
    if ((counts[i] as number) < rank) continue;
    const upper = bounds[i] as number;
    const lower = i === 0 ? 0 : (bounds[i - 1] as number);
    if (!Number.isFinite(upper)) return lower;
    const below = i === 0 ? 0 : (counts[i - 1] as number);
    const inBucket = (counts[i] as number) - below;
    return inBucket > 0 ? lower + ((upper - lower) * (rank - below)) / inBucket : upper;
  }
  return null;
}

/** One interval's standard figures from two readings of an endpoint. */
export function figuresBetween(
  before: MetricsReading,
  after: MetricsReading,
  node: number,
  name: string,
): BrokerNodeSample {
  const seconds = (after.at - before.at) / 1000;
  const rate = (a: number | null, b: number | null) => {
    const g = growth(a, b);
    return g === null || seconds <= 0 ? null : g / seconds;
  };
  let p50 = after.produceP50Ms;
  let p99 = after.produceP99Ms;
  if (after.produceBuckets) {
    const q50 = histogramQuantile(before.produceBuckets, after.produceBuckets, 0.5);
    const q99 = histogramQuantile(before.produceBuckets, after.produceBuckets, 0.99);
    p50 = q50 === null ? null : q50 * 1000;
    p99 = q99 === null ? null : q99 * 1000;
  }
  const bytesIn = rate(before.bytesIn, after.bytesIn);
  const bytesOut = rate(before.bytesOut, after.bytesOut);
  return {
    node,
    source: after.kind,
    name,
    bytesInPerSec: bytesIn ?? 0,
    bytesOutPerSec: bytesOut ?? 0,
    ...(after.underReplicated === null ? {} : { underReplicated: after.underReplicated }),
    produceP50Ms: p50,
    produceP99Ms: p99,
    cpuCores: rate(before.cpuSeconds, after.cpuSeconds),
  };
}

/** Which standard figures a reading lacks. */
function missingFigures(r: MetricsReading): string[] {
  const out: string[] = [];
  if (r.bytesIn === null) out.push('bytesInPerSec');
  if (r.bytesOut === null) out.push('bytesOutPerSec');
  if (r.produceP50Ms === null && r.produceP99Ms === null && r.produceBuckets === null)
    out.push('produceLatency');
  if (r.underReplicated === null) out.push('underReplicated');
  if (r.cpuSeconds === null) out.push('cpuCores');
  return out;
}

export interface ScrapeOptions {
  /** Per scrape, shorter than the tick. Default 800 ms. */
  timeoutMs?: number;
  maxBodyBytes?: number;
}

/** Reads an endpoint's body, at most `maxBodyBytes` of it (the rest is cut and reported). */
async function fetchBody(
  url: string,
  timeoutMs: number,
  maxBodyBytes: number,
): Promise<{ text: string; truncated: boolean }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  try {
    const response = await fetch(url, {
      signal: abort.signal,
      redirect: 'error',
      headers: { accept: 'text/plain;version=0.0.4;q=1,*/*;q=0.1' },
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new Error(`HTTP ${response.status}`);
    }
    if (!response.body) return { text: '', truncated: false };
    const reader = response.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    let truncated = false;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > maxBodyBytes) {
        chunks.push(value.subarray(0, maxBodyBytes - size));
        size = maxBodyBytes;
        truncated = true;
        await reader.cancel().catch(() => {});
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
    let text = Buffer.concat(chunks, size).toString('utf8');
    // A cut body ends in the middle of a line: that line is dropped, not misread.
    if (truncated) text = text.slice(0, Math.max(0, text.lastIndexOf('\n')));
    return { text, truncated };
  } catch (err) {
    const reason = abort.signal.aborted ? abort.signal.reason : err;
    const cause = (reason as { cause?: { code?: string; message?: string } })?.cause;
    throw new Error(
      cause?.code
        ? `${cause.code} ${cause.message ?? ''}`.trim()
        : ((reason as Error)?.message ?? String(reason)),
    );
  } finally {
    clearTimeout(timer);
  }
}

/** One endpoint: its latest reading, the one the previous sample ended at, and its tally. */
class Endpoint {
  kind: ScrapedKind | null;
  latest: MetricsReading | null = null;
  previous: MetricsReading | null = null;
  scrapes = 0;
  failed = 0;
  lastError: string | null = null;
  missing: string[] | null = null;
  /** Notes about the body (cut, long lines) said once each. */
  private said = new Set<string>();

  constructor(
    readonly url: string,
    readonly node: number,
    readonly name: string,
    kind: MetricsKind,
    private readonly log: (level: 'info' | 'warn', line: string) => void,
  ) {
    this.kind = kind === 'auto' ? null : kind;
  }

  async scrape(options: Required<ScrapeOptions>): Promise<void> {
    this.scrapes += 1;
    try {
      const { text, truncated } = await fetchBody(this.url, options.timeoutMs, options.maxBodyBytes);
      const at = performance.now();
      const parsed = parsePrometheusText(text, { keep: wantedSeries });
      if (truncated)
        this.once('cut', `answered more than ${options.maxBodyBytes} bytes: read the first only`);
      if (parsed.longLines > 0 || parsed.badLines > 0 || parsed.droppedSeries > 0)
        this.once('lines', `some lines were not read (${parsed.problems.join('; ')})`);
      if (this.kind === null) {
        this.kind = detectKind(parsed.samples);
        if (this.kind === null)
          throw new Error("no series of Kafka's JMX exporter, Redpanda's /public_metrics or kbench-broker");
        this.log('info', `metrics ${this.url}: reading it as ${this.kind}`);
      }
      const reading = readStandardFigures(parsed.samples, this.kind, at);
      this.missing = missingFigures(reading);
      if (this.missing.length === STANDARD_FIGURES.length)
        throw new Error(`none of the standard series of ${this.kind} (is it the right kind?)`);
      this.latest = reading;
    } catch (err) {
      this.failed += 1;
      const why = err instanceof Error ? err.message : String(err);
      if (this.lastError !== why) this.log('warn', `metrics ${this.url}: scrape failed: ${why}`);
      this.lastError = why;
      this.latest = null;
    }
  }

  /** The interval since the previous cut, or null (a gap) when this tick's scrape failed. */
  cut(): BrokerNodeSample | null {
    const { latest, previous } = this;
    this.previous = latest ?? previous;
    if (latest === null || previous === null || latest === previous) return null;
    return figuresBetween(previous, latest, this.node, this.name);
  }

  describe(): MetricsEndpointRun {
    return {
      url: this.url,
      node: this.node,
      name: this.name,
      kind: this.kind,
      scrapes: this.scrapes,
      failed: this.failed,
      lastError: this.lastError,
      missing: this.missing ?? [],
    };
  }

  private once(key: string, line: string): void {
    if (this.said.has(key)) return;
    this.said.add(key);
    this.log('warn', `metrics ${this.url}: ${line}`);
  }
}

/** Endpoints are read at most about once a second, whatever the sample interval. */
const MIN_SCRAPE_GAP_MS = 900;
/** The first scrape's timeout, before load starts. */
const FIRST_SCRAPE_TIMEOUT_MS = 5000;

/** The node name an endpoint gets when the profile gives none: its host:port. */
export function defaultNodeName(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * The profile's endpoints, read on the run's sample tick: `reset()` at the start of load takes the
 * first readings, each `cut()` scrapes every endpoint (at most `timeoutMs`) and returns the interval's
 * figures of those that answered, numbered 1, 2, ... in the profile's order.
 */
export class ClusterMetrics {
  private readonly endpoints: Endpoint[];
  private readonly options: Required<ScrapeOptions>;
  private lastScrapeAt = Number.NEGATIVE_INFINITY;

  constructor(
    endpoints: readonly MetricsEndpoint[],
    log: (level: 'info' | 'warn', line: string) => void,
    options: ScrapeOptions = {},
  ) {
    this.endpoints = endpoints.map(
      (e, i) => new Endpoint(e.url, i + 1, e.node ?? defaultNodeName(e.url), e.kind, log),
    );
    this.options = {
      timeoutMs: options.timeoutMs ?? 800,
      maxBodyBytes: options.maxBodyBytes ?? PROM_LIMITS.maxBodyBytes,
    };
  }

  private async scrapeAll(timeoutMs = this.options.timeoutMs): Promise<void> {
    this.lastScrapeAt = performance.now();
    await Promise.all(this.endpoints.map((e) => e.scrape({ ...this.options, timeoutMs })));
  }

  /**
   * The first readings: the start of the first interval. Before load starts, so they may take longer
   * (an exporter's first collection can take seconds): up to FIRST_SCRAPE_TIMEOUT_MS.
   */
  async reset(): Promise<void> {
    await this.scrapeAll(Math.max(this.options.timeoutMs, FIRST_SCRAPE_TIMEOUT_MS));
    for (const e of this.endpoints) e.cut();
  }

  /** Scrapes every endpoint and returns the figures since the previous cut, a node per endpoint that answered. */
  async cut(): Promise<BrokerNodeSample[]> {
    // Samples shorter than a second (scenario.sampleIntervalMs) do not scrape more often than once a second.
    if (performance.now() - this.lastScrapeAt < MIN_SCRAPE_GAP_MS) return [];
    await this.scrapeAll();
    return this.endpoints.map((e) => e.cut()).filter((n): n is BrokerNodeSample => n !== null);
  }

  /** What the run stores about its endpoints. */
  describe(): MetricsEndpointRun[] {
    return this.endpoints.map((e) => e.describe());
  }
}
