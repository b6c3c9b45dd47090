// The controller side of load agents (docs/agents.md, protocol v1): a run's producers and consumers
// run on `kbench agent` processes on other machines. It connects to each agent (TCP, TLS when asked),
// says hello with the token, measures each agent's clock offset, claims the agents for the run, splits
// the clients across them with shares(), asks each for what its clients did every sample, merges their
// histograms exactly, keeps a per-agent breakdown, notices an agent that is lost, and at the end collects
// what each agent's producers had acknowledged for the record check.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { isIP, type Socket, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { NativeConsumerOptions, NativeProducerOptions } from '@kbench/broker-native';
import {
  AGENT_PROTOCOL_VERSION,
  type AgentBreakdown,
  type AgentEndpoint,
  type AgentRole,
  type AgentSideFigures,
  type AgentsRun,
  fileErrorText,
  type Scenario,
} from '@kbench/schema';
import { bucketTop, LatencyHistogram, SUB_BITS } from '../histogram.js';
import {
  type ClientInterval,
  type ErrorCount,
  emptyInterval,
  MAX_ERROR_MESSAGES,
  tallyError,
} from '../interval.js';
import type { Acknowledged, AcknowledgedRanges } from '../verification.js';
import type { ConsumersPlan, LoadClients, ProducersPlan } from './driver.js';
import { shares } from './driver.js';
import { mergeIntervals } from './kafkajs/index.js';
import { nativeConsumerOptions, nativeProducerOptions } from './native.js';

/** A line of the protocol is at most this long (the agent's bound too). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 10_000;
const HELLO_TIMEOUT_MS = 10_000;
const CLOCK_ROUNDS = 16;
/** Starting clients waits for a group to settle and for connections to brokers: up to this long. */
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;
/** While producers run, how often the controller asks agents whether they have finished. */
const POLL_MS = 250;
/** The longest text field of a reply kept (a name, a host, an error). */
const MAX_TEXT = 2000;
/**
 * The engine's histogram buckets (SUB_BITS = 10) over 64-bit values: indexes below 55 × 1024. An
 * interval lists each non-empty bucket once, in order, so it carries at most this many.
 */
const BUCKET_LIMIT = 55 * 1024;
/** A token file holds a token: a few hundred bytes. */
const MAX_TOKEN_BYTES = 64 * 1024;
/**
 * The most ranges of acknowledged sequences the controller takes from all agents together (a
 * partition's entry counts as one at least). In order, a producer's partition is one range; only a
 * lossy run fragments them, and past this the record check says it did not run rather than hold more.
 */
export const MAX_ACKNOWLEDGED_RANGES = 1 << 20;
/** Kafka's partition numbers are 32-bit signed. */
const MAX_PARTITION = 2 ** 31 - 1;

export interface AgentsSetup {
  endpoints: AgentEndpoint[];
  token: string;
  /** PEM text of the CA the agents' certificates are signed by; absent: the system's CAs. */
  tlsCa?: string;
  tlsInsecure?: boolean;
  /** Connect with TLS (the profile has agentTls). */
  tls: boolean;
  onLoss: Scenario['agents']['onLoss'];
  lossTimeoutMs: number;
  log: (level: 'info' | 'warn', message: string) => void;
}

type Reply = Record<string, unknown>;

/** Reads a token file (bounded, a regular file), without its trailing newline. */
export function readTokenFile(file: string, field: string): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw new Error(`${field}: cannot read ${file}: ${fileErrorText(err)}`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${field}: ${file} is not a regular file`);
    const buf = Buffer.alloc(MAX_TOKEN_BYTES + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n > MAX_TOKEN_BYTES)
        throw new Error(`${field}: ${file} is longer than a token (at most ${MAX_TOKEN_BYTES} bytes)`);
    }
    const token = buf.subarray(0, n).toString('utf8').trim();
    if (token === '') throw new Error(`${field}: ${file} is empty`);
    return token;
  } finally {
    closeSync(fd);
  }
}

/**
 * How many producers and consumers each agent runs: producers over the agents that take them with
 * shares(), each group's consumers likewise (as AgentFleet splits them; a dry run shows it).
 */
export function agentShares(
  endpoints: AgentEndpoint[],
  producers: number,
  consumers: number,
  groups: number,
): { producers: number; consumers: number }[] {
  const out = endpoints.map(() => ({ producers: 0, consumers: 0 }));
  for (const role of ['producers', 'consumers'] as const) {
    const takers = endpoints.flatMap((e, i) => (e.roles.includes(role) ? [i] : []));
    const count = role === 'producers' ? producers : consumers;
    for (let g = 0; g < (role === 'producers' ? 1 : groups); g++)
      shares(count, takers.length).forEach((n, k) => {
        (out[takers[k] as number] as { producers: number; consumers: number })[role] += n;
      });
  }
  return out;
}

/** Wall clock in µs since the epoch, to the fraction. */
function nowMicros(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

function text(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value.slice(0, MAX_TEXT) : fallback;
}

const shown = (value: unknown) => JSON.stringify(value)?.slice(0, 40);

/** A whole number of things (records, bytes, a bucket's count): a safe integer, 0 or more. */
function count(value: unknown, what: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0)
    throw new Error(`a reply's ${what} is not a count (got ${shown(value)})`);
  return value as number;
}

