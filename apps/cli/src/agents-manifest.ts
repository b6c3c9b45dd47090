// `kbench agents manifest`: the Kubernetes objects that run N load agents (docs/agents.md, "Agents
// on Kubernetes"): a headless Service and a StatefulSet of the image broker-native/agent.Containerfile
// builds. A StatefulSet, not an Indexed Job: agents are servers that run until told to stop, and a
// StatefulSet gives each one a stable DNS name (name-0.name.ns.svc) for `--agents` and restarts a
// crashed one under the same name, where a Job is for work that completes.
//
// The objects are typed with kubernetes-models' interfaces (types only: nothing of it is loaded at
// run time), so a misspelt field fails the typecheck; the test validates the printed YAML with its
// schemas.
import type { IStatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import type { IPodAffinityTerm } from 'kubernetes-models/v1/PodAffinityTerm';
import type { IService } from 'kubernetes-models/v1/Service';
import { Document, isMap, isScalar, type Node } from 'yaml';

export interface AgentsManifestOptions {
  /** How many agents (pods). */
  count: number;
  /** The StatefulSet's and the headless Service's name; pods are name-0 ... name-(count-1). */
  name: string;
  namespace: string;
  image: string;
  /** The port each agent listens on, inside its pod. */
  port: number;
  /** The generic Secret holding the token under the key `token` (created by the user). */
  tokenSecret: string;
  /** A kubernetes.io/tls Secret (tls.crt, tls.key): the agents speak TLS with it. */
  tlsSecret?: string;
  /** CPU and memory requests, as Kubernetes quantities (memory is the limit too). */
  cpu: string;
  memory: string;
  /** `required`: one agent per node (pods beyond the node count stay Pending); `preferred`: spread if possible. */
  antiAffinity: 'required' | 'preferred';
  /** The agents' --allow: the only bootstrap servers they send load to. */
  allow?: string[];
}

/** The image's user (broker-native/agent.Containerfile), given to the pod so runAsNonRoot holds. */
export const AGENT_UID = 10001;
/** Where the token Secret is mounted; the agent reads `token` there. */
export const TOKEN_DIR = '/run/secrets/kbench-agent';
/** Where the TLS Secret is mounted (tls.crt and tls.key, as kubernetes.io/tls Secrets name them). */
export const TLS_DIR = '/run/secrets/kbench-agent-tls';

/** The address of agent i, as `kbench run --agents` takes it: a stable name through the headless Service. */
export function agentAddresses(
  options: Pick<AgentsManifestOptions, 'count' | 'name' | 'namespace' | 'port'>,
) {
  const { count, name, namespace, port } = options;
  return Array.from({ length: count }, (_, i) => `${name}-${i}.${name}.${namespace}.svc:${port}`);
}

/** The kubectl command that makes the token Secret from a local file `agent-token`. */
export function tokenSecretCommand(options: Pick<AgentsManifestOptions, 'tokenSecret' | 'namespace'>) {
  return `kubectl create secret generic ${options.tokenSecret} --namespace ${options.namespace} --from-file=token=agent-token`;
}

/** The headless Service and the StatefulSet. */
export function agentsObjects(o: AgentsManifestOptions): { service: IService; statefulSet: IStatefulSet } {
  const labels = { 'app.kubernetes.io/name': 'kbench-agent', 'app.kubernetes.io/instance': o.name };
  const metadata: IService['metadata'] = { name: o.name, namespace: o.namespace, labels };
  const args = ['--listen', `0.0.0.0:${o.port}`, '--token-file', `${TOKEN_DIR}/token`];
  if (o.tlsSecret !== undefined)
    args.push('--tls-cert', `${TLS_DIR}/tls.crt`, '--tls-key', `${TLS_DIR}/tls.key`);
  if (o.allow !== undefined) args.push('--allow', o.allow.join(','));
  const onAnotherNode: IPodAffinityTerm = {
    labelSelector: { matchLabels: labels },
    topologyKey: 'kubernetes.io/hostname',
  };
  const service: IService = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: {
      clusterIP: 'None',
      selector: labels,
      ports: [{ name: 'agent', port: o.port, targetPort: 'agent', protocol: 'TCP' }],
    },
  };
  const statefulSet: IStatefulSet = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata,
    spec: {
      serviceName: o.name,
      replicas: o.count,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: AGENT_UID,
            runAsGroup: AGENT_UID,
            fsGroup: AGENT_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          affinity: {
            podAntiAffinity:
              o.antiAffinity === 'required'
                ? { requiredDuringSchedulingIgnoredDuringExecution: [onAnotherNode] }
                : {
                    preferredDuringSchedulingIgnoredDuringExecution: [
                      { weight: 100, podAffinityTerm: onAnotherNode },
                    ],
                  },
          },
          containers: [
            {
              name: 'agent',
              image: o.image,
              imagePullPolicy: 'IfNotPresent',
              command: ['kbench-agent'],
              args,
              ports: [{ name: 'agent', containerPort: o.port, protocol: 'TCP' }],
              readinessProbe: { tcpSocket: { port: 'agent' }, periodSeconds: 5 },
              resources: {
                requests: { cpu: o.cpu, memory: o.memory },
                limits: { memory: o.memory },
              },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'token', mountPath: TOKEN_DIR, readOnly: true },
                ...(o.tlsSecret !== undefined ? [{ name: 'tls', mountPath: TLS_DIR, readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            {
              name: 'token',
              secret: {
                secretName: o.tokenSecret,
                defaultMode: 0o440,
                items: [{ key: 'token', path: 'token' }],
              },
            },
            ...(o.tlsSecret !== undefined
              ? [{ name: 'tls', secret: { secretName: o.tlsSecret, defaultMode: 0o440 } }]
              : []),
          ],
        },
      },
    },
  };
  return { service, statefulSet };
}

