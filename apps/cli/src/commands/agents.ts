import { agentAddressProblem, MAX_AGENTS } from '@kbench/schema';
import {
  type AgentsManifestOptions,
  agentAddresses,
  agentsManifestYaml,
  tokenSecretCommand,
} from '../agents-manifest.js';
import { intOption, parseCommandArgs } from '../args.js';
import { UsageError } from '../usage.js';

const SUBCOMMANDS = ['manifest'];

/** `kbench agents <subcommand>`: load agents as a fleet (docs/agents.md). */
export async function agentsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'manifest') return manifestCommand(rest);
  throw new UsageError(
    `kbench agents: ${sub === undefined ? 'a subcommand is required' : `unknown subcommand ${JSON.stringify(sub)}`}; subcommands: ${SUBCOMMANDS.join(', ')}`,
  );
}

/** A DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/**
 * A StatefulSet's name: its pods carry the label controller-revision-hash=NAME-<10 characters>,
 * which must stay within a label value's 63 characters.
 */
const MAX_STATEFULSET_NAME = 52;
/** An image reference: [registry[:port]/]path[:tag][@sha256:digest], as the OCI distribution spec writes it. */
const IMAGE =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\d+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::\w[\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;
const CPU = /^(\d+(\.\d+)?|\d+m)$/;
const MEMORY = /^\d+(\.\d+)?(k|M|G|T|Ki|Mi|Gi|Ti)?$/;

function dnsLabel(flag: string, value: string, max: number): string {
  if (value.length > max || !DNS_LABEL.test(value))
    throw new UsageError(
      `kbench agents manifest: --${flag} must be a DNS-1123 label of at most ${max} characters: lower-case letters, digits and '-', starting and ending with a letter or digit (got ${JSON.stringify(value)})`,
    );
  return value;
}

function dnsSubdomain(flag: string, value: string): string {
  if (value.length > 253 || !value.split('.').every((label) => label.length <= 63 && DNS_LABEL.test(label)))
    throw new UsageError(
      `kbench agents manifest: --${flag} must be a Kubernetes object name (DNS-1123 subdomain): at most 253 characters, lower-case letters, digits, '-' and '.' (got ${JSON.stringify(value)})`,
    );
  return value;
}

function quantity(flag: string, value: string, pattern: RegExp, examples: string): string {
  if (!pattern.test(value) || Number.parseFloat(value) <= 0)
    throw new UsageError(
      `kbench agents manifest: --${flag} must be a positive Kubernetes quantity such as ${examples} (got ${JSON.stringify(value)})`,
    );
  return value;
}

async function manifestCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('agents manifest', argv, {
    count: { type: 'string' },
    name: { type: 'string' },
    namespace: { type: 'string' },
    image: { type: 'string' },
    port: { type: 'string' },
    'token-secret': { type: 'string' },
    'tls-secret': { type: 'string' },
    cpu: { type: 'string' },
    memory: { type: 'string' },
    'anti-affinity': { type: 'string' },
    allow: { type: 'string' },
  });
  if (positionals.length > 0)
    throw new UsageError(`kbench agents manifest: unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.count === undefined)
    throw new UsageError(
      `kbench agents manifest: --count N is required (1 to ${MAX_AGENTS}, the most one run takes)`,
    );
  const count = intOption('agents manifest', 'count', values.count, 1, MAX_AGENTS) as number;
  const name = dnsLabel('name', values.name ?? 'kbench-agent', MAX_STATEFULSET_NAME);
  const image = values.image ?? 'kbench-agent:latest';
  if (!IMAGE.test(image))
    throw new UsageError(
      `kbench agents manifest: --image must be an image reference such as registry.example.com/kbench-agent:0.1.0 (got ${JSON.stringify(image)})`,
    );
  const antiAffinity = values['anti-affinity'] ?? 'required';
  if (antiAffinity !== 'required' && antiAffinity !== 'preferred')
    throw new UsageError(
      `kbench agents manifest: --anti-affinity must be required or preferred (got ${JSON.stringify(antiAffinity)})`,
    );
  const allow = values.allow?.split(',').map((a) => a.trim());
  for (const target of allow ?? []) {
    const bad = agentAddressProblem(target);
    if (bad) throw new UsageError(`kbench agents manifest: --allow: each entry ${bad}`);
  }
  const memoryHint =
    values.memory !== undefined && /^\d+(\.\d+)?m$/.test(values.memory) ? ' (m is milli: 512Mi?)' : '';
  const options: AgentsManifestOptions = {
    count,
    name,
    namespace: dnsLabel('namespace', values.namespace ?? 'default', 63),
    image,
    port: intOption('agents manifest', 'port', values.port, 1, 65535) ?? 7755,
    tokenSecret: dnsSubdomain('token-secret', values['token-secret'] ?? `${name}-token`),
    ...(values['tls-secret'] !== undefined
      ? { tlsSecret: dnsSubdomain('tls-secret', values['tls-secret']) }
      : {}),
    cpu: quantity('cpu', values.cpu ?? '2', CPU, '2, 1.5 or 500m'),
    memory: quantity('memory', values.memory ?? '1Gi', MEMORY, `1Gi or 512Mi${memoryHint}`),
    antiAffinity,
    ...(allow !== undefined ? { allow } : {}),
  };
  process.stdout.write(agentsManifestYaml(options, ['kbench agents manifest', ...argv].join(' ')));
  process.stderr.write(
    `kbench agents manifest: ${count} agent${count === 1 ? '' : 's'}, StatefulSet ${name} in namespace ${options.namespace}\n` +
      `  create the token Secret first: ${tokenSecretCommand(options)}\n` +
      `  for kbench run: --agents ${agentAddresses(options).join(',')}\n`,
  );
  return 0;
}
