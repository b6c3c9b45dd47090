import { describe, expect, it } from 'vitest';
import {
  applySet,
  checkScenario,
  expandSweep,
  knobPaths,
  MAX_PARTITION_REPLICAS_PER_NODE,
  MAX_PARTITIONS_PER_TOPIC,
  parseScenario,
  readScenarioText,
  ScenarioError,
  scenarioToYaml,
} from '../src/index.js';

function issuesOf(input: unknown) {
  const result = checkScenario(input);
  if (result.ok) throw new Error('expected the scenario to be invalid');
  return result.issues;
}

describe('parseScenario defaults', () => {
  it('fills every default from an empty scenario', () => {
    const s = parseScenario({});
    expect(s.target).toBe('bundled');
    expect(s.driver).toBe('kafkajs');
    expect(s.duration).toBe('60s');
    expect(s.warmup).toBe('0s');
    expect(s.topics).toEqual({
      prefix: 'kbench',
      count: 1,
      idle: 0,
      partitions: 1,
      replicationFactor: 1,
      minInsyncReplicas: 1,
      config: {},
      keep: false,
      ifExists: 'fail',
    });
    expect(s.producers.acks).toBe(1);
    expect(s.producers.messageSize).toBe(100);
    expect(s.consumers.count).toBe(0);
    expect(s.faults).toEqual([]);
    expect(s.findMax).toEqual({
      publishP99Ms: 100,
      maxBacklogSeconds: 1,
      trial: '10s',
      precision: 0.05,
      maxTrials: 12,
    });
  });

  it('normalises sizes and durations', () => {
    const s = parseScenario({
      producers: { messageSize: '1KB', batchSize: '512KB' },
      duration: 90,
      warmup: '1500ms',
      consumers: { backlog: '2GB' },
    });
    expect(s.producers.messageSize).toBe(1024);
    expect(s.producers.batchSize).toBe(512 * 1024);
    expect(s.duration).toBe('90s');
    expect(s.warmup).toBe('1.5s');
    expect(s.consumers.backlog).toBe(2 * 1024 ** 3);
  });

  it('accepts acks as all, -1, "1" and 0', () => {
    expect(parseScenario({ producers: { acks: -1 } }).producers.acks).toBe('all');
    expect(parseScenario({ producers: { acks: '1' } }).producers.acks).toBe(1);
    expect(parseScenario({ producers: { acks: 0 } }).producers.acks).toBe(0);
  });

  it('takes records instead of duration', () => {
    const s = parseScenario({ records: 1000 });
    expect(s.records).toBe(1000);
    expect(s.duration).toBeUndefined();
  });

  it('is idempotent: a resolved scenario parses to itself', () => {
    const s = parseScenario({
      producers: { messageSize: { min: 10, max: '1KB' } },
      faults: [{ at: '5s', action: 'pause', node: 1, for: '1s' }],
    });
    expect(parseScenario(JSON.parse(JSON.stringify(s)))).toEqual(s);
    expect(parseScenario(readScenarioText(scenarioToYaml(s)))).toEqual(s);
  });
});

