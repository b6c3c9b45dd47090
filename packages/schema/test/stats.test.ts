import { describe, expect, it } from 'vitest';
import {
  bestValueIndex,
  DEFAULT_GATE_METRIC_NAMES,
  describeSample,
  HEADLINE_FIGURES,
  HEADLINE_METRIC_NAMES,
  judge,
  METRIC_NAMES,
  metricDirection,
  metricNamed,
  parsePercent,
  predictionPValue,
  RUN_METRICS,
  type RunSummary,
  runMetricValue,
  studentTCdf,
  studentTQuantile,
  welchPValue,
} from '../src/index.js';

describe('metrics and which way each is better', () => {
  it('rates are better higher; latencies, errors and cores lower', () => {
    expect(metricDirection('produced.recordsPerSec')).toBe('higher');
    expect(metricDirection('consumed.mbPerSec')).toBe('higher');
    expect(metricDirection('publishLatencyMs.p99')).toBe('lower');
    expect(metricDirection('endToEndLatencyMs.max')).toBe('lower');
    expect(metricDirection('produced.errors')).toBe('lower');
    expect(metricDirection('client.cpuCores')).toBe('lower');
    for (const m of RUN_METRICS)
      expect(m.better).toBe(m.unit === 'rec/s' || m.unit === 'MB/s' ? 'higher' : 'lower');
    // The comparison's headline figures agree wherever they name a direction.
    for (const figure of HEADLINE_FIGURES) {
      const metric = RUN_METRICS.find((m) => m.label === figure.label);
      if (figure.better && metric) expect(metric.better).toBe(figure.better);
    }
  });

  it('the best of a list is the highest rate and the lowest latency; nulls never win', () => {
    expect(bestValueIndex('higher', [10, null, 30, 30, 20])).toBe(2);
    expect(bestValueIndex('lower', [null, 5, 3, 3, 9])).toBe(2);
    expect(bestValueIndex('lower', [null, null])).toBe(-1);
    expect(bestValueIndex('higher', [])).toBe(-1);
  });

  it('an unknown name throws naming it, the nearest name and the valid ones', () => {
    expect(() => metricNamed('publishLatencyMs.p90')).toThrow(
      /unknown metric "publishLatencyMs.p90" \(did you mean "publishLatencyMs.p50"\?\); valid metrics: produced.recordsPerSec, /,
    );
    for (const name of [...HEADLINE_METRIC_NAMES, ...DEFAULT_GATE_METRIC_NAMES])
      expect(METRIC_NAMES).toContain(name);
  });

  it('reads a figure from a summary, null where the run has none', () => {
    const summary = {
      measuredSeconds: 10,
      produced: { records: 100, recordsPerSec: 10, mbPerSec: 1, wireMbPerSec: null, errors: 0 },
      consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
      publishLatencyMs: {
        count: 1,
        p50: 1,
        p75: 2,
        p95: 3,
        p99: 4,
        p999: 5,
        p9999: 6,
        max: 7,
        mean: 2,
        worst10Mean: 5,
      },
      endToEndLatencyMs: null,
    } satisfies RunSummary;
    expect(runMetricValue(metricNamed('publishLatencyMs.p999'), summary)).toBe(5);
    expect(runMetricValue(metricNamed('endToEndLatencyMs.p99'), summary)).toBeNull();
    expect(runMetricValue(metricNamed('client.cpuCores'), summary)).toBeNull();
    expect(runMetricValue(metricNamed('produced.recordsPerSec'), null)).toBeNull();
  });
});

