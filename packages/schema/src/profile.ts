// A named target profile: an external cluster's bootstrap servers, how to reach it (TLS, SASL) and
// the highest rate kbench may send it. Stored in $KBENCH_HOME/profiles (see @kbench/engine), named by
// `target: <name>` in a scenario. Secrets live only there: never in a scenario, a run or an export.
import { z } from 'zod';
import {
  AGENT_FIELDS,
  type AgentEndpoint,
  type AgentTlsSettings,
  agentEntryProblem,
  agentsShape,
} from './agents.js';
import { formatIssue, formatPath, invalidTypeMessage, type ScenarioIssue } from './errors.js';

export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];
/** The mechanisms that log in with a user name and a password (all but oauthbearer). */
export const PASSWORD_SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;
export type PasswordSaslMechanism = (typeof PASSWORD_SASL_MECHANISMS)[number];

/** Targets that are not profiles. */
export const RESERVED_TARGETS = ['bundled', 'kafka'] as const;

/** host:port[,host:port]: bootstrap servers given directly as a target. */
export const BOOTSTRAP_PATTERN = /^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/;

/** A profile name: a letter, then letters, digits, dot, dash or underscore (no colon, so never a bootstrap). */
export const PROFILE_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;

export function isBootstrapList(target: string): boolean {
  return BOOTSTRAP_PATTERN.test(target);
}

/** What kind of target a scenario's `target` names. */
export function targetKind(target: string): 'bundled' | 'kafka' | 'bootstrap' | 'profile' {
  if (target === 'bundled' || target === 'kafka') return target;
  return isBootstrapList(target) ? 'bootstrap' : 'profile';
}

export interface TlsSettings {
  /** CA certificates: an absolute file path or PEM text; absent: the system's CAs. */
  ca?: string;
  /** Client certificate (mutual TLS): a path or PEM text. */
  cert?: string;
  /** Client private key: a path or PEM text (secret when PEM). */
  key?: string;
  /** Passphrase of an encrypted key (secret). */
  passphrase?: string;
  /** Check the brokers' certificates against the CAs (default true). */
  rejectUnauthorized: boolean;
  /** TLS server name (SNI) when it differs from the bootstrap host. */
  servername?: string;
}

export interface PasswordSasl {
  mechanism: PasswordSaslMechanism;
  username: string;
  /** Secret. */
  password: string;
}

/**
 * OAUTHBEARER (KIP-255): a bearer token (a JWT) read at each connection from a file or from what a
 * command prints, exactly one of them. The token is the secret; the file's path and the command are not.
 */
export interface OauthBearerSasl {
  mechanism: 'oauthbearer';
  /** An absolute path to a file holding the token. */
  tokenFile?: string;
  /** A shell command (sh -c) that prints the token on stdout. */
  tokenCommand?: string;
}

export type SaslSettings = PasswordSasl | OauthBearerSasl;

export interface TargetProfile {
  name: string;
  description: string;
  /** host:port[,host:port]. */
  bootstrap: string;
  /** Present: connect with TLS. */
  tls?: TlsSettings;
  sasl?: SaslSettings;
  /** The highest rate (records/s, all producers together) kbench may send this target. */
  maxRate?: number;
  /** Load agents the run's clients run on (docs/agents.md), instead of this machine. */
  agents?: AgentEndpoint[];
  /** The agents' token (secret), or a file holding it. */
  agentToken?: string;
  agentTokenFile?: string;
  /** How agents started with TLS are checked. */
  agentTls?: AgentTlsSettings;
  /** Prometheus endpoints of the cluster, scraped every second during a run (docs/targets.md). */
  metrics?: MetricsEndpoint[];
}

/** How a metrics endpoint names its series: Kafka's JMX exporter, Redpanda's /public_metrics, kbench-broker's. */
export const METRICS_KINDS = ['auto', 'kafka-jmx', 'redpanda', 'kbench'] as const;
export type MetricsKind = (typeof METRICS_KINDS)[number];
/** At most this many endpoints a profile (each scraped every second). */
export const MAX_METRICS_ENDPOINTS = 32;

export interface MetricsEndpoint {
  /** http(s)://host:port/path; scraped with GET, nothing else. */
  url: string;
  /** auto (the default) tells the kind by the series' names at the first scrape. */
  kind: MetricsKind;
  /** The node's name on charts (default host:port). */
  node?: string;
}

export class ProfileError extends Error {
  readonly issues: ScenarioIssue[];
  constructor(issues: ScenarioIssue[], name?: string) {
    super(
      `invalid profile${name ? ` ${JSON.stringify(name)}` : ''}\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`,
    );
    this.name = 'ProfileError';
    this.issues = issues;
  }
}

const PEM = /-----BEGIN [A-Z0-9 ]+-----/;

/** A PEM text or an absolute path to a file (read when kbench connects). */
const pemOrPath = z.string().refine((v) => PEM.test(v) || v.startsWith('/'), {
  message: 'must be an absolute file path or PEM text (-----BEGIN ...)',
});