/** A sum of µs, which may pass 2^53 (then not exact): a finite number, 0 or more. */
function amount(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new Error(`a reply's ${what} is not a number of µs (got ${shown(value)})`);
  return value;
}

/** The lowest value in µs that falls in a bucket (bucketTop is the highest). */
function bucketFloor(bucket: number): number {
  return bucket < 1 << SUB_BITS
    ? bucket
    : (bucket % (1 << SUB_BITS)) * 2 ** Math.floor(bucket / (1 << SUB_BITS));
}

/**
 * An interval's histogram, checked as the engine makes one: each non-empty bucket once and in
 * order, its count the sum of the buckets' counts, its max in the highest bucket and its sum within
 * what the buckets hold. A histogram that is not one would be stored as wrong percentiles and means.
 */
function parseLatency(value: unknown, what: string): ClientInterval['latency'] {
  if (value === null || typeof value !== 'object') throw new Error(`a reply's ${what} is missing`);
  const latency = value as Record<string, unknown>;
  const { buckets, counts } = latency;
  if (
    !Array.isArray(buckets) ||
    !Array.isArray(counts) ||
    buckets.length !== counts.length ||
    buckets.length > BUCKET_LIMIT
  )
    throw new Error(
      `a reply's ${what} buckets and counts are not two lists of one length, at most ${BUCKET_LIMIT}`,
    );
  let [total, low, high] = [0, 0, 0];
  for (let i = 0; i < buckets.length; i++) {
    const bucket = count(buckets[i], `${what}.buckets[${i}]`);
    if (bucket >= BUCKET_LIMIT)
      throw new Error(
        `a reply's ${what}.buckets[${i}] is not a bucket (0 to ${BUCKET_LIMIT - 1}; got ${bucket})`,
      );
    if (i > 0 && bucket <= (buckets[i - 1] as number))
      throw new Error(
        `a reply's ${what}.buckets[${i}] does not come after the bucket before it (got ${bucket})`,
      );
    const n = count(counts[i], `${what}.counts[${i}]`);
    total += n;
    low += n * bucketFloor(bucket);
    high += n * bucketTop(bucket);
  }
  const n = count(latency.count, `${what}.count`);
  if (n !== total)
    throw new Error(`a reply's ${what}.count is ${n}, not the sum of its buckets' counts (${total})`);
  const max = amount(latency.max, `${what}.max`);
  const last = buckets[buckets.length - 1] as number | undefined;
  if (last === undefined ? max !== 0 : max < bucketFloor(last) || max > bucketTop(last))
    throw new Error(
      `a reply's ${what}.max is ${max} µs, not in its highest bucket (${last === undefined ? 'none: 0' : `${bucketFloor(last)} to ${bucketTop(last)} µs`})`,
    );
  const sum = amount(latency.sum, `${what}.sum`);
  // Sums past 2^53 are rounded on the way: a relative slack of 1e-9 covers that.
  if (sum < low * (1 - 1e-9) || sum > high * (1 + 1e-9))
    throw new Error(
      `a reply's ${what}.sum is ${sum} µs, which ${n} values in its buckets cannot add up to (${low} to ${high} µs)`,
    );
  return { buckets: buckets as number[], counts: counts as number[], count: n, sum, max };
}

/** The busiest client's running share (0 to 1), or null when the agent does not know it. */
function parseBusy(value: unknown, what: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !(value >= 0 && value <= 1))
    throw new Error(`a reply's ${what} is not a share from 0 to 1 (got ${shown(value)})`);
  return value;
}

/** An interval as an agent sends it (NativeInterval over its clients), checked field by field. */
export function parseInterval(value: unknown, what: string): ClientInterval {
  if (value === null || typeof value !== 'object') throw new Error(`a reply's ${what} is not an interval`);
  const v = value as Record<string, unknown>;
  return {
    records: count(v.records, `${what}.records`),
    valueBytes: count(v.valueBytes, `${what}.valueBytes`),
    wireBytes: count(v.wireBytes ?? 0, `${what}.wireBytes`),
    errors: count(v.errors, `${what}.errors`),
    ...parseErrorMessages(v.errorMessages, what),
    latency: parseLatency(v.latency, `${what}.latency`),
    busy: parseBusy(v.busy, `${what}.busy`),
  };
}

