// Kafka client properties by their Java names (`producers.config`, `consumers.config`, as
// `--producer-props` takes them): which ones kbench knows, how each value is checked, and what each
// driver does with it. A property a driver cannot honour is refused by name, never dropped.
import { z } from 'zod';
import { bool, integer, oneOf, size, text } from './fields.js';

export type ClientRole = 'producers' | 'consumers';
export type ClientDriver = 'kafkajs' | 'native';
/** A property's value as the scenario holds it once checked. */
export type ClientPropertyValue = string | number | boolean;

export interface ClientProperty {
  /** Checks and normalises a value; absent for a property that duplicates a knob (the knob's check applies). */
  value?: z.ZodType<ClientPropertyValue, unknown>;
  /** The knob of the same role this property duplicates: written as a property, it sets that knob. */
  knob?: string;
  /** What each driver that honours it does with it; a driver not named here refuses it. */
  drivers: Partial<Record<ClientDriver, string>>;
}

const INT32_MAX = 2 ** 31 - 1;
const ms = () => integer(0, INT32_MAX);
const bytes = (min: number) => size({ min, max: INT32_MAX });

/** The properties kbench passes through, per role, by their Kafka names. */
export const CLIENT_PROPERTIES: Record<ClientRole, Record<string, ClientProperty>> = {
  producers: {
    acks: { knob: 'acks', drivers: { native: 'acks', kafkajs: 'acks of each send' } },
    'batch.size': {
      knob: 'batchSize',
      drivers: { native: 'batch bytes', kafkajs: 'records per send (batch.size / message size)' },
    },
    'linger.ms': { knob: 'lingerMs', drivers: { native: 'how long a batch waits to fill' } },
    'compression.type': {
      knob: 'compression',
      drivers: { native: 'every codec', kafkajs: 'none and gzip' },
    },
    'enable.idempotence': { knob: 'idempotence', drivers: { native: 'idempotence', kafkajs: 'idempotent' } },
    'max.in.flight.requests.per.connection': {
      knob: 'maxInFlight',
      drivers: { native: 'produce requests in flight per connection', kafkajs: 'maxInFlightRequests' },
    },
    'buffer.memory': {
      value: bytes(1024),
      drivers: { native: 'bytes of records held unsent before the producer waits' },
    },
    'max.request.size': {
      value: bytes(1024),
      drivers: { native: 'largest produce request (a larger single batch is sent alone)' },
    },
    'request.timeout.ms': {
      value: integer(1, INT32_MAX),
      drivers: {
        native:
          "the produce request's timeout (how long the broker may wait for acks), and how long the producer waits for an answer before it sends the records again",
        kafkajs: "the produce request's timeout and the client's requestTimeout",
      },
    },
    'client.id': { value: text(), drivers: { kafkajs: 'clientId' } },
  },
  consumers: {
    'auto.offset.reset': {
      knob: 'startAt',
      value: oneOf(['earliest', 'latest'] as const),
      drivers: { native: 'start offset', kafkajs: 'fromBeginning' },
    },
    'fetch.min.bytes': {
      value: bytes(0),
      drivers: { native: 'min_bytes of each fetch', kafkajs: 'minBytes' },
    },
    'fetch.max.wait.ms': {
      value: ms(),
      drivers: { native: 'max_wait_ms of each fetch', kafkajs: 'maxWaitTimeInMs' },
    },
    'fetch.max.bytes': {
      value: bytes(1),
      drivers: { native: 'max_bytes of each fetch', kafkajs: 'maxBytes' },
    },
    'max.partition.fetch.bytes': {
      value: bytes(1),
      drivers: { native: 'partition_max_bytes of each fetch', kafkajs: 'maxBytesPerPartition' },
    },
    'enable.auto.commit': {
      value: bool(),
      drivers: { native: 'periodic and final offset commits', kafkajs: 'autoCommit' },
    },
    'auto.commit.interval.ms': {
      value: integer(1, INT32_MAX),
      drivers: { native: 'time between offset commits', kafkajs: 'autoCommitInterval' },
    },
    'session.timeout.ms': { value: integer(1, INT32_MAX), drivers: { kafkajs: 'sessionTimeout' } },
    'heartbeat.interval.ms': { value: integer(1, INT32_MAX), drivers: { kafkajs: 'heartbeatInterval' } },
    'request.timeout.ms': {
      value: integer(1, INT32_MAX),
      drivers: {
        native: 'how long past its max wait a fetch may go unanswered before the consumer fetches again',
        kafkajs: 'requestTimeout',
      },
    },
    'client.id': { value: text(), drivers: { kafkajs: 'clientId' } },
  },
};

const ROLE_WORD: Record<ClientRole, string> = { producers: 'producer', consumers: 'consumer' };

/** The properties of a role a driver honours, by name. */
export function honouredProperties(role: ClientRole, driver: ClientDriver): string[] {
  return Object.entries(CLIENT_PROPERTIES[role])
    .filter(([, p]) => p.drivers[driver] !== undefined)
    .map(([name]) => name);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value !== null && typeof value === 'object') return Array.isArray(value) ? 'a list' : 'an object';
  return String(value);
}