const nonEmpty = (what: string) => z.string().min(1, `must be a non-empty ${what}`);

const tlsShape = z.strictObject({
  ca: pemOrPath.optional(),
  cert: pemOrPath.optional(),
  key: pemOrPath.optional(),
  passphrase: z.string().optional(),
  rejectUnauthorized: z.boolean().default(true),
  servername: nonEmpty('host name').optional(),
});

/** A token command's length: a command line, not a script. */
const MAX_TOKEN_COMMAND = 4096;

const saslShape = z
  .strictObject({
    mechanism: z.enum(SASL_MECHANISMS, {
      error: (issue) => `must be one of ${SASL_MECHANISMS.join(', ')} (got ${JSON.stringify(issue.input)})`,
    }),
    username: nonEmpty('user name').optional(),
    password: nonEmpty('password').optional(),
    tokenFile: z
      .string()
      .refine((v) => v.startsWith('/'), { message: 'must be an absolute path to the file holding the token' })
      .optional(),
    tokenCommand: z
      .string()
      .min(1, 'must be a non-empty shell command that prints the token')
      .max(MAX_TOKEN_COMMAND, `must be a command line of at most ${MAX_TOKEN_COMMAND} characters`)
      .optional(),
  })
  .superRefine((sasl, ctx) => {
    const issue = (field: string, message: string) =>
      ctx.addIssue({ code: 'custom', path: [field], message });
    if (sasl.mechanism === 'oauthbearer') {
      for (const field of ['username', 'password'] as const) {
        if (sasl[field] !== undefined)
          issue(field, 'oauthbearer takes no user name or password: set sasl.tokenFile or sasl.tokenCommand');
      }
      if (sasl.tokenFile === undefined && sasl.tokenCommand === undefined)
        issue(
          'tokenFile',
          'oauthbearer needs a token: set sasl.tokenFile (an absolute path) or sasl.tokenCommand (a command printing it)',
        );
      if (sasl.tokenFile !== undefined && sasl.tokenCommand !== undefined)
        issue('tokenCommand', 'set sasl.tokenFile or sasl.tokenCommand, not both');
      return;
    }
    for (const field of ['tokenFile', 'tokenCommand'] as const) {
      if (sasl[field] !== undefined)
        issue(
          field,
          `only oauthbearer takes a token; ${sasl.mechanism} logs in with sasl.username and sasl.password`,
        );
    }
    if (sasl.username === undefined)
      issue('username', `is required for ${sasl.mechanism} (a non-empty user name)`);
    if (sasl.password === undefined)
      issue('password', `is required for ${sasl.mechanism} (a non-empty password)`);
  });

const agentTlsShape = z.strictObject({ ca: pemOrPath.optional(), insecure: z.boolean().optional() });

/** Why a metrics URL is refused, or null: http(s) only, a host, and no credentials in it. */
export function metricsUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `must be an http:// or https:// URL such as http://broker-1:9644/public_metrics (got ${JSON.stringify(url)})`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `must be an http:// or https:// URL (got ${parsed.protocol.replace(':', '')})`;
  if (parsed.username !== '' || parsed.password !== '')
    return 'must not hold a user name or password (a run stores its endpoints)';
  return null;
}

const metricsEndpointShape = z.strictObject({
  url: z
    .string()
    .max(2048, 'must be a URL of at most 2048 characters')
    .superRefine((url, ctx) => {
      const problem = metricsUrlProblem(url);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  kind: z
    .enum(METRICS_KINDS, {
      error: (issue) => `must be one of ${METRICS_KINDS.join(', ')} (got ${JSON.stringify(issue.input)})`,
    })
    .default('auto'),
  node: z.string().min(1, 'must be a non-empty name').max(64, 'must be at most 64 characters').optional(),
});

const ALLOWED: Record<string, string[]> = {
  '': [
    'name',
    'description',
    'bootstrap',
    'tls',
    'sasl',
    'maxRate',
    'agents',
    'agentToken',
    'agentTokenFile',
    'agentTls',
    'metrics',
  ],
  tls: Object.keys(tlsShape.shape),
  sasl: Object.keys(saslShape.shape),
  agentTls: Object.keys(agentTlsShape.shape),
};

const profileShape = z
  .strictObject({
    name: z
      .string()
      .regex(
        PROFILE_NAME_PATTERN,
        'must start with a letter and hold up to 64 letters, digits and . _ - (no colon)',
      )
      .refine((n) => !(RESERVED_TARGETS as readonly string[]).includes(n), {
        message: `must not be ${RESERVED_TARGETS.join(' or ')} (those are built-in targets)`,
      }),
    description: z.string().max(1000).default(''),
    bootstrap: z.string().regex(BOOTSTRAP_PATTERN, 'must be bootstrap servers host:port[,host:port]'),
    tls: z
      .union([z.boolean(), tlsShape])
      .optional()
      .transform((v) => (v === true ? tlsShape.parse({}) : v === false ? undefined : v)),
    // Checked above: the fields of the mechanism named, and only those.
    sasl: saslShape.transform((sasl) => sasl as SaslSettings).optional(),
    maxRate: z
      .number({ error: 'must be a number of records per second above 0' })
      .positive('must be a number of records per second above 0')
      .optional(),
    agents: agentsShape.optional(),
    agentToken: nonEmpty('token').optional(),
    agentTokenFile: z.string().startsWith('/', 'must be an absolute file path').optional(),
    agentTls: agentTlsShape.optional(),
    metrics: z
      .array(metricsEndpointShape)
      .max(MAX_METRICS_ENDPOINTS, `must list at most ${MAX_METRICS_ENDPOINTS} endpoints`)
      .optional(),
  })
  .superRefine((p, ctx) => {
    if (p.agentToken !== undefined && p.agentTokenFile !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['agentTokenFile'],
        message: 'give agentToken or agentTokenFile, not both',
      });
    if (p.tls && (p.tls.cert === undefined) !== (p.tls.key === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tls', p.tls.cert === undefined ? 'cert' : 'key'],
        message: 'a client certificate needs both tls.cert and tls.key',
      });
    }
  });

