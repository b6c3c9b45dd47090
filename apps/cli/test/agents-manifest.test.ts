// `kbench agents manifest` as a user runs it: the YAML it prints is validated offline against
// Kubernetes' own schemas (kubernetes-models, generated from the API's OpenAPI), its names fit
// together (Service, StatefulSet, pods, the --agents list), `kbench run` takes that list, and the
// container's arguments are ones the real kbench-agent binary accepts.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseAgentsList } from '@kbench/schema';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { Service } from 'kubernetes-models/v1/Service';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { REPO, runKbench } from './helpers.js';

const AGENT_BINARY = path.join(REPO, 'broker-native', 'target', 'release', 'kbench-agent');
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-agents-manifest-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

interface Printed {
  service: Service;
  statefulSet: StatefulSet;
  /** The --agents value of the YAML's header comment and of stderr. */
  commentAgents: string;
  stderrAgents: string;
}

async function manifest(args: string[]): Promise<Printed> {
  const result = await runKbench(home, ['agents', 'manifest', ...args]);
  expect(result.code, result.stderr).toBe(0);
  const docs = parseAllDocuments(result.stdout);
  if (!Array.isArray(docs)) throw new Error('no YAML documents');
  for (const doc of docs) expect(doc.errors, String(doc.errors)).toEqual([]);
  expect(docs.map((d) => (d.toJS() as { kind: string }).kind)).toEqual(['Service', 'StatefulSet']);
  const commentAgents = /--agents (\S+)/.exec(result.stdout)?.[1];
  const stderrAgents = /^ {2}for kbench run: --agents (\S+)$/m.exec(result.stderr)?.[1];
  if (commentAgents === undefined || stderrAgents === undefined)
    throw new Error(`no --agents list in\n${result.stdout}\n${result.stderr}`);
  return {
    service: new Service(docs[0]?.toJS()),
    statefulSet: new StatefulSet(docs[1]?.toJS()),
    commentAgents,
    stderrAgents,
  };
}

const FULL = [
  '--count',
  '3',
  '--name',
  'loaders',
  '--namespace',
  'bench',
  '--image',
  'registry.example.com:5000/kbench/agent:0.1.0',
  '--port',
  '7800',
  '--token-secret',
  'loaders-token',
  '--tls-secret',
  'loaders-tls',
  '--cpu',
  '1500m',
  '--memory',
  '512Mi',
  '--allow',
  'kafka-0.kafka.data.svc:9092,kafka-1.kafka.data.svc:9092',
];

