// `kbench profile add|list|show|remove`: named external targets in $KBENCH_HOME/profiles.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ProfileExistsError, ProfileStore } from '@kbench/engine';
import {
  type AgentEndpoint,
  METRICS_KINDS,
  type MetricsKind,
  maskProfile,
  metricsUrlProblem,
  PASSWORD_SASL_MECHANISMS,
  parseAgentsList,
  SASL_MECHANISMS,
  type TargetProfile,
} from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { table } from '../format.js';
import { UsageError } from '../usage.js';

const SUBCOMMANDS = ['add', 'list', 'show', 'remove'];

export async function profileCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'add') return add(rest);
  if (sub === 'list') return list(rest);
  if (sub === 'show') return show(rest);
  if (sub === 'remove' || sub === 'rm') return remove(rest);
  throw new UsageError(
    `kbench profile: ${sub === undefined ? 'name a subcommand' : `unknown subcommand ${JSON.stringify(sub)}`}: ${SUBCOMMANDS.join(', ')} (see kbench help)`,
  );
}

/** A file flag: the absolute path of a file that exists now. */
function file(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const absolute = path.resolve(value);
  if (!existsSync(absolute)) throw new UsageError(`kbench profile add: --${flag}: no file ${absolute}`);
  return absolute;
}

function readPassword(values: { password?: string; 'password-stdin'?: boolean; 'password-env'?: string }) {
  const given = [
    values.password !== undefined,
    values['password-stdin'],
    values['password-env'] !== undefined,
  ];
  if (given.filter(Boolean).length > 1) {
    throw new UsageError('kbench profile add: give one of --password, --password-stdin, --password-env');
  }
  if (values['password-stdin']) return readFileSync(0, 'utf8').replace(/\r?\n$/, '');
  if (values['password-env'] !== undefined) {
    const value = process.env[values['password-env']];
    if (value === undefined)
      throw new UsageError(`kbench profile add: --password-env: ${values['password-env']} is not set`);
    return value;
  }
  return values.password;
}

