// ApiVersions: which request versions a broker serves. The protocol carries no broker software
// version (KIP-511 sends only the client's), so we record the ranges and infer what we can from them.
import { isIP, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { TlsOptions } from './security.js';

/** Kafka's API keys by id, as Apache Kafka 4.3.1 names them (org.apache.kafka.common.protocol.ApiKeys). */
export const API_NAMES: readonly string[] = [
  'Produce',
  'Fetch',
  'ListOffsets',
  'Metadata',
  'LeaderAndIsr',
  'StopReplica',
  'UpdateMetadata',
  'ControlledShutdown',
  'OffsetCommit',
  'OffsetFetch',
  'FindCoordinator',
  'JoinGroup',
  'Heartbeat',
  'LeaveGroup',
  'SyncGroup',
  'DescribeGroups',
  'ListGroups',
  'SaslHandshake',
  'ApiVersions',
  'CreateTopics',
  'DeleteTopics',
  'DeleteRecords',
  'InitProducerId',
  'OffsetForLeaderEpoch',
  'AddPartitionsToTxn',
  'AddOffsetsToTxn',
  'EndTxn',
  'WriteTxnMarkers',
  'TxnOffsetCommit',
  'DescribeAcls',
  'CreateAcls',
  'DeleteAcls',
  'DescribeConfigs',
  'AlterConfigs',
  'AlterReplicaLogDirs',
  'DescribeLogDirs',
  'SaslAuthenticate',
  'CreatePartitions',
  'CreateDelegationToken',
  'RenewDelegationToken',
  'ExpireDelegationToken',
  'DescribeDelegationToken',
  'DeleteGroups',
  'ElectLeaders',
  'IncrementalAlterConfigs',
  'AlterPartitionReassignments',
  'ListPartitionReassignments',
  'OffsetDelete',
  'DescribeClientQuotas',
  'AlterClientQuotas',
  'DescribeUserScramCredentials',
  'AlterUserScramCredentials',
  'Vote',
  'BeginQuorumEpoch',
  'EndQuorumEpoch',
  'DescribeQuorum',
  'AlterPartition',
  'UpdateFeatures',
  'Envelope',
  'FetchSnapshot',
  'DescribeCluster',
  'DescribeProducers',
  'BrokerRegistration',
  'BrokerHeartbeat',
  'UnregisterBroker',
  'DescribeTransactions',
  'ListTransactions',
  'AllocateProducerIds',
  'ConsumerGroupHeartbeat',
  'ConsumerGroupDescribe',
  'ControllerRegistration',
  'GetTelemetrySubscriptions',
  'PushTelemetry',
  'AssignReplicasToDirs',
  'ListConfigResources',
  'DescribeTopicPartitions',
  'ShareGroupHeartbeat',
  'ShareGroupDescribe',
  'ShareFetch',
  'ShareAcknowledge',
  'AddRaftVoter',
  'RemoveRaftVoter',
  'UpdateRaftVoter',
  'InitializeShareGroupState',
  'ReadShareGroupState',
  'WriteShareGroupState',
  'DeleteShareGroupState',
  'ReadShareGroupStateSummary',
  'StreamsGroupHeartbeat',
  'StreamsGroupDescribe',
  'DescribeShareGroupOffsets',
  'AlterShareGroupOffsets',
  'DeleteShareGroupOffsets',
];

export interface ApiRange {
  key: number;
  min: number;
  max: number;
}

export function apiName(key: number): string {
  return API_NAMES[key] ?? `Api${key}`;
}

/** API name -> "min-max", in key order. */
export function rangesByName(ranges: ApiRange[]): Record<string, string> {
  return Object.fromEntries(
    [...ranges].sort((a, b) => a.key - b.key).map((r) => [apiName(r.key), `${r.min}-${r.max}`]),
  );
}

/**
 * What the ranges say about the broker, from changes that are certain: the removal of Fetch v0-v3
 * in Apache Kafka 4.0 (KIP-896) and APIs that first appeared in a release. Any Kafka-protocol
 * broker (Redpanda, a cloud service, ours) may serve a mix, so this names a protocol level only.
 */
export function inferVersion(ranges: ApiRange[]): string {
  const has = (key: number) => ranges.some((r) => r.key === key);
  const produce = ranges.find((r) => r.key === 0);
  const fetch = ranges.find((r) => r.key === 1);
  const span = [
    produce && `Produce v${produce.min}-${produce.max}`,
    fetch && `Fetch v${fetch.min}-${fetch.max}`,
  ]
    .filter(Boolean)
    .join(', ');
  let level: string;
  // 4.0 stopped serving Fetch v0-v3 (Produce v0-v2 too, but brokers still list Produce from v0 for old clients).
  if (fetch && fetch.min >= 4) level = 'Apache Kafka 4.0 or later';
  else if (has(75)) level = 'Apache Kafka 3.8 or later';
  else if (has(71)) level = 'Apache Kafka 3.7 or later';
  else if (has(60)) level = 'Apache Kafka 2.8 or later';
  else level = 'Apache Kafka before 2.8';
  return `serves the Kafka protocol of ${level}${span ? ` (${span})` : ''}; inferred from ApiVersions`;
}

const REQUEST = (() => {
  const clientId = Buffer.from('kbench');
  const body = Buffer.alloc(10 + clientId.length);
  body.writeInt16BE(18, 0); // ApiVersions
  body.writeInt16BE(0, 2); // v0: every broker answers it, before any SASL exchange too
  body.writeInt32BE(1, 4);
  body.writeInt16BE(clientId.length, 8);
  clientId.copy(body, 10);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
})();

/** Parses an ApiVersions v0 response body (after the correlation id). */
export function parseApiVersions(body: Buffer): ApiRange[] {
  const error = body.readInt16BE(0);
  if (error !== 0) throw new Error(`ApiVersions answered error code ${error}`);
  const count = body.readInt32BE(2);
  const out: ApiRange[] = [];
  for (let i = 0, at = 6; i < count; i++, at += 6) {
    out.push({ key: body.readInt16BE(at), min: body.readInt16BE(at + 2), max: body.readInt16BE(at + 4) });
  }
  return out;
}

/** Asks one broker for its ApiVersions, over TLS when given TLS options. */
export function fetchApiVersions(
  host: string,
  port: number,
  tls?: TlsOptions,
  timeoutMs = 5000,
): Promise<ApiRange[]> {
  return new Promise((resolve, reject) => {
    const socket: Socket = tls
      ? tlsConnect(
          { host, port, ...tls, ...(tls.servername || isIP(host) ? {} : { servername: host }) },
          () => socket.write(REQUEST),
        )
      : new Socket();
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (err: Error | null, ranges?: ApiRange[]) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (err) reject(err);
      else resolve(ranges ?? []);
    };
    socket.setTimeout(timeoutMs, () => finish(new Error(`no ApiVersions answer from ${host}:${port}`)));
    socket.once('error', (err) => finish(err));
    socket.once('close', () => finish(new Error(`${host}:${port} closed the connection`)));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const all = Buffer.concat(chunks);
      if (all.length < 4 || all.length < 4 + all.readInt32BE(0)) return;
      try {
        finish(null, parseApiVersions(all.subarray(8, 4 + all.readInt32BE(0))));
      } catch (err) {
        finish(err as Error);
      }
    });
    if (!tls) socket.connect(port, host, () => socket.write(REQUEST));
  });
}