describe('scenario errors name the field and the allowed values', () => {
  it('bad enum value', () => {
    expect(issuesOf({ producers: { acks: 2 } })).toEqual([
      { path: 'producers.acks', message: 'must be one of 0, 1, all (got 2)' },
    ]);
  });

  it('a section of the wrong type says what it must be and what it got, not that it is missing', () => {
    expect(issuesOf({ producers: 1 })).toEqual([{ path: 'producers', message: 'must be an object (got 1)' }]);
    expect(issuesOf({ faults: 'kill' })).toEqual([
      { path: 'faults', message: 'must be a list (got "kill")' },
    ]);
    expect(issuesOf({ cluster: [] })).toEqual([{ path: 'cluster', message: 'must be an object (got [])' }]);
  });

  it('sampleIntervalMs: 100 to 1000 ms, absent by default (1000)', () => {
    expect(issuesOf({ sampleIntervalMs: 99 })).toEqual([
      { path: 'sampleIntervalMs', message: 'must be a whole number from 100 to 1000 (got 99)' },
    ]);
    expect(issuesOf({ sampleIntervalMs: 1001 })).toEqual([
      { path: 'sampleIntervalMs', message: 'must be a whole number from 100 to 1000 (got 1001)' },
    ]);
    expect(parseScenario({ sampleIntervalMs: 100 }).sampleIntervalMs).toBe(100);
    expect(parseScenario({ sampleIntervalMs: '250' }).sampleIntervalMs).toBe(250);
    expect(parseScenario({}).sampleIntervalMs).toBeUndefined();
  });

  it('faultSampleIntervalMs: 100 to 1000 ms, absent by default (100)', () => {
    expect(issuesOf({ faultSampleIntervalMs: 50 })).toEqual([
      { path: 'faultSampleIntervalMs', message: 'must be a whole number from 100 to 1000 (got 50)' },
    ]);
    expect(parseScenario({ faultSampleIntervalMs: 1000 }).faultSampleIntervalMs).toBe(1000);
    expect(parseScenario({}).faultSampleIntervalMs).toBeUndefined();
  });

  it('unknown field lists the allowed fields', () => {
    const [issue] = issuesOf({ producers: { ackss: 1 } });
    expect(issue?.path).toBe('producers.ackss');
    expect(issue?.message).toContain('allowed fields here: count, acks, messageSize');
  });

  it('out-of-range number', () => {
    expect(issuesOf({ topics: { partitions: 0 } })[0]).toEqual({
      path: 'topics.partitions',
      message: 'must be a whole number from 1 to 10000 (got 0)',
    });
  });

  it('bad duration', () => {
    expect(issuesOf({ duration: 'soon' })[0]?.message).toMatch(/^must be a duration such as 500ms, 30s/);
  });

  it('warm-up longer than the run', () => {
    expect(issuesOf({ duration: '10s', warmup: '10s' })[0]).toEqual({
      path: 'warmup',
      message: 'must be shorter than duration (10s)',
    });
  });

  it('both duration and records', () => {
    expect(issuesOf({ duration: '10s', records: 5 })[0]?.path).toBe('records');
  });

  it('indexes list items in the path', () => {
    expect(
      issuesOf({
        faults: [
          { at: '1s', action: 'kill', node: 1 },
          { at: '2s', action: 'explode', node: 1 },
        ],
      })[0],
    ).toEqual({
      path: 'faults[1].action',
      message:
        'must be one of kill, pause, restart, isolate, heal, slow-disk, rolling-restart, preferred-leaders, command (got "explode")',
    });
  });

  it('the bundled cluster faults: isolate, heal, slow-disk, rolling-restart, preferred-leaders', () => {
    const ok = parseScenario({
      cluster: { nodes: 3 },
      faults: [
        { at: '1s', action: 'isolate', node: 2, from: 'clients', for: '2s' },
        { at: '1s', action: 'isolate', node: 'leader:0-0' },
        { at: '2s', action: 'heal', node: 'leader:0-0' },
        { at: '3s', action: 'slow-disk', node: 1, delay: '20ms', for: '1s' },
        { at: '4s', action: 'rolling-restart' },
        { at: '5s', action: 'preferred-leaders' },
      ],
    });
    expect(ok.faults.map((f) => f.action)).toEqual([
      'isolate',
      'isolate',
      'heal',
      'slow-disk',
      'rolling-restart',
      'preferred-leaders',
    ]);
    expect(ok.faults[3]?.delay).toBe('20ms');
    expect(
      issuesOf({
        faults: [
          { at: '1s', action: 'isolate', node: 1, from: 'everyone' },
          { at: '1s', action: 'slow-disk', node: 1, delay: '20s' },
        ],
      }),
    ).toEqual([
      { path: 'faults[0].from', message: 'must be one of peers, clients (got "everyone")' },
      { path: 'faults[1].delay', message: 'must be from 1ms to 10s (got "20s")' },
    ]);
    // The rules across a fault's fields, once every field is valid on its own.
    expect(
      issuesOf({
        faults: [
          { at: '1s', action: 'isolate', node: 1 },
          { at: '1s', action: 'slow-disk', node: 1 },
          { at: '1s', action: 'heal', node: 1 },
          { at: '1s', action: 'rolling-restart', node: 1 },
          { at: '1s', action: 'heal', node: 1, for: '1s' },
          { at: '1s', action: 'kill', node: 1, delay: '5ms', from: 'peers' },
          { at: '1s', action: 'preferred-leaders', run: 'true' },
        ],
      }),
    ).toEqual([
      {
        path: 'faults[1].delay',
        message: 'a slow-disk needs delay: the time added to each fdatasync (e.g. 5ms)',
      },
      {
        path: 'faults[3].node',
        message: 'a rolling-restart acts on every node of the cluster: leave node out',
      },
      {
        path: 'faults[4].for',
        message:
          'only pause, isolate and slow-disk take for; a heal lasts until a later fault (restart, heal) or the end of the run',
      },
      { path: 'faults[5].from', message: 'only isolate takes from (action is kill)' },
      { path: 'faults[5].delay', message: 'only slow-disk takes delay (action is kill)' },
      { path: 'faults[6].run', message: 'only a command fault takes run (action is preferred-leaders)' },
    ]);
  });

  it('replication beyond the bundled cluster size', () => {
    expect(issuesOf({ topics: { replicationFactor: 3 } })[0]?.path).toBe('topics.replicationFactor');
  });

  it('replication beyond the managed kafka cluster size, but not on an external target', () => {
    const kafka = issuesOf({ target: 'kafka', cluster: { nodes: 2 }, topics: { replicationFactor: 3 } });
    expect(kafka[0]).toEqual({
      path: 'topics.replicationFactor',
      message: 'must not exceed cluster.nodes (2)',
    });
    const fits = { target: 'kafka', cluster: { nodes: 3 }, topics: { replicationFactor: 3 } };
    expect(checkScenario(fits).ok).toBe(true);
    expect(checkScenario({ target: 'shared', topics: { replicationFactor: 3 } }).ok).toBe(true);
  });

  it('what a run does with an existing topic, and keeping topics', () => {
    expect(issuesOf({ topics: { ifExists: 'overwrite' } })[0]).toEqual({
      path: 'topics.ifExists',
      message: 'must be one of fail, reuse (got "overwrite")',
    });
    expect(issuesOf({ topics: { keep: 'yes' } })[0]?.path).toBe('topics.keep');
  });

  it('a backlog start without a backlog size', () => {
    expect(issuesOf({ consumers: { count: 1, startAt: 'backlog' } })[0]?.path).toBe('consumers.backlog');
  });

  it('a list where an object belongs', () => {
    expect(issuesOf({ producers: [] })[0]?.path).toBe('producers');
  });

  it('ScenarioError carries the issues and a readable message', () => {
    try {
      parseScenario({ producers: { compression: 'brotli' } }, 'file.yaml');
      throw new Error('expected ScenarioError');
    } catch (err) {
      expect(err).toBeInstanceOf(ScenarioError);
      expect((err as ScenarioError).message).toContain('file.yaml: invalid scenario');
      expect((err as ScenarioError).message).toContain(
        'producers.compression: must be one of none, gzip, snappy, lz4, zstd',
      );
    }
  });

  it('YAML syntax errors give the line', () => {
    expect(() => readScenarioText('a: [1, 2\nb: c', 'x.yaml')).toThrow(/line \d/);
  });
});