/** An interval's `errorMessages` (absent from agents before it): a bounded list of texts with counts. */
function parseErrorMessages(value: unknown, what: string): Pick<ClientInterval, 'errorMessages'> {
  if (value === undefined) return {};
  if (!Array.isArray(value) || value.length > MAX_ERROR_MESSAGES + 1)
    throw new Error(`a reply's ${what}.errorMessages is not a list of at most ${MAX_ERROR_MESSAGES + 1}`);
  const tally: ErrorCount[] = [];
  value.forEach((entry: unknown, i) => {
    const e = (entry ?? {}) as Record<string, unknown>;
    if (typeof e.message !== 'string')
      throw new Error(`a reply's ${what}.errorMessages[${i}].message is not text`);
    tallyError(tally, text(e.message), count(e.count, `${what}.errorMessages[${i}].count`));
  });
  return tally.length > 0 ? { errorMessages: tally } : {};
}

/**
 * An `acknowledged` reply's list, checked before anything of it is kept: its size against what the
 * run may still take (`budget.left` ranges), then each entry: a producer this agent ran (each of
 * them listed), one of the run's topics, a partition number, and ranges of whole sequences below 2^53.
 */
export function parseAcknowledged(
  value: unknown,
  producers: readonly number[],
  topics: readonly string[],
  budget: { left: number },
): AcknowledgedRanges[] {
  if (!Array.isArray(value)) throw new Error('acknowledged: the reply has no list');
  let ranges = 0;
  for (const entry of value as unknown[]) {
    const starts = (entry as { starts?: unknown } | null)?.starts;
    ranges += Array.isArray(starts) ? Math.max(1, starts.length) : 1;
    if (ranges > budget.left)
      throw new Error(
        `acknowledged: more than ${MAX_ACKNOWLEDGED_RANGES.toLocaleString('en-US')} ranges of acknowledged sequences over the run's agents (at least ${ranges.toLocaleString('en-US')} from this one): the acknowledged records are too fragmented to check`,
      );
  }
  budget.left -= ranges;
  const ours = new Set(producers);
  const named = new Set(topics);
  const listed = new Set<number>();
  const parsed = (value as unknown[]).map((entry, i): AcknowledgedRanges => {
    const at = `acknowledged[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      throw new Error(`${at}: not an object`);
    const { producer, topic, partition, starts, ends } = entry as Record<string, unknown>;
    if (typeof producer !== 'number' || !ours.has(producer))
      throw new Error(
        `${at}.producer: ${JSON.stringify(producer)?.slice(0, 40)} is not one of the producers this agent ran (${producers.join(', ')})`,
      );
    if (typeof topic !== 'string' || !named.has(topic))
      throw new Error(`${at}.topic: ${JSON.stringify(topic)?.slice(0, 300)} is not one of the run's topics`);
    if (!Number.isInteger(partition) || (partition as number) < 0 || (partition as number) > MAX_PARTITION)
      throw new Error(
        `${at}.partition: ${JSON.stringify(partition)?.slice(0, 40)} is not a partition number`,
      );
    if (!Array.isArray(starts) || !Array.isArray(ends) || starts.length !== ends.length)
      throw new Error(`${at}: starts and ends are not two lists of one length`);
    for (let k = 0; k < starts.length; k++) {
      const [start, end] = [starts[k], ends[k]];
      if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start)
        throw new Error(
          `${at}: [${JSON.stringify(start)?.slice(0, 40)}, ${JSON.stringify(end)?.slice(0, 40)}) is not a range of sequences`,
        );
    }
    listed.add(producer);
    return { producer, topic, partition: partition as number, starts, ends };
  });
  const missing = producers.filter((p) => !listed.has(p));
  if (missing.length > 0)
    throw new Error(`acknowledged: producer ${missing.join(', ')} of this agent is not listed`);
  return parsed;
}

function properties(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value).slice(0, 1000))
    out[k.slice(0, 200)] = String(v).slice(0, MAX_TEXT);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** One connection to an agent: requests with ids, replies matched to them, one JSON object a line. */
class AgentLink {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (r: Reply) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  private chunks: Buffer[] = [];
  private buffered = 0;
  closedReason: string | null = null;
  private closing = false;
  onLost: (reason: string) => void = () => {};

  private constructor(
    private readonly socket: Socket,
    readonly address: string,
  ) {
    socket.on('data', (data: Buffer) => this.read(data));
    socket.on('error', (err) => this.closed(`connection error: ${err.message}`));
    socket.on('close', () => this.closed('connection closed'));
  }