describe('statistics of repeated runs', () => {
  it('Student t quantiles match the tables', () => {
    expect(studentTQuantile(0.975, 1)).toBeCloseTo(12.7062047, 5);
    expect(studentTQuantile(0.975, 4)).toBeCloseTo(2.7764451, 6);
    expect(studentTQuantile(0.975, 9)).toBeCloseTo(2.2621572, 6);
    expect(studentTQuantile(0.975, 30)).toBeCloseTo(2.0422725, 6);
    expect(studentTQuantile(0.025, 4)).toBeCloseTo(-2.7764451, 6);
    expect(studentTCdf(0, 3)).toBeCloseTo(0.5, 12);
    expect(studentTCdf(2.7764451, 4)).toBeCloseTo(0.975, 7);
  });

  it('mean, coefficient of variation and 95% interval of a sample', () => {
    const s = describeSample([1, 2, 3, 4, 5]);
    expect(s?.n).toBe(5);
    expect(s?.mean).toBe(3);
    expect(s?.stdDev).toBeCloseTo(Math.sqrt(2.5), 12);
    expect(s?.cv).toBeCloseTo(Math.sqrt(2.5) / 3, 12);
    // 3 ± t(0.975, 4) * sqrt(2.5 / 5)
    expect(s?.ci95?.halfWidth).toBeCloseTo(2.7764451 * Math.sqrt(0.5), 6);
    expect(s?.ci95?.low).toBeCloseTo(3 - 2.7764451 * Math.sqrt(0.5), 6);
    expect(describeSample([7])).toEqual({ n: 1, mean: 7, stdDev: null, cv: null, ci95: null });
    expect(describeSample([])).toBeNull();
    expect(describeSample([0, 0])?.cv).toBeNull();
  });

  it("Welch's test: p = 0.05 exactly at the critical t, 1 for equal samples", () => {
    // Equal spread and size (5 each, variance 2.5): standard error 1 and 8 degrees of freedom.
    const a = [1, 2, 3, 4, 5];
    const t8 = 2.3060041;
    expect(
      welchPValue(
        a,
        a.map((v) => v + t8),
      ),
    ).toBeCloseTo(0.05, 6);
    expect(welchPValue(a, a)).toBeCloseTo(1, 12);
    expect(welchPValue([2, 2], [2, 2])).toBe(1);
    expect(welchPValue([2, 2], [3, 3])).toBe(0);
    // A single value against 5: t = diff / (s * sqrt(1 + 1/5)), 4 df.
    const s = Math.sqrt(2.5);
    expect(predictionPValue(a, 3 + 2.7764451 * s * Math.sqrt(1.2))).toBeCloseTo(0.05, 6);
  });
});

describe('the gate rule', () => {
  const base = [100, 102, 98, 101, 99];
  it('a rate down beyond the threshold and the noise is a regression; a latency up likewise', () => {
    const j = judge('higher', base, [80, 81, 79, 80.5, 79.5], 10);
    expect(j.verdict).toBe('regression');
    expect(j.rule).toBe('welch');
    expect(j.changePercent).toBeCloseTo(-20, 6);
    expect(j.worsePercent).toBeCloseTo(20, 6);
    expect(j.pValue).toBeLessThan(0.05);
    expect(judge('lower', base, [120, 121, 119, 120.5, 119.5], 10).verdict).toBe('regression');
  });

  it('the same change in the good direction is an improvement', () => {
    expect(judge('lower', base, [80, 81, 79, 80.5, 79.5], 10).verdict).toBe('improvement');
    expect(judge('higher', base, [120, 121, 119, 120.5, 119.5], 10).verdict).toBe('improvement');
  });

  it('a change below the threshold passes however clear it is', () => {
    const j = judge('higher', base, [95, 95.1, 94.9, 95, 95], 10);
    expect(j.outsideNoise).toBe(true);
    expect(j.verdict).toBe('within threshold');
  });

  it('a change beyond the threshold inside the noise passes', () => {
    const j = judge('higher', [100, 140, 60, 120, 80], [85, 125, 45, 105, 65], 10);
    expect(j.worsePercent).toBeCloseTo(15, 6);
    expect(j.outsideNoise).toBe(false);
    expect(j.verdict).toBe('within noise');
  });

  it('one run against repeats is judged by the repeats’ prediction interval', () => {
    expect(judge('higher', base, [80], 10)).toMatchObject({ rule: 'prediction', verdict: 'regression' });
    expect(judge('higher', [80], base, 10)).toMatchObject({ rule: 'prediction', verdict: 'improvement' });
    expect(judge('higher', [100, 140, 60, 120, 80], [85], 10)).toMatchObject({ verdict: 'within noise' });
  });

  it('one run on each side needs twice the threshold', () => {
    expect(judge('higher', [100], [85], 10)).toMatchObject({ rule: 'single', verdict: 'within noise' });
    expect(judge('higher', [100], [75], 10)).toMatchObject({ rule: 'single', verdict: 'regression' });
    expect(judge('lower', [100], [105], 10)).toMatchObject({ verdict: 'within threshold' });
  });

  it('no values on a side is missing; a baseline of 0 becomes an infinite change', () => {
    expect(judge('higher', [], [1], 10).verdict).toBe('missing');
    const errors = judge('lower', [0, 0, 0], [5, 6, 4], 10);
    expect(errors.changePercent).toBe(Infinity);
    expect(errors.verdict).toBe('regression');
    expect(judge('lower', [0, 0], [0, 0], 10).verdict).toBe('within threshold');
  });

  it('--max-regression takes 10% or 10; anything else is refused naming it', () => {
    expect(parsePercent('10%')).toBe(10);
    expect(parsePercent('2.5')).toBe(2.5);
    for (const bad of ['', 'ten', '-5%', '0', '0%', '1001%', '10%%', '5 percent'])
      expect(() => parsePercent(bad)).toThrow(
        `${JSON.stringify(bad)} is not a percentage above 0 and at most 1000`,
      );
  });
});