/**
 * `producers.config` / `consumers.config`: a map of known property names to values. Values of
 * properties that duplicate a knob stay as written; the scenario checks them with the knob's rule.
 */
export function clientConfigSchema(role: ClientRole) {
  const known = CLIENT_PROPERTIES[role];
  // Typed as checked values: the knob duplicates kept as written leave during scenario resolution.
  return z.unknown().transform((input, ctx): Record<string, ClientPropertyValue> => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a map of Kafka ${ROLE_WORD[role]} properties, e.g. { fetch.max.wait.ms: 500 } (got ${describe(input)})`,
      });
      return z.NEVER;
    }
    const out: Record<string, ClientPropertyValue> = {};
    for (const [name, raw] of Object.entries(input)) {
      const property = known[name];
      if (!property) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `unknown ${ROLE_WORD[role]} property; kbench passes through: ${Object.keys(known).join(', ')}`,
        });
        continue;
      }
      if (!property.value) {
        out[name] = raw as ClientPropertyValue;
        continue;
      }
      const parsed = property.value.safeParse(raw);
      if (parsed.success) out[name] = parsed.data;
      else
        for (const issue of parsed.error.issues)
          ctx.addIssue({ code: 'custom', path: [name], message: issue.message });
    }
    return out;
  });
}

export interface ResolvedClientConfig {
  /** The pass-through properties, checked. */
  config: Record<string, ClientPropertyValue>;
  /** Knob values set by properties that duplicate a knob. */
  knobs: Record<string, unknown>;
}

/**
 * Splits a role's checked config into pass-through properties and knob settings, refusing what
 * `driver` cannot honour. `knobValue` checks a value with a knob's own rule.
 */
export function resolveClientConfig(
  role: ClientRole,
  config: Record<string, unknown>,
  driver: ClientDriver,
  knobValue: (knob: string, value: unknown) => { ok: true; value: unknown } | { ok: false; message: string },
  problem: (name: string, message: string) => void,
): ResolvedClientConfig {
  const out: ResolvedClientConfig = { config: {}, knobs: {} };
  for (const [name, value] of Object.entries(config)) {
    const property = CLIENT_PROPERTIES[role][name];
    if (!property) continue;
    if (property.drivers[driver] === undefined) {
      const others = (Object.keys(property.drivers) as ClientDriver[]).filter((d) => d !== driver);
      problem(
        name,
        `the ${driver} driver cannot honour ${name}${others.length > 0 ? ` (the ${others.join(', ')} driver can)` : ''}; it honours: ${honouredProperties(role, driver).join(', ')}`,
      );
      continue;
    }
    if (property.knob) {
      const checked = knobValue(property.knob, value);
      if (checked.ok) out.knobs[property.knob] = checked.value;
      else problem(name, checked.message);
    } else out.config[name] = value as ClientPropertyValue;
  }
  return out;
}

/**
 * Properties written beside the knob they duplicate (`producers.config.acks` and `producers.acks`):
 * one of the two would silently lose, so both are refused. Reads the scenario as written.
 */
export function clientConfigConflicts(raw: unknown): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  if (raw === null || typeof raw !== 'object') return out;
  for (const role of ['producers', 'consumers'] as const) {
    const section = (raw as Record<string, unknown>)[role];
    if (section === null || typeof section !== 'object') continue;
    const config = (section as Record<string, unknown>).config;
    if (config === null || typeof config !== 'object') continue;
    for (const name of Object.keys(config)) {
      const knob = CLIENT_PROPERTIES[role][name]?.knob;
      if (knob !== undefined && (section as Record<string, unknown>)[knob] !== undefined) {
        out.push({
          path: `${role}.config.${name}`,
          message: `sets ${role}.${knob}, which the scenario also sets; write one of the two`,
        });
      }
    }
  }
  return out;
}

/**
 * The Kafka properties a resolved scenario gives its driver for a role, by name: the knobs the
 * driver honours under their Kafka names (acks=all, linger.ms=5) and the role's config.
 */
/**
 * What scenarioClientProperties reads of a resolved scenario: a structural type, so this file does
 * not import scenario.ts (which imports it for the config schema).
 */
export interface ClientSections {
  driver: ClientDriver;
  producers: { config: Record<string, unknown> };
  consumers: { config: Record<string, unknown> };
}

export function scenarioClientProperties(s: ClientSections, role: ClientRole): Record<string, string> {
  const out: Record<string, string> = {};
  const section = s[role] as unknown as Record<string, unknown>;
  for (const [name, property] of Object.entries(CLIENT_PROPERTIES[role])) {
    if (property.drivers[s.driver] === undefined) continue;
    const value = property.knob ? section[property.knob] : s[role].config[name];
    if (value !== undefined) out[name] = String(value);
  }
  return out;
}
