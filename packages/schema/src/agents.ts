// Load agents (docs/agents.md): the machines a run's producers and consumers run on, as a profile
// or `--agents` names them, and what each one did, as the stored run keeps it.
import { z } from 'zod';

/** The version of the controller-agent protocol this kbench speaks. */
export const AGENT_PROTOCOL_VERSION = 1;
export const AGENT_ROLES = ['producers', 'consumers'] as const;
export type AgentRole = (typeof AGENT_ROLES)[number];
export const AGENT_ON_LOSS = ['fail', 'continue'] as const;
/** The most agents one run may name. */
export const MAX_AGENTS = 256;

/** host:port of an agent: a host name, an IPv4 address or a bracketed IPv6 address, and a port 1 to 65535. */
const ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

/** An agent a run sends load from. */
export interface AgentEndpoint {
  /** host:port where `kbench agent` listens. */
  address: string;
  /** What it runs: producers, consumers or both (the default). */
  roles: AgentRole[];
  /** A name for the run's breakdown; the agent's own name when absent. */
  name?: string;
}

/** How the controller checks an agent started with --tls-cert/--tls-key. */
export interface AgentTlsSettings {
  /** The CA that signed the agents' certificates: an absolute file path or PEM text; absent: the system's CAs. */
  ca?: string;
  /** Accept any certificate (no issuer or name check). */
  insecure?: boolean;
}

/** Why an address is not one, or null when it is. */
export function agentAddressProblem(address: string): string | null {
  const m = ADDRESS.exec(address);
  if (!m) return `must be host:port (got ${JSON.stringify(address)})`;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return `port must be 1 to 65535 (got ${JSON.stringify(address)})`;
  return null;
}