/** Validates a profile (as stored or as sent by a form). Throws ProfileError naming each bad field. */
export function parseProfile(input: unknown): TargetProfile {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new ProfileError([{ path: '', message: 'a profile must be an object of fields' }]);
  }
  const parsed = profileShape.safeParse(input);
  if (parsed.success) {
    const { tls, sasl, maxRate, agents, agentToken, agentTokenFile, agentTls, metrics, ...rest } =
      parsed.data;
    return {
      ...rest,
      ...(tls ? { tls } : {}),
      ...(sasl ? { sasl } : {}),
      ...(maxRate !== undefined ? { maxRate } : {}),
      ...(agents ? { agents } : {}),
      ...(agentToken !== undefined ? { agentToken } : {}),
      ...(agentTokenFile !== undefined ? { agentTokenFile } : {}),
      ...(agentTls ? { agentTls: { ...agentTls } } : {}),
      ...(metrics && metrics.length > 0 ? { metrics } : {}),
    };
  }
  const issues: ScenarioIssue[] = [];
  for (const issue of parsed.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      const where = issue.path.map(String).join('.');
      const allowed =
        ALLOWED[where] ??
        (where.startsWith('agents.')
          ? AGENT_FIELDS
          : where.startsWith('metrics.')
            ? Object.keys(metricsEndpointShape.shape)
            : []);
      for (const key of issue.keys) {
        issues.push({
          path: formatPath([...issue.path, key]),
          message: `unknown field; allowed fields here: ${allowed.join(', ')}`,
        });
      }
    } else if (issue.code === 'invalid_union') {
      issues.push({
        path: formatPath(issue.path),
        message:
          issue.path[0] === 'agents'
            ? agentEntryProblem((input as { agents: unknown[] }).agents[Number(issue.path[1])])
            : 'must be true, false or an object of TLS settings',
      });
    } else {
      const message = issue.code === 'invalid_type' ? invalidTypeMessage(issue, input) : issue.message;
      issues.push({ path: formatPath(issue.path), message });
    }
  }
  const name = (input as { name?: unknown }).name;
  throw new ProfileError(issues, typeof name === 'string' ? name : undefined);
}

const HIDDEN = '********';

function isPem(value: string | undefined): boolean {
  return value !== undefined && PEM.test(value);
}

/** The profile with every secret replaced (password, passphrase, a PEM key), for show and the API. */
export function maskProfile(profile: TargetProfile): TargetProfile {
  const out: TargetProfile = { ...profile };
  if (profile.tls) {
    const tls = { ...profile.tls };
    if (tls.passphrase !== undefined) tls.passphrase = HIDDEN;
    if (isPem(tls.key)) tls.key = '(PEM key, hidden)';
    if (isPem(tls.cert)) tls.cert = '(PEM certificate)';
    if (isPem(tls.ca)) tls.ca = '(PEM certificate)';
    out.tls = tls;
  }
  if (profile.sasl)
    out.sasl =
      profile.sasl.mechanism === 'oauthbearer' ? { ...profile.sasl } : { ...profile.sasl, password: HIDDEN };
  if (profile.agentToken !== undefined) out.agentToken = HIDDEN;
  if (isPem(profile.agentTls?.ca)) out.agentTls = { ...profile.agentTls, ca: '(PEM certificate)' };
  return out;
}

/** Kafka's name for how a profile connects: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL. */
export function securityProtocol(profile: Pick<TargetProfile, 'tls' | 'sasl'>): string {
  if (profile.sasl) return profile.tls ? 'SASL_SSL' : 'SASL_PLAINTEXT';
  return profile.tls ? 'SSL' : 'PLAINTEXT';
}

/** How a profile connects, without credentials: `SASL_SSL scram-sha-256`, `SSL`. */
export function describeSecurity(profile: Pick<TargetProfile, 'tls' | 'sasl'>): string {
  const protocol = securityProtocol(profile);
  return profile.sasl ? `${protocol} ${profile.sasl.mechanism}` : protocol;
}