describe('bounds that keep a run within one machine', () => {
  it('duration above 24h names the field and the range', () => {
    expect(issuesOf({ duration: '25h' })).toEqual([
      { path: 'duration', message: 'must be from 1s to 24h (got "25h")' },
    ]);
    expect(parseScenario({ duration: '24h' }).duration).toBe('24h');
  });

  it('warm-up above 24h in a run bounded by records', () => {
    expect(issuesOf({ records: 1000, warmup: '25h' })).toEqual([
      { path: 'warmup', message: 'must be at most 24h (got "25h")' },
    ]);
  });

  it('find-max trial above 24h', () => {
    expect(issuesOf({ findMax: { trial: '25h' } })).toEqual([
      { path: 'findMax.trial', message: 'must be from 1s to 24h (got "25h")' },
    ]);
  });

  it('records above ten billion', () => {
    expect(issuesOf({ records: 10_000_000_001 })).toEqual([
      { path: 'records', message: 'must be a whole number from 1 to 10000000000 (got 10000000001)' },
    ]);
    expect(parseScenario({ records: 10_000_000_000 }).records).toBe(10_000_000_000);
  });

  it('backlog above 1TB', () => {
    expect(issuesOf({ consumers: { backlog: '2TB' } })).toEqual([
      { path: 'consumers.backlog', message: 'must be from 0 to 1099511627776 bytes (got "2TB")' },
    ]);
    expect(parseScenario({ consumers: { backlog: '1TB' } }).consumers.backlog).toBe(1024 ** 4);
  });

  it('partitions per topic above what the bundled broker allows', () => {
    expect(MAX_PARTITIONS_PER_TOPIC).toBe(10_000);
    expect(issuesOf({ topics: { partitions: MAX_PARTITIONS_PER_TOPIC + 1 } })).toEqual([
      { path: 'topics.partitions', message: 'must be a whole number from 1 to 10000 (got 10001)' },
    ]);
  });

  it('partition replicas per node above what the bundled broker hosts', () => {
    expect(MAX_PARTITION_REPLICAS_PER_NODE).toBe(150_000);
    expect(issuesOf({ topics: { count: 200_000, partitions: 10_000 } })).toEqual([
      {
        path: 'topics.count',
        message:
          '200000 topics × 10000 partitions × RF 1 on 1 node = 2,000,000,000 partition replicas per node; the bundled broker hosts at most 150,000',
      },
    ]);
  });

  it('partition replicas per node count idle topics and replication, spread over the nodes', () => {
    expect(issuesOf({ topics: { idle: 150_000 } })).toEqual([
      {
        path: 'topics.idle',
        message:
          '(1 topic + 150000 idle) × 1 partition × RF 1 on 1 node = 150,001 partition replicas per node; the bundled broker hosts at most 150,000',
      },
    ]);
    expect(checkScenario({ topics: { idle: 149_999 } }).ok).toBe(true);
    // 100 × 4000 = 400,000 replicas: 133,334 per node on 3 nodes fits; with RF 3 (400,000 per node) not.
    expect(checkScenario({ cluster: { nodes: 3 }, topics: { count: 100, partitions: 4000 } }).ok).toBe(true);
    expect(
      issuesOf({ cluster: { nodes: 3 }, topics: { count: 100, partitions: 4000, replicationFactor: 3 } }),
    ).toEqual([
      {
        path: 'topics.count',
        message:
          '100 topics × 4000 partitions × RF 3 on 3 nodes = 400,000 partition replicas per node; the bundled broker hosts at most 150,000',
      },
    ]);
  });

  it('partition replicas per node are a bundled limit: other targets are not refused', () => {
    expect(checkScenario({ target: 'shared', topics: { count: 200_000, partitions: 10_000 } }).ok).toBe(true);
  });

  it('partition replicas per node are checked for every swept value', () => {
    expect(issuesOf({ sweep: { knob: 'topics.idle', values: [0, 120_000, 200_000] } })).toEqual([
      {
        path: 'sweep.values[2]',
        message:
          'topics.idle: (1 topic + 200000 idle) × 1 partition × RF 1 on 1 node = 200,001 partition replicas per node; the bundled broker hosts at most 150,000',
      },
    ]);
  });
});