const address = z.string().superRefine((value, ctx) => {
  const problem = agentAddressProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const roles = z
  .array(
    z.enum(AGENT_ROLES, {
      error: (issue) => `must be one of ${AGENT_ROLES.join(', ')} (got ${JSON.stringify(issue.input)})`,
    }),
  )
  .min(1, `must list at least one of ${AGENT_ROLES.join(', ')}`);

export const agentEntryShape = z.strictObject({
  address,
  roles: roles.optional(),
  name: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits and . _ -')
    .optional(),
});

/** A profile's `agents`: each "host:port" or { address, roles?, name? }. */
export const agentsShape = z
  .array(z.union([address, agentEntryShape]))
  .min(1, 'must list at least one agent')
  .max(MAX_AGENTS, `must list at most ${MAX_AGENTS} agents`)
  .transform((list): AgentEndpoint[] =>
    list.map((entry) =>
      typeof entry === 'string'
        ? { address: entry, roles: [...AGENT_ROLES] }
        : {
            address: entry.address,
            roles: entry.roles ? [...new Set(entry.roles)] : [...AGENT_ROLES],
            ...(entry.name !== undefined ? { name: entry.name } : {}),
          },
    ),
  );

export const AGENT_FIELDS = ['address', 'roles', 'name'];

/**
 * `--agents host:port,producers@host:port,consumers@host:port`: each entry an address, optionally
 * after the role it takes. Throws an Error whose message says what is wrong with which entry.
 */
export function parseAgentsList(text: string): AgentEndpoint[] {
  const entries = text.split(',').map((e) => e.trim());
  if (text.trim() === '' || entries.some((e) => e === ''))
    throw new Error(
      `must be a comma-separated list of [producers@|consumers@]host:port (got ${JSON.stringify(text)})`,
    );
  if (entries.length > MAX_AGENTS) throw new Error(`at most ${MAX_AGENTS} agents (got ${entries.length})`);
  const seen = new Set<string>();
  return entries.map((entry) => {
    const at = entry.indexOf('@');
    const role = at >= 0 ? entry.slice(0, at) : null;
    const addr = at >= 0 ? entry.slice(at + 1) : entry;
    if (role !== null && !(AGENT_ROLES as readonly string[]).includes(role))
      throw new Error(`${JSON.stringify(entry)}: the role before @ must be one of ${AGENT_ROLES.join(', ')}`);
    const problem = agentAddressProblem(addr);
    if (problem) throw new Error(`${JSON.stringify(entry)}: ${problem}`);
    if (seen.has(addr)) throw new Error(`${JSON.stringify(addr)} is named twice`);
    seen.add(addr);
    return { address: addr, roles: role ? [role as AgentRole] : [...AGENT_ROLES] };
  });
}

/** What one side (producers or consumers) of one agent did in the measured phase. */
export const agentSideFiguresSchema = z.object({
  records: z.number(),
  valueBytes: z.number(),
  recordsPerSec: z.number(),
  errors: z.number(),
  /** Publish latency (produced) or end-to-end latency (consumed) in ms; null without records. */
  latencyMs: z.object({ p50: z.number(), p99: z.number(), p999: z.number(), max: z.number() }).nullable(),
  /** The measured latency histogram in µs (the engine's buckets), so the run's can be checked as their merge. */
  histogram: z.object({
    buckets: z.array(z.number()),
    counts: z.array(z.number()),
    count: z.number(),
    sum: z.number(),
    max: z.number(),
  }),
});
export type AgentSideFigures = z.infer<typeof agentSideFiguresSchema>;

/** One agent of a run, as the stored run keeps it. */
export const agentBreakdownSchema = z.object({
  name: z.string(),
  address: z.string(),
  /** The machine the agent runs on, as it reported it. */
  host: z.string(),
  cores: z.number(),
  /** The agent's kbench version. */
  kbench: z.string(),
  roles: z.array(z.enum(AGENT_ROLES)),
  /** Clients it ran. */
  producers: z.number(),
  consumers: z.number(),
  /** Its clock minus the controller's, measured at the start (the least-delayed of 16 round trips). */
  clockOffsetMs: z.number(),
  /** Half that round trip: the offset is right to within this. */
  clockUncertaintyMs: z.number(),
  /** When it was lost, in ms since load began (0: before load began), or null. */
  lostAtMs: z.number().nullable(),
  lostReason: z.string().nullable(),
  produced: agentSideFiguresSchema,
  consumed: agentSideFiguresSchema,
});
export type AgentBreakdown = z.infer<typeof agentBreakdownSchema>;

/** A run's agents: `environment.agents` of a run whose load came from agents. */
export const agentsRunSchema = z.object({
  agents: z.array(agentBreakdownSchema),
  /**
   * The largest clock uncertainty between a producer's agent and a consumer's (u_A + u_B; 0 when one
   * agent ran both): end-to-end latency is right to within this.
   */
  e2eClockUncertaintyMs: z.number(),
  onLoss: z.enum(AGENT_ON_LOSS),
});
export type AgentsRun = z.infer<typeof agentsRunSchema>;

/** The warning for a run that lost agents and went on without them, or null. */
export function agentLossWarning(run: AgentsRun | undefined): string | null {
  const lost = run?.agents.filter((a) => a.lostAtMs !== null) ?? [];
  if (lost.length === 0) return null;
  const which = lost
    .map((a) => `${a.name} (${a.address}) at ${((a.lostAtMs ?? 0) / 1000).toFixed(1)} s: ${a.lostReason}`)
    .join('; ');
  return `lost ${lost.length === 1 ? 'an agent' : `${lost.length} agents`} during the run and went on without ${lost.length === 1 ? 'it' : 'them'} (${which}): the figures after that are from the others only`;
}

/** What is wrong with a profile's `agents` entry that is neither an address nor an object of agent fields. */
export function agentEntryProblem(entry: unknown): string {
  if (typeof entry === 'string') return agentAddressProblem(entry) ?? 'must be host:port';
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
    return 'must be "host:port" or { address, roles?, name? }';
  const parsed = agentEntryShape.safeParse(entry);
  if (parsed.success) return 'must be "host:port" or { address, roles?, name? }';
  const first = parsed.error.issues[0];
  if (first?.code === 'unrecognized_keys')
    return `unknown field ${first.keys.join(', ')}; allowed fields here: ${AGENT_FIELDS.join(', ')}`;
  return `${first?.path.join('.') ?? ''}: ${first?.message ?? 'invalid'}`;
}
