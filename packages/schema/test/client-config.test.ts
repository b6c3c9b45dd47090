// Kafka client properties in producers.config and consumers.config: checked by name, by value and
// against the driver that would run them.
import { describe, expect, it } from 'vitest';
import { applySet, checkScenario, expandSweep, honouredProperties, parseScenario } from '../src/index.js';

function issuesOf(input: unknown) {
  const result = checkScenario(input);
  if (result.ok) throw new Error('expected the scenario to be invalid');
  return result.issues;
}

describe('client properties', () => {
  it('passes known properties through, values normalised', () => {
    const s = parseScenario({
      driver: 'native',
      producers: { config: { 'buffer.memory': '32MB', 'max.request.size': 2097152 } },
      consumers: {
        config: { 'fetch.min.bytes': '1KB', 'fetch.max.wait.ms': '500', 'enable.auto.commit': 'false' },
      },
    });
    expect(s.producers.config).toEqual({ 'buffer.memory': 32 * 1024 ** 2, 'max.request.size': 2097152 });
    expect(s.consumers.config).toEqual({
      'fetch.min.bytes': 1024,
      'fetch.max.wait.ms': 500,
      'enable.auto.commit': false,
    });
  });

  it('refuses an unknown property by name, listing the ones kbench passes through', () => {
    expect(issuesOf({ producers: { config: { 'buffer.memroy': 1024 } } })).toEqual([
      {
        path: 'producers.config.buffer.memroy',
        message: expect.stringMatching(
          /^unknown producer property; kbench passes through: acks, .*buffer\.memory/,
        ),
      },
    ]);
  });

  it('refuses a property the driver cannot honour, naming the driver and what it honours', () => {
    expect(issuesOf({ driver: 'kafkajs', producers: { config: { 'buffer.memory': 1024 } } })).toEqual([
      {
        path: 'producers.config.buffer.memory',
        message: `the kafkajs driver cannot honour buffer.memory (the native driver can); it honours: ${honouredProperties('producers', 'kafkajs').join(', ')}`,
      },
    ]);
    const [issue] = issuesOf({ driver: 'native', consumers: { config: { 'session.timeout.ms': 10000 } } });
    expect(issue?.path).toBe('consumers.config.session.timeout.ms');
    expect(issue?.message).toMatch(
      /^the native driver cannot honour session\.timeout\.ms \(the kafkajs driver can\); it honours: .*fetch\.max\.wait\.ms/,
    );
  });

  it('checks each value by the property: its type and range', () => {
    expect(
      issuesOf({ consumers: { config: { 'fetch.max.wait.ms': -1, 'enable.auto.commit': 'no' } } }),
    ).toEqual([
      {
        path: 'consumers.config.fetch.max.wait.ms',
        message: 'must be a whole number from 0 to 2147483647 (got -1)',
      },
      { path: 'consumers.config.enable.auto.commit', message: 'must be true or false (got "no")' },
    ]);
    expect(issuesOf({ consumers: { config: 'fetch.min.bytes=1' } })[0]?.path).toBe('consumers.config');
  });

  it('lets a property that duplicates a knob set that knob, checked by the knob rule', () => {
    const s = parseScenario({
      driver: 'kafkajs',
      producers: { config: { 'max.in.flight.requests.per.connection': '1', acks: -1 } },
      consumers: { config: { 'auto.offset.reset': 'earliest' } },
    });
    expect(s.producers).toMatchObject({ maxInFlight: 1, acks: 'all', config: {} });
    expect(s.consumers).toMatchObject({ startAt: 'earliest', config: {} });
    // The resolved scenario parses to itself.
    expect(parseScenario(s)).toEqual(s);
    expect(issuesOf({ producers: { config: { acks: 2 } } })).toEqual([
      { path: 'producers.config.acks', message: 'must be one of 0, 1, all (got 2)' },
    ]);
  });

  it('refuses a duplicate of a knob the driver cannot honour (linger.ms on kafkajs)', () => {
    expect(issuesOf({ driver: 'kafkajs', producers: { config: { 'linger.ms': 5 } } })[0]?.path).toBe(
      'producers.config.linger.ms',
    );
    expect(
      parseScenario({ driver: 'native', producers: { config: { 'linger.ms': 5 } } }).producers.lingerMs,
    ).toBe(5);
  });

  it('refuses a property written beside the knob it duplicates', () => {
    expect(issuesOf({ producers: { acks: 1, config: { acks: 'all' } } })).toEqual([
      {
        path: 'producers.config.acks',
        message: 'sets producers.acks, which the scenario also sets; write one of the two',
      },
    ]);
  });

  it('addresses a property in --set by the rest of the path after config.', () => {
    const raw = applySet(
      applySet({ driver: 'native' }, 'producers.config.max.in.flight.requests.per.connection=1'),
      'topics.config.retention.ms=60000',
    );
    expect(raw).toEqual({
      driver: 'native',
      producers: { config: { 'max.in.flight.requests.per.connection': 1 } },
      topics: { config: { 'retention.ms': 60000 } },
    });
    expect(parseScenario(raw).producers.maxInFlight).toBe(1);
  });

  it('sweeps a property by its path', () => {
    const plans = expandSweep(
      parseScenario({
        driver: 'native',
        sweep: { knob: 'consumers.config.fetch.max.wait.ms', values: [100, 500] },
      }),
    );
    expect(plans.map((p) => p.consumers.config)).toEqual([
      { 'fetch.max.wait.ms': 100 },
      { 'fetch.max.wait.ms': 500 },
    ]);
  });
});