describe('--set overrides', () => {
  it('sets a nested knob with a YAML value', () => {
    const raw = applySet({ producers: { count: 2 } }, 'producers.acks=all');
    expect(parseScenario(raw).producers).toMatchObject({ count: 2, acks: 'all' });
  });

  it('sets a list from YAML flow syntax', () => {
    const raw = applySet({}, 'faults=[{at: 5s, action: pause, node: 1, for: 1s}]');
    expect(parseScenario(raw).faults).toEqual([{ at: '5s', action: 'pause', node: 1, for: '1s' }]);
  });

  it('rejects an unknown knob with the known ones', () => {
    expect(() => applySet({}, 'producers.ack=1')).toThrow(/known here: producers.count, producers.acks/);
  });

  it('names the first unknown part of a knob, and a value given parts of its own', () => {
    expect(() => applySet({}, 'nosuch.knob=1')).toThrow(
      /unknown knob "nosuch.knob"; known here: name, description,/,
    );
    expect(() => applySet({}, 'producers.acks.level=1')).toThrow(
      /unknown knob "producers.acks.level": "producers.acks" is a value, not a group of knobs/,
    );
  });

  it('rejects an assignment without =', () => {
    expect(() => applySet({}, 'producers.acks')).toThrow(/knob.path=value/);
  });
});

