// OMB import: real workload and driver files in OMB's shape become valid kbench scenarios.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ombToScenario, parseProperties, parseScenario, readScenarioText } from '../src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name: string) =>
  readScenarioText(readFileSync(path.join(here, 'fixtures/omb', name), 'utf8'));

describe('ombToScenario', () => {
  it('maps the 1-topic-16-partitions-1kb workload with its Kafka driver to a valid scenario', () => {
    const { scenario } = ombToScenario(
      fixture('1-topic-16-partitions-1kb.yaml'),
      fixture('kafka-throughput.yaml'),
    );
    const s = parseScenario(scenario);
    expect(s.name).toBe('1 producer / 1 consumers on 1 topic');
    expect(s.topics).toMatchObject({ count: 1, partitions: 16, replicationFactor: 3, minInsyncReplicas: 2 });
    expect(s.cluster.nodes).toBe(3);
    expect(s.producers).toMatchObject({
      count: 1,
      // The payload file's bytes are every value, as in OMB; its size wins over messageSize.
      messageSize: { payloadFile: 'payload/payload-1Kb.data' },
      rate: 50000,
      acks: 'all',
      lingerMs: 1,
      batchSize: 1048576,
      compression: 'lz4',
    });
    // auto.offset.reset=earliest sets the knob it duplicates; enable.auto.commit passes through.
    expect(s.consumers).toMatchObject({
      count: 1,
      groups: 1,
      startAt: 'earliest',
      config: { 'enable.auto.commit': false },
    });
    // OMB's default one-minute warm-up comes before its 15 test minutes; kbench's duration holds both.
    expect(s.duration).toBe('16m');
    expect(s.warmup).toBe('60s');
  });

  it('maps payloadFile, keeping the native driver, which sends payload files too', () => {
    const { scenario, unmapped } = ombToScenario(fixture('1-topic-16-partitions-1kb.yaml'));
    const s = parseScenario(scenario);
    expect(s.producers.messageSize).toEqual({ payloadFile: 'payload/payload-1Kb.data' });
    expect(s.driver).toBe('native');
    expect(unmapped.map((u) => u.field)).not.toContain('payloadFile');
  });

  it('names every field it could not map', () => {
    const { unmapped } = ombToScenario(
      fixture('1-topic-16-partitions-1kb.yaml'),
      fixture('kafka-throughput.yaml'),
    );
    expect(unmapped.map((u) => u.field).sort()).toEqual(
      ['commonConfig.bootstrap.servers', 'commonConfig.default.api.timeout.ms', 'reset'].sort(),
    );
  });

  it('counts producers and consumers over all topics, and maps rate 0, backlog, keys and warm-up', () => {
    const { scenario, unmapped } = ombToScenario(fixture('10-topics-4p-4c-backlog.yaml'));
    const s = parseScenario(scenario);
    expect(s.topics.count).toBe(10);
    expect(s.producers.count).toBe(40);
    expect(s.consumers).toMatchObject({ count: 40, groups: 2, startAt: 'backlog', backlog: 1024 ** 3 });
    expect(s.producers.rate).toBe('find-max');
    expect(s.producers.keys).toBe('random');
    expect(s.duration).toBe('7m');
    expect(s.warmup).toBe('2m');
    expect(unmapped.map((u) => u.field)).toEqual(
      expect.arrayContaining([
        'keyDistributor',
        'useRandomizedPayloads',
        'randomBytesRatio',
        'randomizedPayloadPoolSize',
      ]),
    );
  });

  it('carries producer, consumer and common client properties over by their Kafka names', () => {
    const { scenario, unmapped } = ombToScenario(fixture('1-topic-16-partitions-1kb.yaml'), {
      driverClass: 'io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver',
      commonConfig: 'request.timeout.ms=60000\nclient.id=omb',
      producerConfig:
        'buffer.memory=67108864\nmax.request.size=2097152\nmax.in.flight.requests.per.connection=1',
      consumerConfig:
        'fetch.min.bytes=1024\nfetch.max.wait.ms=100\nmax.partition.fetch.bytes=1048576\nsession.timeout.ms=30000',
    });
    const s = parseScenario(scenario);
    expect(s.producers.maxInFlight).toBe(1);
    expect(s.producers.config).toEqual({
      'request.timeout.ms': 60000,
      'buffer.memory': 67108864,
      'max.request.size': 2097152,
    });
    // A common property goes to each role whose driver honours it.
    expect(s.consumers.config).toEqual({
      'request.timeout.ms': 60000,
      'fetch.min.bytes': 1024,
      'fetch.max.wait.ms': 100,
      'max.partition.fetch.bytes': 1048576,
    });
    // What the scenario's driver (native) cannot honour is named, with the reason.
    expect(unmapped).toEqual([
      {
        field: 'commonConfig.client.id',
        reason:
          'the native driver cannot honour it as a producer property; the native driver cannot honour it as a consumer property',
      },
      {
        field: 'consumerConfig.session.timeout.ms',
        reason: 'the native driver cannot honour it as a consumer property',
      },
    ]);
  });

  it('refuses a workload that is not an object', () => {
    expect(() => ombToScenario('topics: 1')).toThrow('must be a YAML object');
  });
});

describe('parseProperties', () => {
  it('reads key=value lines and skips comments and blanks', () => {
    expect([...parseProperties('# c\nacks=all\n\n linger.ms = 5 \n')]).toEqual([
      ['acks', 'all'],
      ['linger.ms', '5'],
    ]);
  });
});

describe('ombToScenario on the 500k-rate workload', () => {
  it('maps 1 topic, 100 partitions, 1 KB payload, 4 producers at 500,000 msg/s, no keys', () => {
    const { scenario, unmapped } = ombToScenario(
      fixture('1-topic-100-partitions-1kb-4-producers-500k-rate.yaml'),
    );
    const s = parseScenario(scenario);
    expect(s.driver).toBe('native');
    expect(s.topics).toMatchObject({ count: 1, partitions: 100 });
    expect(s.producers).toMatchObject({
      count: 4,
      rate: 500000,
      keys: 'none',
      messageSize: { payloadFile: 'payload/payload-1Kb.data' },
    });
    expect(s.consumers).toMatchObject({ count: 1, groups: 1, startAt: 'latest' });
    expect(s.duration).toBe('16m');
    expect(s.warmup).toBe('60s');
    expect(unmapped).toEqual([]);
  });
});