async function add(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('profile add', argv, {
    bootstrap: { type: 'string' },
    description: { type: 'string' },
    tls: { type: 'boolean' },
    ca: { type: 'string' },
    cert: { type: 'string' },
    key: { type: 'string' },
    insecure: { type: 'boolean' },
    servername: { type: 'string' },
    sasl: { type: 'string' },
    username: { type: 'string' },
    password: { type: 'string' },
    'password-stdin': { type: 'boolean' },
    'password-env': { type: 'string' },
    'token-file': { type: 'string' },
    'token-command': { type: 'string' },
    'max-rate': { type: 'string' },
    agents: { type: 'string' },
    'agent-token-file': { type: 'string' },
    'agent-ca': { type: 'string' },
    'agent-insecure': { type: 'boolean' },
    metrics: { type: 'string' },
    'metrics-kind': { type: 'string' },
    replace: { type: 'boolean' },
  });
  if (positionals.length !== 1) {
    throw new UsageError(
      'kbench profile add: give one profile name, e.g. kbench profile add shared --bootstrap host:9092',
    );
  }
  if (values.bootstrap === undefined) {
    throw new UsageError('kbench profile add: --bootstrap host:port[,host:port] is required');
  }
  const ca = file('ca', values.ca);
  const cert = file('cert', values.cert);
  const key = file('key', values.key);
  const tlsWanted =
    values.tls || values.insecure || values.servername !== undefined || [ca, cert, key].some(Boolean);
  const password = readPassword(values);
  const mechanism = values.sasl?.toLowerCase();
  if (mechanism !== undefined && !(SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
    throw new UsageError(
      `kbench profile add: --sasl must be one of ${SASL_MECHANISMS.join(', ')} (got ${JSON.stringify(values.sasl)})`,
    );
  }
  if (mechanism === undefined && (values.username !== undefined || password !== undefined)) {
    throw new UsageError(
      `kbench profile add: --username and a password need --sasl ${PASSWORD_SASL_MECHANISMS.join('|')}`,
    );
  }
  const tokenFile = values['token-file'];
  const tokenCommand = values['token-command'];
  const token = tokenFile !== undefined || tokenCommand !== undefined;
  if (mechanism !== 'oauthbearer' && token) {
    throw new UsageError('kbench profile add: --token-file and --token-command need --sasl oauthbearer');
  }
  if (mechanism === 'oauthbearer') {
    if (values.username !== undefined || password !== undefined) {
      throw new UsageError(
        'kbench profile add: --sasl oauthbearer takes a token, not --username or a password: --token-file F or --token-command CMD',
      );
    }
    if (tokenFile !== undefined && tokenCommand !== undefined) {
      throw new UsageError('kbench profile add: give one of --token-file and --token-command');
    }
    if (!token) {
      throw new UsageError(
        'kbench profile add: --sasl oauthbearer needs a token: --token-file F (a file holding it) or --token-command CMD (a command printing it)',
      );
    }
  } else if (mechanism !== undefined && password === undefined) {
    throw new UsageError(
      'kbench profile add: --sasl needs a password: --password-stdin (safest), --password-env VAR or --password P',
    );
  }
  let maxRate: number | undefined;
  if (values['max-rate'] !== undefined) {
    maxRate = Number(values['max-rate']);
    if (!Number.isFinite(maxRate) || maxRate <= 0) {
      throw new UsageError(
        `kbench profile add: --max-rate must be a number of records per second above 0 (got ${JSON.stringify(values['max-rate'])})`,
      );
    }
  }
  const agents = agentFields(values);
  const metrics = metricsField(values);
  const input = {
    name: positionals[0],
    bootstrap: values.bootstrap,
    ...(values.description !== undefined ? { description: values.description } : {}),
    ...(tlsWanted
      ? {
          tls: {
            ...(ca ? { ca } : {}),
            ...(cert ? { cert } : {}),
            ...(key ? { key } : {}),
            ...(values.servername !== undefined ? { servername: values.servername } : {}),
            rejectUnauthorized: !values.insecure,
          },
        }
      : {}),
    ...(mechanism === 'oauthbearer'
      ? {
          sasl: {
            mechanism,
            ...(tokenFile !== undefined ? { tokenFile: file('token-file', tokenFile) } : {}),
            ...(tokenCommand !== undefined ? { tokenCommand } : {}),
          },
        }
      : mechanism !== undefined
        ? { sasl: { mechanism, username: values.username ?? '', password } }
        : {}),
    ...(maxRate !== undefined ? { maxRate } : {}),
    ...agents,
    ...metrics,
  };
  const store = new ProfileStore();
  let saved: TargetProfile;
  try {
    saved = store.save(input, { replace: Boolean(values.replace) });
  } catch (err) {
    if (err instanceof ProfileExistsError)
      throw new UsageError(`kbench profile add: ${err.message}; add --replace to replace it`);
    throw err;
  }
  process.stderr.write(`saved profile ${saved.name} in ${store.dir} (readable by you only)\n`);
  return 0;
}

/** --metrics URL,... and --metrics-kind as the profile's metrics endpoints. */
function metricsField(values: { metrics?: string; 'metrics-kind'?: string }): {
  metrics?: { url: string; kind: MetricsKind }[];
} {
  const { metrics: list, 'metrics-kind': kindText } = values;
  if (list === undefined) {
    if (kindText !== undefined)
      throw new UsageError('kbench profile add: --metrics-kind goes with --metrics');
    return {};
  }
  const kind = (kindText ?? 'auto') as MetricsKind;
  if (!METRICS_KINDS.includes(kind)) {
    throw new UsageError(
      `kbench profile add: --metrics-kind must be one of ${METRICS_KINDS.join(', ')} (got ${JSON.stringify(kindText)})`,
    );
  }
  const urls = list
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  if (urls.length === 0)
    throw new UsageError(
      'kbench profile add: --metrics needs http(s) URLs, e.g. http://broker-1:9644/public_metrics',
    );
  for (const url of urls) {
    const problem = metricsUrlProblem(url);
    if (problem) throw new UsageError(`kbench profile add: --metrics ${url}: ${problem}`);
  }
  return { metrics: urls.map((url) => ({ url, kind })) };
}

/** --agents, --agent-token-file, --agent-ca and --agent-insecure as the profile's agent fields. */
function agentFields(values: {
  agents?: string;
  'agent-token-file'?: string;
  'agent-ca'?: string;
  'agent-insecure'?: boolean;
}): { agents?: AgentEndpoint[]; agentTokenFile?: string; agentTls?: { ca?: string; insecure?: boolean } } {
  const { agents: list, 'agent-token-file': tokenFile, 'agent-ca': ca, 'agent-insecure': insecure } = values;
  if (list === undefined) {
    if (tokenFile !== undefined || ca !== undefined || insecure)
      throw new UsageError(
        'kbench profile add: --agent-token-file, --agent-ca and --agent-insecure go with --agents',
      );
    return {};
  }
  let agents: AgentEndpoint[];
  try {
    agents = parseAgentsList(list);
  } catch (err) {
    throw new UsageError(`kbench profile add: --agents: ${(err as Error).message}`);
  }
  const caFile = file('agent-ca', ca);
  return {
    agents,
    ...(tokenFile !== undefined ? { agentTokenFile: file('agent-token-file', tokenFile) } : {}),
    ...(caFile !== undefined || insecure
      ? { agentTls: { ...(caFile ? { ca: caFile } : {}), ...(insecure ? { insecure } : {}) } }
      : {}),
  };
}

function securityColumn(p: TargetProfile): string {
  const tls = p.tls ? (p.tls.rejectUnauthorized ? 'TLS' : 'TLS (unverified)') : '';
  const sasl = !p.sasl
    ? ''
    : p.sasl.mechanism === 'oauthbearer'
      ? `SASL oauthbearer, token from ${p.sasl.tokenFile ?? 'a command'}`
      : `SASL ${p.sasl.mechanism} as ${p.sasl.username}`;
  return [tls, sasl].filter(Boolean).join(', ') || 'plaintext';
}

async function list(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('profile list', argv, { json: { type: 'boolean' } });
  if (positionals.length > 0)
    throw new UsageError(`kbench profile list: unexpected argument ${JSON.stringify(positionals[0])}`);
  const store = new ProfileStore();
  const profiles = store.list().map(maskProfile);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(profiles, null, 2)}\n`);
    return 0;
  }
  if (profiles.length === 0) {
    process.stdout.write(`no profiles in ${store.dir} (add one with kbench profile add)\n`);
    return 0;
  }
  const rows = profiles.map((p) => [
    p.name,
    p.bootstrap,
    securityColumn(p),
    p.maxRate === undefined ? '-' : String(p.maxRate),
  ]);
  process.stdout.write(`${table([['name', 'bootstrap', 'security', 'max rec/s'], ...rows])}\n`);
  return 0;
}

function one(command: string, argv: string[], extra: Record<string, { type: 'boolean' }> = {}) {
  const parsed = parseCommandArgs(`profile ${command}`, argv, extra);
  if (parsed.positionals.length !== 1)
    throw new UsageError(`kbench profile ${command}: give one profile name`);
  return { name: parsed.positionals[0] as string, values: parsed.values };
}

async function show(argv: string[]): Promise<number> {
  const { name, values } = one('show', argv, { json: { type: 'boolean' } });
  const store = new ProfileStore();
  const profile = store.get(name);
  if (!profile)
    throw new UsageError(`kbench profile show: no profile ${JSON.stringify(name)} in ${store.dir}`);
  const masked = maskProfile(profile);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(masked, null, 2)}\n`);
    return 0;
  }
  const rows: string[][] = [
    ['name', masked.name],
    ['bootstrap', masked.bootstrap],
    ['description', masked.description || '-'],
    ['security', securityColumn(masked)],
  ];
  if (masked.tls) {
    for (const field of ['ca', 'cert', 'key', 'passphrase', 'servername'] as const) {
      const value = masked.tls[field];
      if (value !== undefined) rows.push([`tls.${field}`, value]);
    }
    rows.push(['tls.rejectUnauthorized', String(masked.tls.rejectUnauthorized)]);
  }
  if (masked.sasl?.mechanism === 'oauthbearer') {
    rows.push(['sasl.mechanism', masked.sasl.mechanism]);
    if (masked.sasl.tokenFile !== undefined) rows.push(['sasl.tokenFile', masked.sasl.tokenFile]);
    if (masked.sasl.tokenCommand !== undefined) rows.push(['sasl.tokenCommand', masked.sasl.tokenCommand]);
  } else if (masked.sasl) {
    rows.push(['sasl.mechanism', masked.sasl.mechanism], ['sasl.username', masked.sasl.username]);
    rows.push(['sasl.password', masked.sasl.password]);
  }
  rows.push(['maxRate', masked.maxRate === undefined ? '-' : `${masked.maxRate} records/s`]);
  for (const [i, m] of (masked.metrics ?? []).entries())
    rows.push([`metrics.${i}`, `${m.url} (${m.kind}${m.node ? `, node ${m.node}` : ''})`]);
  process.stdout.write(`${table(rows)}\n`);
  return 0;
}

async function remove(argv: string[]): Promise<number> {
  const { name } = one('remove', argv);
  const store = new ProfileStore();
  if (!store.remove(name))
    throw new UsageError(`kbench profile remove: no profile ${JSON.stringify(name)} in ${store.dir}`);
  process.stderr.write(`removed profile ${name}\n`);
  return 0;
}