/** The manifest as YAML: a header saying what to do with it, then the Service and the StatefulSet. */
export function agentsManifestYaml(o: AgentsManifestOptions, commandLine: string): string {
  const { service, statefulSet } = agentsObjects(o);
  const agents = agentAddresses(o).join(',');
  const header = [
    ` kbench load agents: ${o.count} pod${o.count === 1 ? '' : 's'} of ${o.image} in namespace ${o.namespace} (docs/agents.md)`,
    ` printed by: ${commandLine}`,
    '',
    ' 1. The token Secret, which this manifest only refers to (the token never appears here), from a',
    '    file holding the token (the controller sends the same one):',
    ...(o.namespace === 'default' ? [] : [`      kubectl create namespace ${o.namespace}`]),
    `      ${tokenSecretCommand(o)}`,
    ...(o.tlsSecret !== undefined
      ? [
          `    and the TLS Secret: a certificate for *.${o.name}.${o.namespace}.svc and its key:`,
          `      kubectl create secret tls ${o.tlsSecret} --namespace ${o.namespace} --cert=agent.crt --key=agent.key`,
        ]
      : []),
    ' 2. Save this as agents.yaml, then:',
    '      kubectl apply -f agents.yaml',
    `      kubectl rollout status statefulset/${o.name} --namespace ${o.namespace}`,
    ' 3. From a machine where these names resolve (a pod in the cluster; docs/agents.md for the others):',
    ...(o.tlsSecret === undefined
      ? [`      kbench run SCENARIO --target TARGET --agent-token-file agent-token --agents ${agents}`]
      : [
          '    (TLS: the controller checks the agents with the CA that signed agent.crt, a profile setting)',
          `      kbench profile add TARGET --bootstrap H:P --agent-token-file agent-token --agent-ca ca.crt --agents ${agents}`,
          '      kbench run SCENARIO --target TARGET',
        ]),
  ];
  // Each object written out in full, without YAML anchors for the labels they share.
  const serviceDoc = new Document(service, { aliasDuplicateObjects: false });
  serviceDoc.commentBefore = header.join('\n');
  comment(
    serviceDoc,
    ['spec', 'clusterIP'],
    ' headless: a DNS name per agent pod, NAME-i.NAME.NAMESPACE.svc',
  );
  const setDoc = new Document(statefulSet, { aliasDuplicateObjects: false });
  const pod = ['spec', 'template', 'spec'];
  comment(setDoc, ['spec', 'podManagementPolicy'], ' start every agent at once, not one after another');
  comment(
    setDoc,
    [...pod, 'affinity'],
    o.antiAffinity === 'required'
      ? " one agent per node, so agents do not share a node's CPUs and network (more agents than nodes stay Pending)"
      : ' agents on different nodes where the scheduler can (--anti-affinity preferred)',
  );
  comment(
    setDoc,
    [...pod, 'containers', 0, 'resources'],
    ' no CPU limit: CFS throttling would stall the clients and show up as the cluster latency',
  );
  comment(setDoc, [...pod, 'containers', 0, 'readinessProbe'], ' ready once the agent listens');
  comment(
    setDoc,
    [...pod, 'volumes', 0, 'secret', 'defaultMode'],
    ' 0440: readable by the agent (fsGroup) only',
  );
  if (o.tlsSecret !== undefined)
    comment(
      setDoc,
      [...pod, 'volumes', 1, 'secret', 'defaultMode'],
      ' 0440: readable by the agent (fsGroup) only',
    );
  const text = (doc: Document) => doc.toString({ lineWidth: 0 });
  return `${text(serviceDoc)}---\n${text(setDoc)}`;
}

/** Puts `text` as a comment on the line before the key at `path` (or after a scalar value, for a scalar). */
function comment(doc: Document, path: (string | number)[], text: string): void {
  const parent = doc.getIn(path.slice(0, -1), true) as Node | undefined;
  const key = path[path.length - 1];
  if (!isMap(parent)) {
    const node = doc.getIn(path, true);
    if (!node) throw new Error(`manifest: no node at ${path.join('.')}`);
    (node as Node).commentBefore = text;
    return;
  }
  const pair = parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === key);
  if (!pair || !isScalar(pair.key)) throw new Error(`manifest: no key at ${path.join('.')}`);
  pair.key.commentBefore = text;
}