  static connect(address: string, setup: AgentsSetup): Promise<AgentLink> {
    const at = address.lastIndexOf(':');
    const host = address.slice(0, at).replace(/^\[(.*)\]$/, '$1');
    const port = Number(address.slice(at + 1));
    return new Promise((resolve, reject) => {
      const socket = setup.tls
        ? tlsConnect({
            host,
            port,
            ...(isIP(host) ? {} : { servername: host }),
            ...(setup.tlsCa !== undefined ? { ca: setup.tlsCa } : {}),
            rejectUnauthorized: !setup.tlsInsecure,
          })
        : tcpConnect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`cannot connect within ${CONNECT_TIMEOUT_MS / 1000} s`));
      }, CONNECT_TIMEOUT_MS);
      const fail = (err: Error & { code?: string }) => {
        clearTimeout(timer);
        socket.destroy();
        reject(
          new Error(
            err.code === 'ECONNREFUSED'
              ? `nothing listens at ${address} (is kbench agent running there, and listening on that address?)`
              : `cannot connect: ${err.message}`,
          ),
        );
      };
      socket.once('error', fail);
      socket.once(setup.tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        socket.off('error', fail);
        socket.setNoDelay(true);
        resolve(new AgentLink(socket, address));
      });
    });
  }

  private read(data: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = data.indexOf(0x0a, start);
      if (nl < 0) break;
      const piece = data.subarray(start, nl);
      const line = this.chunks.length > 0 ? Buffer.concat([...this.chunks, piece]) : piece;
      this.chunks = [];
      this.buffered = 0;
      start = nl + 1;
      if (line.length > MAX_LINE_BYTES) {
        this.fail(`a reply longer than ${MAX_LINE_BYTES} bytes`);
        return;
      }
      this.reply(line);
      if (this.closedReason) return;
    }
    const rest = data.subarray(start);
    if (rest.length === 0) return;
    this.buffered += rest.length;
    if (this.buffered > MAX_LINE_BYTES) {
      this.fail(`a reply longer than ${MAX_LINE_BYTES} bytes`);
      return;
    }
    this.chunks.push(Buffer.from(rest));
  }

  private reply(line: Buffer): void {
    let value: unknown;
    try {
      value = JSON.parse(line.toString('utf8'));
    } catch {
      this.fail('a reply that is not JSON');
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.fail('a reply that is not a JSON object');
      return;
    }
    const reply = value as Reply;
    const waiting = typeof reply.id === 'number' ? this.pending.get(reply.id) : undefined;
    if (!waiting) {
      // An error without an id (a refused line, a dropped hello) is why the agent is closing.
      if (reply.ok === false) this.lastWords = text(reply.error, 'an error');
      return;
    }
    this.pending.delete(reply.id as number);
    clearTimeout(waiting.timer);
    if (reply.ok === true) waiting.resolve(reply);
    else waiting.reject(new Error(text(reply.error, 'refused (no reason given)')));
  }

  /** The error an agent sent without an id before closing, if any. */
  private lastWords: string | null = null;

  private fail(reason: string): void {
    this.socket.destroy();
    this.closed(reason);
  }

  private closed(reason: string): void {
    if (this.closedReason) return;
    const why = this.lastWords ? `${reason} (${this.lastWords})` : reason;
    this.closedReason = why;
    for (const [, waiting] of this.pending) {
      clearTimeout(waiting.timer);
      waiting.reject(new Error(why));
    }
    this.pending.clear();
    if (!this.closing) this.onLost(why);
  }

  request(op: string, fields: Record<string, unknown>, timeoutMs: number): Promise<Reply> {
    if (this.closedReason) return Promise.reject(new Error(this.closedReason));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new TimeoutError(`no answer to ${op} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.socket.write(`${JSON.stringify({ id, op, ...fields })}\n`);
    });
  }

  close(): void {
    this.closing = true;
    this.socket.end();
    this.socket.destroySoon?.();
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }
}

class TimeoutError extends Error {}

interface SideTotals {
  records: number;
  valueBytes: number;
  errors: number;
  latency: LatencyHistogram;
}

const newTotals = (): SideTotals => ({
  records: 0,
  valueBytes: 0,
  errors: 0,
  latency: new LatencyHistogram(),
});

/** One agent of the run and what it did. */
interface Agent {
  endpoint: AgentEndpoint;
  link: AgentLink;
  name: string;
  host: string;
  cores: number;
  kbench: string;
  clockOffsetMicros: number;
  clockUncertaintyMicros: number;
  /** Serves `acknowledged` (its hello lists the op): it can take part in the record check. */
  acknowledges: boolean;
  /** With the record check: what its producers had acknowledged (collected on stop), or why not known. */
  acknowledged: Acknowledged | null;
  producerOptions: NativeProducerOptions[];
  consumerOptions: NativeConsumerOptions[];
  lostAtMs: number | null;
  lostReason: string | null;
  /** Claimed for this run by our prepare (only then is it ours to stop and release). */
  prepared: boolean;
  producersFinished: boolean;
  error: string | null;
  /** Reported and not yet handed to the run, handed since the run's last sample, and measured. */
  pending: Record<AgentRole, ClientInterval[]>;
  handed: Record<AgentRole, ClientInterval[]>;
  measured: Record<AgentRole, SideTotals>;
  properties: Partial<Record<AgentRole, Record<string, string>>>;
}

/** Why an agent cannot take part in the record check. */
function tooOld(a: Agent): string {
  return `kbench ${a.kbench} does not report what its producers acknowledged, which the record check needs (its hello lists no acknowledged op): update the agent`;
}

function label(a: { name?: string; endpoint: AgentEndpoint }): string {
  return a.name && a.name !== a.endpoint.address ? `${a.name} (${a.endpoint.address})` : a.endpoint.address;
}

/** Base64 for the Buffers of NativeProducerOptions, as the protocol carries them. */
function producerJson(options: NativeProducerOptions): Record<string, unknown> {
  const { messageSizeTable, payload, ...rest } = options;
  return {
    ...rest,
    ...(messageSizeTable ? { messageSizeTable: messageSizeTable.toString('base64') } : {}),
    ...(payload ? { payload: payload.toString('base64') } : {}),
  };
}

/**
 * The agents of one run. `connect` says hello to each and measures its clock; `prepare` claims them
 * for the run; `producers` and `startConsumers` split the clients; the two LoadClients it hands out
 * (producers, consumers) share one request per agent per sample.
 */
export class AgentFleet {
  private readonly agents: Agent[];
  /** When load began (performance.now()), for the time an agent is lost. */
  loadStartedAt = 0;
  private inflight: Promise<void> | null = null;
  private failure: Error | null = null;
  private starting: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;
  private onFinished: (() => void) | null = null;
  private poller: NodeJS.Timeout | null = null;
  /** The producers mark their records (the record check), and the run's topics they write to. */
  private verify: { topics: string[] } | null = null;
  /** How many more ranges of acknowledged sequences the controller takes (MAX_ACKNOWLEDGED_RANGES in all). */
  private readonly acknowledgedBudget = { left: MAX_ACKNOWLEDGED_RANGES };

  private constructor(
    agents: Agent[],
    private readonly setup: AgentsSetup,
  ) {
    this.agents = agents;
    for (const agent of agents) agent.link.onLost = (reason) => this.lose(agent, reason);
  }

  /** Connects to every agent, says hello and measures its clock; an agent that fails is named. */
  static async connect(setup: AgentsSetup): Promise<AgentFleet> {
    const results = await Promise.allSettled(setup.endpoints.map((endpoint) => hello(endpoint, setup)));
    const failed = results
      .map((r, i) =>
        r.status === 'rejected'
          ? `agent ${setup.endpoints[i]?.address}: ${(r.reason as Error).message}`
          : null,
      )
      .filter((m): m is string => m !== null);
    const agents = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    if (failed.length > 0) {
      for (const agent of agents) agent.link.close();
      throw new Error(failed.join('; '));
    }
    const names = new Set<string>();
    for (const agent of agents) {
      if (names.has(agent.name)) agent.name = `${agent.name}@${agent.endpoint.address}`;
      names.add(agent.name);
    }
    return new AgentFleet(agents, setup);
  }

  /** Claims every agent for the run, sending load only to `target`. */
  async prepare(runId: string, target: string[]): Promise<void> {
    await this.each(this.agents, async (a) => {
      await a.link.request(
        'prepare',
        { run: runId, target, clockOffsetMicros: a.clockOffsetMicros },
        HELLO_TIMEOUT_MS,
      );
      a.prepared = true;
    });
  }

  /** Runs `fn` on each agent at once; the first failure, naming its agent, rejects. */
  private async each<T>(agents: Agent[], fn: (a: Agent) => Promise<T>): Promise<T[]> {
    const results = await Promise.allSettled(agents.map(fn));
    const failed = results.flatMap((r, i) => {
      const agent = agents[i] as Agent;
      return r.status === 'rejected' ? [`agent ${label(agent)}: ${(r.reason as Error).message}`] : [];
    });
    if (failed.length > 0) throw new Error(failed.join('; '));
    return results.map((r) => (r as PromiseFulfilledResult<T>).value);
  }

  private takers(role: AgentRole): Agent[] {
    const list = this.agents.filter((a) => a.endpoint.roles.includes(role));
    if (list.length === 0)
      throw new Error(
        `no agent takes ${role}: name one as ${role}@host:port, or without a role (agents: ${this.agents.map((a) => label(a)).join(', ')})`,
      );
    return list;
  }

  /**
   * Producers split over the agents that take them, each keeping its own rate and record share. They
   * are numbered across the fleet, so with the record check no two agents' producers mark alike.
   */
  producers(plan: ProducersPlan): LoadClients {
    const options = nativeProducerOptions(plan);
    const takers = this.takers('producers');
    if (plan.verify) this.verify = { topics: plan.topics };
    let next = 0;
    shares(plan.config.count, takers.length).forEach((n, k) => {
      const agent = takers[k] as Agent;
      agent.producerOptions = Array.from({ length: n }, () => options(next++));
      if (plan.verify && n > 0 && !agent.acknowledges) {
        // An agent older than the record check on agents: no marks (it may not know them either).
        agent.producerOptions = agent.producerOptions.map(({ verifyProducer: _, ...rest }) => rest);
        agent.acknowledged = { unknown: `agent ${label(agent)}: ${tooOld(agent)}` };
      }
    });
    return new AgentClients(this, 'producers');
  }

  /** Why the record check cannot run on these agents (one that takes producers is too old), or null. */
  whyNotVerifiable(): string | null {
    const old = this.agents.filter((a) => a.endpoint.roles.includes('producers') && !a.acknowledges);
    return old.length === 0 ? null : old.map((a) => `agent ${label(a)}: ${tooOld(a)}`).join('; ');
  }

  /**
   * What every agent's producers had acknowledged (collected by stop()), or why it is not known: an
   * agent lost during the run, one that did not answer, or an answer refused.
   */
  acknowledged(): Acknowledged {
    let ranges: AcknowledgedRanges[] = [];
    const unknown: string[] = [];
    for (const a of this.agents) {
      const n = a.producerOptions.length;
      if (n === 0) continue;
      const theirs = `what its ${n} producer${n === 1 ? '' : 's'} had acknowledged is unknown`;
      if (a.lostAtMs !== null)
        unknown.push(
          `agent ${label(a)} was lost ${(a.lostAtMs / 1000).toFixed(1)} s into the load (${a.lostReason}): ${theirs}`,
        );
      else if (a.acknowledged === null)
        unknown.push(
          `agent ${label(a)} did not report it${a.link.closedReason ? ` (${a.link.closedReason})` : ''}: ${theirs}`,
        );
      else if ('unknown' in a.acknowledged) unknown.push(a.acknowledged.unknown);
      else ranges = ranges.concat(a.acknowledged.ranges);
    }
    return unknown.length > 0 ? { unknown: unknown.join('; ') } : { ranges };
  }

  /** Asks an agent whose producers have stopped what they had acknowledged; an error is kept as the reason. */
  private async collectAcknowledged(a: Agent, topics: string[]): Promise<void> {
    if (a.producerOptions.length === 0 || a.acknowledged !== null) return;
    try {
      const reply = await a.link.request('acknowledged', {}, STOP_TIMEOUT_MS);
      const producers = a.producerOptions.map((o) => o.verifyProducer as number);
      a.acknowledged = {
        ranges: parseAcknowledged(reply.acknowledged, producers, topics, this.acknowledgedBudget),
      };
    } catch (err) {
      a.acknowledged = { unknown: `agent ${label(a)}: ${(err as Error).message}` };
    }
  }

  /** Every group's consumers, split over the agents that take consumers; resolves once all have joined. */
  async startConsumers(plans: ConsumersPlan[]): Promise<LoadClients> {
    const takers = this.takers('consumers');
    for (const plan of plans) {
      const options = nativeConsumerOptions(plan);
      shares(plan.count, takers.length).forEach((n, k) => {
        (takers[k] as Agent).consumerOptions.push(...Array.from({ length: n }, () => options));
      });
    }
    const busy = takers.filter((a) => a.consumerOptions.length > 0);
    const replies = await this.each(busy, (a) =>
      a.link.request('startConsumers', { consumers: a.consumerOptions }, START_TIMEOUT_MS),
    );
    busy.forEach((a, i) => {
      a.properties.consumers = properties(replies[i]?.properties);
    });
    return new AgentClients(this, 'consumers');
  }

  private warned = false;
  private warnIdle(): void {
    const idle = this.agents.filter((a) => a.producerOptions.length === 0 && a.consumerOptions.length === 0);
    if (this.warned || idle.length === 0) return;
    this.warned = true;
    this.setup.log(
      'warn',
      `agent${idle.length > 1 ? 's' : ''} ${idle.map((a) => label(a)).join(', ')} got no producer and no consumer (more agents than clients of their roles)`,
    );
  }

  /** Sends startProducers to each agent with producers (they begin sending at once). */
  startProducers(): Promise<void> {
    this.warnIdle();
    this.starting ??= (async () => {
      const busy = this.agents.filter((a) => a.producerOptions.length > 0 && a.lostAtMs === null);
      const replies = await this.each(busy, (a) =>
        a.link.request(
          'startProducers',
          { producers: a.producerOptions.map(producerJson) },
          START_TIMEOUT_MS,
        ),
      );
      busy.forEach((a, i) => {
        a.properties.producers = properties(replies[i]?.properties);
      });
      // Asked until they have all finished, so the run hears of it between its samples too.
      const poll = () => {
        this.poller = setTimeout(() => {
          if (this.allProducersFinished() || this.stopping) return;
          (this.inflight ? Promise.resolve() : this.round()).catch(() => {}).finally(poll);
        }, POLL_MS);
      };
      poll();
    })();
    return this.starting;
  }

  private allProducersFinished(): boolean {
    return this.agents.every(
      (a) => a.producerOptions.length === 0 || a.producersFinished || a.lostAtMs !== null,
    );
  }

  /** Resolves once every producer agent has finished its share (or been lost, or the run failed). */
  readonly producersFinished = new Promise<void>((resolve) => {
    this.onFinished = resolve;
  });

  private checkFinished(): void {
    if (this.failure || this.allProducersFinished()) this.onFinished?.();
  }

  private runTimeMs(): number {
    return this.loadStartedAt ? Math.max(0, Math.round(performance.now() - this.loadStartedAt)) : 0;
  }

  /** An agent is lost: recorded; with onLoss fail the run ends at its next request. */
  private lose(agent: Agent, reason: string): void {
    if (agent.lostAtMs !== null || this.stopping) return;
    agent.lostAtMs = this.runTimeMs();
    agent.lostReason = reason;
    agent.link.close();
    const at = `${(agent.lostAtMs / 1000).toFixed(1)} s`;
    if (this.setup.onLoss === 'fail') {
      this.failure ??= new Error(`agent ${label(agent)} lost at ${at} into the load: ${reason}`);
    } else {
      this.setup.log(
        'warn',
        `agent ${label(agent)} lost at ${at} into the load: ${reason}; the run goes on with the others`,
      );
    }
    this.checkFinished();
  }

  /** One take of every live agent; joins a take under way. */
  round(): Promise<void> {
    this.inflight ??= this.takeAll().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async takeAll(): Promise<void> {
    if (this.failure) throw this.failure;
    this.warnIdle();
    await this.starting;
    const live = this.agents.filter(
      (a) => a.lostAtMs === null && (a.producerOptions.length > 0 || a.consumerOptions.length > 0),
    );
    await Promise.all(
      live.map(async (a) => {
        try {
          this.absorb(a, await a.link.request('take', {}, this.setup.lossTimeoutMs));
        } catch (err) {
          if (this.stopping) return;
          const reason =
            err instanceof TimeoutError
              ? `no answer within ${this.setup.lossTimeoutMs} ms (agents.lossTimeoutMs)`
              : (err as Error).message;
          this.lose(a, reason);
        }
      }),
    );
    this.checkFinished();
    if (this.failure) throw this.failure;
  }

  /** A take's (or stop's) reply into the agent's pending intervals. */
  private absorb(agent: Agent, reply: Reply): void {
    // A malformed reply throws, naming the field, before anything of it is kept; the agent is then
    // lost, named, with that reason.
    const producers = parseInterval(reply.producers, 'producers');
    const consumers = parseInterval(reply.consumers, 'consumers');
    agent.pending.producers.push(producers);
    agent.pending.consumers.push(consumers);
    if (reply.producersFinished === true) agent.producersFinished = true;
    if (typeof reply.error === 'string') agent.error = text(reply.error);
  }

  /** What the role's clients did since the last take, merged over the agents. */
  async take(role: AgentRole): Promise<ClientInterval> {
    await this.round();
    const parts: ClientInterval[] = [];
    for (const agent of this.agents) {
      parts.push(...agent.pending[role]);
      agent.handed[role].push(...agent.pending[role]);
      agent.pending[role] = [];
    }
    return parts.length > 0 ? mergeIntervals(parts) : emptyInterval();
  }

  /** The run cut a sample: what was handed for it counts in each agent's figures unless it was warm-up. */
  cut(warmup: boolean): void {
    for (const agent of this.agents) {
      for (const role of ['producers', 'consumers'] as const) {
        if (!warmup) {
          const totals = agent.measured[role];
          for (const part of agent.handed[role]) {
            totals.records += part.records;
            totals.valueBytes += part.valueBytes;
            totals.errors += part.errors;
            totals.latency.addBuckets(part.latency);
          }
        }
        agent.handed[role] = [];
      }
    }
  }

  lastError(role: AgentRole): string | null {
    const agent = this.agents.find(
      (a) => a.error && (role === 'producers' ? a.producerOptions.length : a.consumerOptions.length) > 0,
    );
    return agent ? `agent ${label(agent)}: ${agent.error}` : null;
  }

  properties(role: AgentRole): Record<string, string> {
    return this.agents.map((a) => a.properties[role]).find((p) => p !== undefined) ?? {};
  }

  /** Stops every agent's clients, frees the agents for their next run and closes the connections. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.poller) clearTimeout(this.poller);
      this.onFinished?.();
      await this.inflight?.catch(() => {});
      await Promise.allSettled(
        this.agents.map(async (a) => {
          if (a.prepared && a.lostAtMs === null && !a.link.closedReason) {
            try {
              await a.link.request('stop', {}, STOP_TIMEOUT_MS);
              if (this.verify) await this.collectAcknowledged(a, this.verify.topics);
              await a.link.request('release', {}, HELLO_TIMEOUT_MS);
            } catch (err) {
              const why = `stopping agent ${label(a)}: ${(err as Error).message}`;
              this.setup.log('warn', why);
              if (this.verify && a.producerOptions.length > 0) a.acknowledged ??= { unknown: why };
            }
          }
          a.link.close();
        }),
      );
    })();
    return this.stopping;
  }

  /** The stored breakdown: each agent's share, clock and figures over `measuredSeconds`. */
  breakdown(measuredSeconds: number): AgentsRun {
    const side = (t: SideTotals): AgentSideFigures => {
      const h = t.latency;
      const ms = (us: number) => Math.round(us) / 1000;
      return {
        records: t.records,
        valueBytes: t.valueBytes,
        recordsPerSec: measuredSeconds > 0 ? Number((t.records / measuredSeconds).toFixed(1)) : 0,
        errors: t.errors,
        latencyMs: h.count
          ? {
              p50: ms(h.percentile(50)),
              p99: ms(h.percentile(99)),
              p999: ms(h.percentile(99.9)),
              max: ms(h.max()),
            }
          : null,
        histogram: h.toBuckets(),
      };
    };
    const agents: AgentBreakdown[] = this.agents.map((a) => ({
      name: a.name,
      address: a.endpoint.address,
      host: a.host,
      cores: a.cores,
      kbench: a.kbench,
      roles: a.endpoint.roles,
      producers: a.producerOptions.length,
      consumers: a.consumerOptions.length,
      clockOffsetMs: Math.round(a.clockOffsetMicros) / 1000,
      clockUncertaintyMs: Math.round(a.clockUncertaintyMicros) / 1000,
      lostAtMs: a.lostAtMs,
      lostReason: a.lostReason,
      produced: side(a.measured.producers),
      consumed: side(a.measured.consumers),
    }));
    let e2e = 0;
    for (const p of this.agents.filter((a) => a.producerOptions.length > 0))
      for (const c of this.agents.filter((a) => a.consumerOptions.length > 0))
        if (p !== c) e2e = Math.max(e2e, p.clockUncertaintyMicros + c.clockUncertaintyMicros);
    return { agents, e2eClockUncertaintyMs: Math.round(e2e) / 1000, onLoss: this.setup.onLoss };
  }
}

/** Connects to one agent, says hello, and measures its clock against ours. */
async function hello(endpoint: AgentEndpoint, setup: AgentsSetup): Promise<Agent> {
  const link = await AgentLink.connect(endpoint.address, setup);
  try {
    const reply = await link.request(
      'hello',
      { version: AGENT_PROTOCOL_VERSION, token: setup.token },
      HELLO_TIMEOUT_MS,
    );
    if (reply.version !== AGENT_PROTOCOL_VERSION)
      throw new Error(
        `speaks protocol ${JSON.stringify(reply.version)}, this kbench ${AGENT_PROTOCOL_VERSION}`,
      );
    const info = (reply.agent ?? {}) as Record<string, unknown>;
    const ops = Array.isArray(reply.ops) ? reply.ops : [];
    // NTP's way: the round trip with the least delay gives the offset, to within half of it.
    let best: { offset: number; rtt: number } | null = null;
    for (let i = 0; i < CLOCK_ROUNDS; i++) {
      const t0 = nowMicros();
      const r = await link.request('time', {}, HELLO_TIMEOUT_MS);
      const t1 = nowMicros();
      const a = r.micros;
      if (typeof a !== 'number' || !Number.isFinite(a)) throw new Error('time: the reply has no micros');
      const rtt = t1 - t0;
      if (!best || rtt < best.rtt) best = { offset: a - (t0 + t1) / 2, rtt };
    }
    const clock = best as { offset: number; rtt: number };
    return {
      endpoint,
      link,
      name: endpoint.name ?? (text(info.name) || endpoint.address),
      host: text(info.host, '?'),
      cores: typeof info.cores === 'number' && Number.isFinite(info.cores) ? info.cores : 0,
      kbench: text(info.kbench, '?'),
      clockOffsetMicros: clock.offset,
      clockUncertaintyMicros: clock.rtt / 2,
      acknowledges: ops.includes('acknowledged'),
      acknowledged: null,
      producerOptions: [],
      consumerOptions: [],
      lostAtMs: null,
      lostReason: null,
      prepared: false,
      producersFinished: false,
      error: null,
      pending: { producers: [], consumers: [] },
      handed: { producers: [], consumers: [] },
      measured: { producers: newTotals(), consumers: newTotals() },
      properties: {},
    };
  } catch (err) {
    link.close();
    const message = (err as Error).message;
    throw new Error(
      /token/.test(message)
        ? `${message} (the agent token: --agent-token-file, KBENCH_AGENT_TOKEN or the profile's agentToken)`
        : message,
    );
  }
}

/** One role's clients on the agents, as the run drives any driver's clients. */
class AgentClients implements LoadClients {
  readonly finished: Promise<void>;

  constructor(
    private readonly fleet: AgentFleet,
    private readonly role: AgentRole,
  ) {
    this.finished = role === 'producers' ? fleet.producersFinished : new Promise<void>(() => {});
  }

  start(): void {
    if (this.role === 'producers') void this.fleet.startProducers().catch(() => {});
  }

  take(): Promise<ClientInterval> {
    return this.fleet.take(this.role);
  }

  stop(): Promise<void> {
    return this.fleet.stop();
  }

  lastError(): string | null {
    return this.fleet.lastError(this.role);
  }

  /** What the producers had acknowledged (the record check), once they have stopped. */
  acknowledged(): Acknowledged {
    return this.fleet.acknowledged();
  }

  properties(): Record<string, string> {
    return this.fleet.properties(this.role);
  }
}