describe('sweeps', () => {
  it('expands into one resolved scenario per value', () => {
    const s = parseScenario({ sweep: { knob: 'producers.messageSize', values: [10, '1KB'] } });
    const plans = expandSweep(s);
    expect(plans.map((p) => p.producers.messageSize)).toEqual([10, 1024]);
    expect(plans.every((p) => p.sweep === undefined)).toBe(true);
    expect(plans[1]?.name).toContain('producers.messageSize=1KB');
  });

  it('validates each value against the knob', () => {
    expect(issuesOf({ sweep: { knob: 'producers.acks', values: [0, 1, 5] } })).toEqual([
      { path: 'sweep.values[2]', message: 'producers.acks: must be one of 0, 1, all (got 5)' },
    ]);
  });

  it('rejects an unknown knob', () => {
    expect(issuesOf({ sweep: { knob: 'producers.size', values: [1] } })[0]?.path).toBe('sweep.knob');
  });

  it('lists the knobs a sweep may name', () => {
    const knobs = knobPaths();
    expect(knobs).toContain('producers.messageSize');
    expect(knobs).toContain('topics.partitions');
    expect(knobs).not.toContain('sweep.knob');
  });
});

describe('sideDifferences (a gate: the runs judged against the baseline)', () => {
  it("names each setting whose values on one side are not the other's, with both sides' values", async () => {
    const { sideDifferences } = await import('../src/index.js');
    const base = parseScenario({ name: 'x', driver: 'kafkajs', producers: { rate: 5000 } });
    const judged = parseScenario({ name: 'x', driver: 'native', producers: { rate: 5000 } });
    expect(sideDifferences([base, base], [judged])).toEqual([
      { path: 'driver', baseline: ['kafkajs'], current: ['native'] },
    ]);
    expect(sideDifferences([base], [base, base])).toEqual([]);
  });

  it('a setting that varies alike on both sides (a sweep) is no difference; the target is left to the headline', async () => {
    const { sideDifferences } = await import('../src/index.js');
    const at = (size: number, target = 'bundled') =>
      parseScenario({ name: 'x', target, producers: { messageSize: size } });
    expect(sideDifferences([at(100), at(200)], [at(200, 'kafka'), at(100, 'kafka')])).toEqual([]);
    expect(sideDifferences([at(100), at(200)], [at(100)])).toEqual([
      { path: 'producers.messageSize', baseline: ['100', '200'], current: ['100'] },
    ]);
  });
});

describe('scenarioDifferences', () => {
  it('lists only the settings that differ, by path', async () => {
    const { scenarioDifferences } = await import('../src/index.js');
    const a = parseScenario({ name: 'a', producers: { acks: 1 } });
    const b = parseScenario({ name: 'b', producers: { acks: 'all' }, topics: { partitions: 6 } });
    expect(scenarioDifferences([a, b])).toEqual([
      { path: 'producers.acks', values: ['1', 'all'] },
      { path: 'topics.partitions', values: ['1', '6'] },
    ]);
  });
});

describe('FIELD_INFO', () => {
  it('describes every knob the schema has, and nothing else', async () => {
    const { FIELD_INFO } = await import('../src/index.js');
    expect(FIELD_INFO.map((f) => f.path).sort()).toEqual(knobPaths().sort());
  });
});
