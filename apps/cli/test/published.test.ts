// The reproduction folders: every scenario parses, every published.yaml parses and its rules name
// metrics, files and sweep values that exist; and the direction rules on hand-made summaries.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  evaluateRule,
  expandSweep,
  METRICS,
  type MeasuredRun,
  parsePublished,
  parseScenario,
  quickVersion,
  type Rule,
  type RunSummary,
  readScenarioText,
  type Sample,
} from '@kbench/schema';
import { describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const SCENARIOS = path.resolve(here, '../../../scenarios');
const folders = readdirSync(SCENARIOS, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);
const yamlFiles = (folder: string) =>
  readdirSync(path.join(SCENARIOS, folder)).filter((f) => /\.ya?ml$/.test(f) && f !== 'published.yaml');
const readScenario = (file: string) =>
  parseScenario(readScenarioText(readFileSync(file, 'utf8'), file), file);

describe('scenarios/**', () => {
  const files = [
    'quickstart.yaml',
    ...folders.flatMap((folder) => yamlFiles(folder).map((f) => path.join(folder, f))),
  ];
  it.each(files)('%s parses, sweep values included', (file) => {
    const s = readScenario(path.join(SCENARIOS, file));
    expect(expandSweep(s).length).toBeGreaterThan(0);
  });

  it.each(folders.flatMap((folder) => yamlFiles(folder).map((f) => path.join(folder, f))))(
    '%s quotes its published setup in a description',
    (file) => {
      expect(readScenario(path.join(SCENARIOS, file)).description.length).toBeGreaterThan(80);
    },
  );
});

describe.each(folders)('scenarios/%s/published.yaml', (folder) => {
  const published = parsePublished(readFileSync(path.join(SCENARIOS, folder, 'published.yaml'), 'utf8'));

  it('lists every scenario of the folder, and only those', () => {
    expect(published.experiments.map((e) => e.scenario).sort()).toEqual(yamlFiles(folder).sort());
  });

  it('has rules whose metrics exist, whose files exist and whose sweep values and knobs match', () => {
    for (const e of published.experiments) {
      for (const f of e.figures) expect(METRICS).toContain(f);
      for (const rule of e.checks) {
        expect(METRICS).toContain(rule.metric);
        if (rule.kind === 'compare') {
          for (const ref of [rule.a, rule.b]) {
            const [, file, value] = /^([^[]+)(?:\[(.+)\])?$/.exec(ref) ?? [];
            expect(yamlFiles(folder)).toContain(file);
            const s = readScenario(path.join(SCENARIOS, folder, file as string));
            if (value !== undefined) expect(s.sweep?.values.map(String)).toContain(value);
          }
        } else if (rule.across !== 'time') {
          expect(readScenario(path.join(SCENARIOS, folder, e.scenario)).sweep?.knob).toBe(rule.across);
        }
      }
    }
  });
});

describe('parsePublished', () => {
  it('refuses a published figure without a value (a comma inside a flow-mapping key splits it)', () => {
    const text = `title: t\nexperiments:\n  - scenario: a.yaml\n    title: a\n    published: { 1 topic: lowest, 50,001 topics: worse }\n`;
    expect(() => parsePublished(text)).toThrow(
      'experiments[0].published["50"]: has no value (got null); inside { } a comma ends an entry, so quote text with commas',
    );
  });

  it('names an unknown metric by its path', () => {
    const text = `title: t\nexperiments:\n  - scenario: a.yaml\n    title: a\n    published: { x: '1' }\n    checks:\n      - compare: { a: a.yaml, b: b.yaml, metric: produced.speed, expect: higher }\n        says: faster\n`;
    expect(() => parsePublished(text)).toThrow(
      'experiments[0].checks[0].compare.metric: unknown metric "produced.speed"',
    );
  });
});

function summary(recordsPerSec: number, mbPerSec: number, p99 = 1): RunSummary {
  const latency = {
    count: 1,
    p50: p99 / 2,
    p75: p99,
    p95: p99,
    p99,
    p999: p99,
    p9999: p99,
    max: p99,
    mean: p99 / 2,
    worst10Mean: p99,
  };
  return {
    measuredSeconds: 10,
    produced: { records: recordsPerSec * 10, recordsPerSec, mbPerSec, wireMbPerSec: mbPerSec, errors: 0 },
    consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
    publishLatencyMs: latency,
    endToEndLatencyMs: null,
  };
}

const sweep = (file: string, points: [string, number, number][]): MeasuredRun[] =>
  points.map(([sweepValue, rps, mbps]) => ({ file, sweepValue, summary: summary(rps, mbps), samples: [] }));

describe('evaluateRule', () => {
  const sizes = sweep('size.yaml', [
    ['10', 900_000, 8.6],
    ['100', 800_000, 76],
    ['1000', 100_000, 95],
  ]);
  const increasing: Rule = {
    kind: 'expect',
    metric: 'produced.mbPerSec',
    across: 'producers.messageSize',
    direction: 'increasing',
    tolerance: 0.1,
    says: 'MB/s rises',
  };

  it('increasing across a sweep matches when the last value is above the first', () => {
    const v = evaluateRule(increasing, 'size.yaml', sizes);
    expect(v.matches).toBe(true);
    expect(v.detail).toContain('2 of 2 steps rise');
  });

  it('a change from first to last within the tolerance is noise, not the effect', () => {
    // 0.331 -> 0.376 -> 0.351 ms: the topic-count run of 2026-11-21, +6% first to last.
    const latencies = sweep('t.yaml', [
      ['0', 100, 0.331],
      ['50000', 100, 0.376],
      ['120000', 100, 0.351],
    ]);
    const v = evaluateRule(increasing, 't.yaml', latencies);
    expect(v.matches).toBe(false);
    expect(v.detail).toContain('+6.04% first to last (the effect needs more than +10%)');
    expect(evaluateRule({ ...increasing, tolerance: 0.05 }, 't.yaml', latencies).matches).toBe(true);
    expect(evaluateRule({ ...increasing, direction: 'decreasing' }, 't.yaml', latencies).matches).toBe(false);
  });

  it('decreasing across the same sweep does not match MB/s', () => {
    expect(evaluateRule({ ...increasing, direction: 'decreasing' }, 'size.yaml', sizes).matches).toBe(false);
  });

  it('peak matches only when the highest value is inside the sweep', () => {
    const peak: Rule = { ...increasing, metric: 'produced.recordsPerSec', direction: 'peak' };
    expect(evaluateRule(peak, 'size.yaml', sizes).matches).toBe(false);
    const humped = sweep('p.yaml', [
      ['10', 1, 0],
      ['100', 3, 0],
      ['1000', 2, 0],
    ]);
    expect(evaluateRule(peak, 'p.yaml', humped).matches).toBe(true);
  });

  it('compare picks sweep values and files', () => {
    const rule: Rule = {
      kind: 'compare',
      metric: 'produced.recordsPerSec',
      a: 'size.yaml[10]',
      b: 'size.yaml[1000]',
      expect: 'higher',
      tolerance: 0.1,
      says: 'small is faster',
    };
    expect(evaluateRule(rule, 'size.yaml', sizes).matches).toBe(true);
    expect(evaluateRule({ ...rule, expect: 'lower' }, 'size.yaml', sizes).matches).toBe(false);
    expect(
      evaluateRule({ ...rule, b: 'size.yaml[100]', expect: 'similar', tolerance: 0.2 }, 'size.yaml', sizes)
        .matches,
    ).toBe(true);
  });

  it('is not checked when a run is missing', () => {
    const rule: Rule = {
      kind: 'compare',
      metric: 'produced.recordsPerSec',
      a: 'gone.yaml',
      b: 'size.yaml[10]',
      expect: 'higher',
      tolerance: 0.1,
      says: 'x',
    };
    const v = evaluateRule(rule, 'size.yaml', sizes);
    expect(v.matches).toBeNull();
    expect(v.detail).toContain('gone.yaml not run');
  });

  it('flat across time compares the first and last third of the measured samples', () => {
    const sample = (t: number, records: number, warmup = false): Sample => ({
      t,
      intervalMs: 1000,
      warmup,
      producedRecords: records,
      producedBytes: records * 100,
      consumedRecords: 0,
      consumedBytes: 0,
      errors: 0,
      backlog: 0,
      publishP50Ms: 1,
      publishP99Ms: 2,
      publishMaxMs: 3,
      e2eP50Ms: null,
      e2eP99Ms: null,
      e2eMaxMs: null,
    });
    const flat: Rule = {
      kind: 'expect',
      metric: 'produced.recordsPerSec',
      across: 'time',
      direction: 'flat',
      tolerance: 0.2,
      says: 'flat',
    };
    const steady: MeasuredRun = {
      file: 'long.yaml',
      summary: null,
      samples: [sample(1, 10, true), ...[100, 105, 98, 102, 99, 101].map((r, i) => sample(i + 2, r))],
    };
    expect(evaluateRule(flat, 'long.yaml', [steady]).matches).toBe(true);
    const falling: MeasuredRun = {
      ...steady,
      samples: [100, 100, 80, 60, 50, 40].map((r, i) => sample(i + 1, r)),
    };
    expect(evaluateRule(flat, 'long.yaml', [falling]).matches).toBe(false);
  });
});

describe('--quick on a fault timeline', () => {
  it('moves sangrenel-2014 broker-dropped kill to the same fraction of the short run', () => {
    const file = path.join(SCENARIOS, 'sangrenel-2014/broker-dropped.yaml');
    const raw = readScenarioText(readFileSync(file, 'utf8'), file) as Record<string, unknown>;
    const quick = parseScenario(quickVersion(raw, parseScenario(raw, file)), file);
    // 60 s into 10 s warm-up + 2 min: 60/130 of the quick run's 1 s + 3 s.
    expect(quick.faults).toEqual([{ at: '1.8s', action: 'kill', node: 2 }]);
  });

  it('keeps a pause its length unless the run ends first', () => {
    const raw = {
      name: 'pauses',
      cluster: { nodes: 3 },
      duration: '100s',
      faults: [
        { at: '20s', action: 'pause', node: 1, for: '1s' },
        { at: '80s', action: 'pause', node: 2, for: '30s' },
      ],
    };
    const quick = parseScenario(quickVersion(raw, parseScenario(raw, 'x')), 'x');
    expect(quick.faults).toEqual([
      { at: '600ms', action: 'pause', node: 1, for: '1s' },
      { at: '2.4s', action: 'pause', node: 2, for: '600ms' },
    ]);
  });
});