describe('kbench agents manifest', () => {
  it("prints a Service and a StatefulSet that Kubernetes' schemas accept, with every option and with none", async () => {
    for (const args of [FULL, ['--count', '1']]) {
      const { service, statefulSet } = await manifest(args);
      expect(() => service.validate()).not.toThrow();
      expect(() => statefulSet.validate()).not.toThrow();
      // What the schemas leave to the API server: object names are DNS-1123 labels.
      for (const name of [service.metadata?.name, statefulSet.metadata?.name, service.metadata?.namespace])
        expect(name).toMatch(DNS_LABEL);
    }
  });

  it('runs N agents on distinct nodes behind a headless Service that selects them', async () => {
    const { service, statefulSet } = await manifest(FULL);
    const spec = statefulSet.spec!;
    const pod = spec.template.spec!;
    const labels = spec.template.metadata?.labels;
    expect(spec.replicas).toBe(3);
    expect(spec.serviceName).toBe(service.metadata?.name);
    expect(spec.selector.matchLabels).toEqual(labels);
    expect(service.spec?.clusterIP).toBe('None');
    expect(service.spec?.selector).toEqual(labels);
    expect(service.metadata?.namespace).toBe(statefulSet.metadata?.namespace);
    const terms = pod.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    expect(terms).toEqual([
      { labelSelector: { matchLabels: labels }, topologyKey: 'kubernetes.io/hostname' },
    ]);
    const [container] = pod.containers;
    expect(container?.image).toBe('registry.example.com:5000/kbench/agent:0.1.0');
    expect(container?.resources).toEqual({
      requests: { cpu: '1500m', memory: '512Mi' },
      limits: { memory: '512Mi' },
    });
    // Readiness is a TCP connection to the port the agent listens on, which the Service targets.
    const port = container?.ports?.find((p) => p.name === 'agent');
    expect(port?.containerPort).toBe(7800);
    expect(container?.readinessProbe?.tcpSocket?.port).toBe('agent');
    expect(service.spec?.ports).toEqual([
      { name: 'agent', port: 7800, targetPort: 'agent', protocol: 'TCP' },
    ]);
    expect(container?.args?.slice(0, 2)).toEqual(['--listen', '0.0.0.0:7800']);
    // Not root: the user broker-native/agent.Containerfile makes and runs as.
    const containerfile = readFileSync(path.join(REPO, 'broker-native', 'agent.Containerfile'), 'utf8');
    const imageUser = /^USER (\d+)/m.exec(containerfile)?.[1];
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.securityContext?.runAsUser).toBe(Number(imageUser));
    expect(pod.securityContext?.runAsUser).not.toBe(0);
  });

  it('--anti-affinity preferred spreads the agents where the scheduler can', async () => {
    const { statefulSet } = await manifest(['--count', '2', '--anti-affinity', 'preferred']);
    const anti = statefulSet.spec?.template.spec?.affinity?.podAntiAffinity;
    expect(anti?.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
    expect(anti?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm.topologyKey).toBe(
      'kubernetes.io/hostname',
    );
  });

  it('mounts the token Secret by reference and passes kbench-agent arguments it accepts', async () => {
    const { statefulSet } = await manifest(FULL);
    const pod = statefulSet.spec!.template.spec!;
    const container = pod.containers[0]!;
    const args = container.args ?? [];
    const mountOf = (volume: string) => container.volumeMounts?.find((m) => m.name === volume)?.mountPath;
    const secretOf = (volume: string) => pod.volumes?.find((v) => v.name === volume)?.secret;
    // The token file is the Secret's key `token`, where the Secret is mounted.
    const tokenSecret = secretOf('token');
    expect(tokenSecret?.secretName).toBe('loaders-token');
    expect(tokenSecret?.items).toEqual([{ key: 'token', path: 'token' }]);
    expect(args[args.indexOf('--token-file') + 1]).toBe(`${mountOf('token')}/token`);
    // The TLS Secret's tls.crt and tls.key (a kubernetes.io/tls Secret's keys) where it is mounted.
    expect(secretOf('tls')?.secretName).toBe('loaders-tls');
    expect(args[args.indexOf('--tls-cert') + 1]).toBe(`${mountOf('tls')}/tls.crt`);
    expect(args[args.indexOf('--tls-key') + 1]).toBe(`${mountOf('tls')}/tls.key`);
    expect(args[args.indexOf('--allow') + 1]).toBe('kafka-0.kafka.data.svc:9092,kafka-1.kafka.data.svc:9092');
    // No token anywhere in the manifest: only the Secret's name.
    expect(JSON.stringify(statefulSet)).not.toMatch(/KBENCH_AGENT_TOKEN/);
    // The real binary parses every flag before --help (an unknown flag or a bad value is exit 2).
    if (!existsSync(AGENT_BINARY))
      throw new Error(`${AGENT_BINARY} is missing: cd broker-native && npm run build`);
    expect(container.command).toEqual(['kbench-agent']);
    const parsed = spawnSync(AGENT_BINARY, [...args, '--help'], { encoding: 'utf8' });
    expect(parsed.status, parsed.stderr).toBe(0);
    const refused = spawnSync(AGENT_BINARY, [...args, '--no-such-flag', '--help'], { encoding: 'utf8' });
    expect(refused.status).toBe(2);
  });

  it('prints the --agents list of the pods through the headless Service, which kbench run takes', async () => {
    const { service, statefulSet, commentAgents, stderrAgents } = await manifest(FULL);
    const ns = statefulSet.metadata?.namespace;
    const expected = Array.from(
      { length: statefulSet.spec?.replicas ?? 0 },
      (_, i) =>
        `${statefulSet.metadata?.name}-${i}.${service.metadata?.name}.${ns}.svc:${service.spec?.ports?.[0]?.port}`,
    );
    expect(expected).toHaveLength(3);
    expect(commentAgents).toBe(expected.join(','));
    expect(stderrAgents).toBe(expected.join(','));
    expect(parseAgentsList(stderrAgents).map((a) => a.address)).toEqual(expected);
    // kbench run's dry run splits a scenario over exactly these agents.
    const plan = await runKbench(home, [
      'run',
      'quickstart',
      '--dry-run',
      '--set',
      'driver=native',
      '--set',
      'producers.count=3',
      '--set',
      'consumers.count=3',
      '--agents',
      stderrAgents,
    ]);
    expect(plan.code, plan.stderr).toBe(0);
    for (const agent of expected)
      expect(plan.stdout).toContain(`agent ${agent}: 1 producer(s), 1 consumer(s)`);
  });

  it('takes as many agents as one run does (256), and no more', async () => {
    const { statefulSet, stderrAgents } = await manifest(['--count', '256']);
    expect(statefulSet.spec?.replicas).toBe(256);
    expect(parseAgentsList(stderrAgents)).toHaveLength(256);
    const over = await runKbench(home, ['agents', 'manifest', '--count', '257']);
    expect(over.code).toBe(2);
    expect(over.stderr).toContain('--count must be a whole number from 1 to 256');
  });

  it('refuses bad input with exit 2, naming the flag, and prints no manifest', async () => {
    const cases: [string[], string][] = [
      [[], '--count N is required'],
      [['--count', '0'], '--count must be a whole number from 1 to 256 (got "0")'],
      [['--count', 'three'], '--count must be a whole number'],
      [
        ['--count', '2', '--name', 'Kbench_Agent'],
        '--name must be a DNS-1123 label of at most 52 characters',
      ],
      [
        ['--count', '2', '--name', 'a'.repeat(53)],
        '--name must be a DNS-1123 label of at most 52 characters',
      ],
      [['--count', '2', '--name', 'agent-'], '--name must be a DNS-1123 label'],
      [
        ['--count', '2', '--namespace', 'Bench'],
        '--namespace must be a DNS-1123 label of at most 63 characters',
      ],
      [['--count', '2', '--port', '0'], '--port must be a whole number from 1 to 65535'],
      [['--count', '2', '--port', '70000'], '--port must be a whole number from 1 to 65535'],
      [['--count', '2', '--token-secret', 'my_token'], '--token-secret must be a Kubernetes object name'],
      [['--count', '2', '--tls-secret', 'TLS'], '--tls-secret must be a Kubernetes object name'],
      [['--count', '2', '--image', 'Registry/Agent:latest'], '--image must be an image reference'],
      [['--count', '2', '--cpu', 'two'], '--cpu must be a positive Kubernetes quantity'],
      [['--count', '2', '--cpu', '0'], '--cpu must be a positive Kubernetes quantity'],
      [
        ['--count', '2', '--memory', '512m'],
        '--memory must be a positive Kubernetes quantity such as 1Gi or 512Mi (m is milli: 512Mi?)',
      ],
      [
        ['--count', '2', '--anti-affinity', 'soft'],
        '--anti-affinity must be required or preferred (got "soft")',
      ],
      [['--count', '2', '--allow', 'kafka'], '--allow: each entry must be host:port'],
      [['--count', '2', '--replicas', '2'], "Unknown option '--replicas'"],
      [['--count', '2', 'extra'], 'unexpected argument "extra"'],
    ];
    for (const [args, message] of cases) {
      const result = await runKbench(home, ['agents', 'manifest', ...args]);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(`kbench agents manifest: ${message}`);
      expect(result.stdout, args.join(' ')).toBe('');
    }
  });

  it('kbench agents without a known subcommand is exit 2 naming the subcommands; help describes the options', async () => {
    for (const args of [['agents'], ['agents', 'deploy']]) {
      const result = await runKbench(home, args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('subcommands: manifest');
    }
    const help = await runKbench(home, ['agents', 'manifest', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('kbench agents manifest --count N');
    expect(help.stdout).toContain('--token-secret NAME');
  });
});
