// producers.messageSize beyond a fixed size: distributions and payload files, and their messages.
import { describe, expect, it } from 'vitest';
import { checkScenario, describeMessageSize, parseScenario, resolvePayloadFile } from '../src/index.js';

const issues = (messageSize: unknown) => {
  const r = checkScenario({ producers: { messageSize } });
  return r.ok ? [] : r.issues;
};

describe('producers.messageSize', () => {
  it('accepts normal and exponential distributions, with sizes in bytes or units', () => {
    const normal = parseScenario({
      producers: { messageSize: { distribution: 'normal', mean: '1KB', stddev: 100, max: '2KB' } },
    });
    expect(normal.producers.messageSize).toEqual({
      distribution: 'normal',
      mean: 1024,
      stddev: 100,
      max: 2048,
    });
    const exponential = parseScenario({
      producers: { messageSize: { distribution: 'exponential', mean: 500 } },
    });
    expect(exponential.producers.messageSize).toEqual({ distribution: 'exponential', mean: 500 });
    expect(describeMessageSize(exponential.producers.messageSize)).toContain('exponential, mean 500 bytes');
  });

  it('names the field and the allowed values for an unknown distribution', () => {
    expect(issues({ distribution: 'pareto', mean: 10 })).toEqual([
      {
        path: 'producers.messageSize.distribution',
        message: expect.stringContaining('must be one of normal, exponential (got "pareto")'),
      },
    ]);
  });

  it('names missing and out-of-range parameters, and fields a distribution does not take', () => {
    expect(issues({ distribution: 'normal', mean: 100 }).map((i) => i.path)).toEqual([
      'producers.messageSize.stddev',
    ]);
    expect(issues({ distribution: 'exponential', mean: 0 })[0]?.path).toBe('producers.messageSize.mean');
    expect(issues({ distribution: 'normal', mean: 100, stddev: 5, min: 50, max: 10 })[0]).toMatchObject({
      path: 'producers.messageSize.min',
      message: 'must not be larger than max',
    });
    expect(issues({ distribution: 'exponential', mean: 100, stddev: 5 })[0]).toMatchObject({
      path: 'producers.messageSize.stddev',
      message: 'unknown field; allowed fields here: distribution, mean, min, max',
    });
  });

  it('accepts a payload file, resolved against the scenario file when relative', () => {
    const raw = { producers: { messageSize: { payloadFile: 'payload/1kb.data' } } };
    const resolved = resolvePayloadFile(raw, '/scenarios/omb/workload.yaml');
    expect(parseScenario(resolved).producers.messageSize).toEqual({
      payloadFile: '/scenarios/omb/payload/1kb.data',
    });
    expect(raw.producers.messageSize.payloadFile).toBe('payload/1kb.data');
    const absolute = { producers: { messageSize: { payloadFile: '/data/p.bin' } } };
    expect(resolvePayloadFile(absolute, '/scenarios/x.yaml')).toBe(absolute);
    expect(issues({ payloadFile: '' })[0]?.path).toBe('producers.messageSize.payloadFile');
  });

  it('explains every accepted form for a value of the wrong kind', () => {
    expect(issues('big')[0]?.message).toContain('{ distribution: normal, mean, stddev, min?, max? }');
  });
});
