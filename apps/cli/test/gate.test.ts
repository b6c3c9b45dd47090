// `kbench run --repeat` and the regression gate (`kbench run --baseline`, `kbench gate`), spawned as a
// user runs them against the bundled broker: a producer rate-limited by 20% fails the gate with exit 3,
// an unchanged rerun passes it, and bad input is refused with exit 2 before any load is sent.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SaxesParser } from 'saxes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

// A fixed rate the native driver holds on a busy machine; the slowdown is the same scenario at 80% of it.
const RATE = 5000;
const SCENARIO = `name: gate-test
target: bundled
driver: native
topics: { count: 1, partitions: 1 }
producers: { count: 1, acks: 1, messageSize: 100, rate: ${RATE} }
consumers: { count: 0 }
duration: 3s
warmup: 1s
`;
const METRIC = ['--metric', 'produced.recordsPerSec'];

interface FigureStats {
  metric: string;
  values: number[];
  stats: { n: number; mean: number; cv: number | null; ci95: { low: number; high: number } | null };
}
interface RepeatJson {
  series: string;
  runs: { id: string; series: string; sweepValue?: string; status: string }[];
  groups: { target: string; sweepValue?: string; runs: string[]; statistics: FigureStats[] }[];
  gate?: {
    passed: boolean;
    regressions: string[];
    figures: { metric: string; verdict: string }[];
    settingsDiffer: { path: string; baseline: string[]; current: string[] }[];
    runCaveats: { side: string; run: string; kind: string; text: string }[];
  };
}

let home: string;
let file: string;
let baseline: RepeatJson;

async function runCount(): Promise<number> {
  const r = await runKbench(home, ['list', '--json']);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as unknown[]).length;
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-gate-test-'));
  file = path.join(home, 'gate-test.yaml');
  await writeFile(file, SCENARIO);
  const r = await runKbench(home, ['run', file, '--repeat', '3', '--json'], 300_000);
  expect(r.stderr).not.toMatch(/error/i);
  expect(r.code).toBe(0);
  baseline = JSON.parse(r.stdout) as RepeatJson;
}, 360_000);
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('kbench run --repeat', () => {
  it('stores the runs as one series with the mean, CV and 95% interval of each headline figure', () => {
    expect(baseline.series).toMatch(/^repeat:/);
    expect(baseline.runs).toHaveLength(3);
    for (const run of baseline.runs) {
      expect(run.status).toBe('completed');
      expect(run.series).toBe(baseline.series);
    }
    const [group] = baseline.groups;
    expect(group?.runs).toEqual(baseline.runs.map((r) => r.id));
    const rate = group?.statistics.find((f) => f.metric === 'produced.recordsPerSec');
    expect(rate?.values).toHaveLength(3);
    expect(rate?.stats.n).toBe(3);
    const mean = (rate?.values ?? []).reduce((a, b) => a + b, 0) / 3;
    expect(rate?.stats.mean).toBeCloseTo(mean, 6);
    expect(rate?.stats.ci95?.low).toBeLessThanOrEqual(mean);
    expect(rate?.stats.ci95?.high).toBeGreaterThanOrEqual(mean);
    expect(rate?.stats.cv).not.toBeNull();
    // The producer held its fixed rate.
    expect(mean).toBeGreaterThan(RATE * 0.9);
    expect(group?.statistics.map((f) => f.metric)).toContain('publishLatencyMs.p99');
  });

  it("interleaves a sweep's points (A B A B) in one series and prints each point's statistics", async () => {
    const r = await runKbench(
      home,
      [
        'sweep',
        file,
        '--set',
        'duration=1s',
        '--set',
        'warmup=0s',
        '--set',
        'sweep={knob: producers.messageSize, values: [100, 200]}',
        '--repeat',
        '2',
        '--json',
      ],
      300_000,
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as RepeatJson;
    expect(out.runs.map((run) => run.sweepValue)).toEqual(['100', '200', '100', '200']);
    expect(new Set(out.runs.map((run) => run.series))).toEqual(new Set([out.series]));
    expect(out.groups.map((g) => [g.sweepValue, g.runs.length])).toEqual([
      ['100', 2],
      ['200', 2],
    ]);
    expect(await runCount()).toBe(7);
  });
});

describe('the regression gate', () => {
  let slowSeries: string;
  let sameSeries: string;

  it('a producer rate-limited by 20% fails the gate with exit 3, the Markdown printed and JUnit written', async () => {
    const junit = path.join(home, 'out', 'gate.xml');
    const markdown = path.join(home, 'out', 'gate.md');
    const r = await runKbench(
      home,
      [
        'run',
        file,
        '--set',
        `producers.rate=${RATE * 0.8}`,
        '--repeat',
        '3',
        '--baseline',
        baseline.series,
        '--max-regression',
        '10%',
        ...METRIC,
        '--junit',
        junit,
        '--markdown',
        markdown,
      ],
      300_000,
    );
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('### kbench gate: regression in `produced.recordsPerSec`');
    expect(r.stdout).toContain(
      '| metric | baseline mean ± 95% CI | current mean ± 95% CI | change | verdict |',
    );
    const row = r.stdout.split('\n').find((l) => l.startsWith('| produced rec/s (`produced.recordsPerSec`)'));
    expect(row).toMatch(/\| -(1[5-9]|2\d)\.\d% \| \*\*regression\*\* \(p=/);
    expect(r.stdout).toContain('gate FAILED: produced.recordsPerSec regressed beyond 10.0% (exit 3)');
    // The slowdown is a setting of its own, and the gate says so beside its verdict.
    expect(r.stdout).toContain(
      `warning: the runs judged did not run the baseline's settings, so a change may be the settings' rather than the system's: producers.rate: ${RATE * 0.8} (baseline ${RATE})`,
    );
    // The file holds the Markdown as printed.
    expect(r.stdout).toContain(await readFile(markdown, 'utf8'));

    // The JUnit XML parses, and its one failure names the metric.
    const xml = await readFile(junit, 'utf8');
    const parser = new SaxesParser();
    const failing: string[] = [];
    const cases: string[] = [];
    let testcase = '';
    parser.on('opentag', (tag) => {
      if (tag.name === 'testcase') {
        testcase = String(tag.attributes.name);
        cases.push(testcase);
      }
      if (tag.name === 'failure') failing.push(testcase);
    });
    let text = '';
    parser.on('text', (t) => {
      text += t;
    });
    parser.write(xml).close();
    expect(text).toContain(`warning: the runs judged did not run the baseline's settings`);
    expect(text).toContain(`producers.rate: ${RATE * 0.8} (baseline ${RATE})`);
    expect(cases).toEqual(['produced.recordsPerSec']);
    expect(failing).toEqual(['produced.recordsPerSec']);

    const list = await runKbench(home, ['list', '--json']);
    const runs = JSON.parse(list.stdout) as { series?: string }[];
    slowSeries = runs[0]?.series ?? '';
    expect(slowSeries).toMatch(/^repeat:/);
    expect(slowSeries).not.toBe(baseline.series);
  });

  it('a rerun of the unchanged scenario passes the gate', async () => {
    const r = await runKbench(
      home,
      ['run', file, '--repeat', '3', '--baseline', baseline.series, ...METRIC, '--json'],
      300_000,
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as RepeatJson;
    expect(out.gate?.passed).toBe(true);
    expect(out.gate?.regressions).toEqual([]);
    expect(out.gate?.figures.map((f) => f.metric)).toEqual(['produced.recordsPerSec']);
    expect(out.gate?.settingsDiffer).toEqual([]);
    sameSeries = out.series;
  });

  it('kbench gate judges stored series: the slow one fails (exit 3), the unchanged one passes', async () => {
    const slow = await runKbench(home, [
      'gate',
      slowSeries,
      '--baseline',
      baseline.series,
      ...METRIC,
      '--json',
    ]);
    expect(slow.code).toBe(3);
    const verdict = JSON.parse(slow.stdout) as NonNullable<RepeatJson['gate']>;
    expect(verdict.regressions).toEqual(['produced.recordsPerSec']);
    expect(verdict.settingsDiffer).toEqual([
      { path: 'producers.rate', baseline: [String(RATE)], current: [String(RATE * 0.8)] },
    ]);
    const same = await runKbench(home, ['gate', sameSeries, '--baseline', baseline.series, ...METRIC]);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('### kbench gate: passed');
    // Without --metric: the default metrics the baseline has (no consumers: no consumed rate or end-to-end).
    const defaults = await runKbench(home, ['gate', sameSeries, '--baseline', baseline.series, '--json']);
    const judgedByDefault = JSON.parse(defaults.stdout) as { figures: { metric: string }[] };
    expect(judgedByDefault.figures.map((f) => f.metric)).toEqual([
      'produced.recordsPerSec',
      'publishLatencyMs.p99',
    ]);
    // A single run against the baseline's three is judged by their prediction interval.
    const slowRun = await runKbench(home, ['list', '--json']);
    const one = (JSON.parse(slowRun.stdout) as { id: string; series?: string }[]).find(
      (run) => run.series === slowSeries,
    );
    const single = await runKbench(home, [
      'gate',
      one?.id ?? '',
      '--baseline',
      baseline.series,
      ...METRIC,
      '--json',
    ]);
    expect(single.code).toBe(3);
    const judged = JSON.parse(single.stdout) as NonNullable<RepeatJson['gate']> & {
      figures: { rule: string }[];
    };
    expect(judged.figures).toMatchObject([{ rule: 'prediction', verdict: 'regression' }]);
    // A run named by its id carries its settings as a series does.
    expect(judged.settingsDiffer).toEqual([
      { path: 'producers.rate', baseline: [String(RATE)], current: [String(RATE * 0.8)] },
    ]);
  });
});

describe('runs whose figures are not the target alone', () => {
  it('the gate and compare name a run that fell short of its rate, beside the verdict', async () => {
    // A rate no producer reaches: the run records what it reached and says it fell short.
    const short = await runKbench(
      home,
      ['run', file, '--set', 'producers.rate=1000000000', '--json'],
      120_000,
    );
    expect(short.code).toBe(0);
    const { id } = JSON.parse(short.stdout) as { id: string };
    const gate = await runKbench(home, ['gate', id, '--baseline', baseline.series, ...METRIC, '--json']);
    const verdict = JSON.parse(gate.stdout) as NonNullable<RepeatJson['gate']>;
    expect(verdict.runCaveats).toContainEqual({
      side: 'current',
      run: id,
      kind: 'rate-short',
      text: expect.stringMatching(/^reached [\d,]+ of the 1,000,000,000 records\/s asked$/),
    });
    const text = await runKbench(home, ['gate', id, '--baseline', baseline.series, ...METRIC]);
    expect(text.stdout).toMatch(
      new RegExp(
        `\nwarning: some runs' figures are not the target's alone, so a change may be theirs rather than the system's: judged run ${id} \\([^\n]*reached [\\d,]+ of the 1,000,000,000 records/s asked`,
      ),
    );
    expect(text.stdout).toMatch(/> \*\*warning\*\*: some runs' figures are not the target's alone/);
    const compared = await runKbench(home, ['compare', id, baseline.runs[0]?.id ?? '']);
    expect(compared.code).toBe(0);
    // A warning is cut into lines of 120 columns, each after the first indented by two.
    expect(compared.stdout.split('\n').filter((line) => line.length > 120)).toEqual([]);
    expect(compared.stdout.replace(/\n {2}(?=\S)/g, ' ')).toMatch(
      new RegExp(
        `\nwarning: ${id}: [^\n]*reached [\\d,]+ of the 1,000,000,000 records/s asked, so its figures are not the target's alone`,
      ),
    );
  });
});

describe('bad input to the gate: exit 2 naming it, before any load is sent', () => {
  const cases: [string, () => string[], RegExp][] = [
    [
      'an unknown baseline',
      () => ['--baseline', 'no-such-thing'],
      /--baseline "no-such-thing": no run, tag or series/,
    ],
    [
      'a metric that does not exist',
      () => ['--baseline', baseline.series, '--metric', 'produced.recordPerSec'],
      /--metric: unknown metric "produced.recordPerSec" \(did you mean "produced.recordsPerSec"\?\); valid metrics: .*publishLatencyMs.p99/,
    ],
    [
      'a metric the baseline does not have',
      () => ['--baseline', baseline.series, '--metric', 'endToEndLatencyMs.p99'],
      /the baseline ".*" has no endToEndLatencyMs.p99/,
    ],
    [
      'a bad --max-regression',
      () => ['--baseline', baseline.series, '--max-regression=-5%'],
      /--max-regression: "-5%" is not a percentage above 0 and at most 1000/,
    ],
    [
      '--metric without --baseline',
      () => ['--metric', 'produced.recordsPerSec'],
      /--metric goes with --baseline/,
    ],
    ['--repeat 0', () => ['--repeat', '0'], /--repeat must be a whole number from 1 to 100 \(got "0"\)/],
  ];
  for (const [what, args, message] of cases) {
    it(what, async () => {
      const before = await runCount();
      const r = await runKbench(home, ['run', file, ...args()]);
      expect(r.stderr).toMatch(message);
      expect(r.code).toBe(2);
      expect(await runCount()).toBe(before);
    });
  }

  it('--dry-run with --repeat and --baseline checks the baseline and shows the plan once', async () => {
    const before = await runCount();
    const r = await runKbench(home, [
      'run',
      file,
      '--repeat',
      '3',
      '--baseline',
      baseline.series,
      '--dry-run',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as { load?: { rate: unknown } };
    expect(Array.isArray(plan)).toBe(false);
    expect(plan.load?.rate).toBe(RATE);
    expect(await runCount()).toBe(before);
  });

  it('a baseline of another scenario', async () => {
    const before = await runCount();
    const r = await runKbench(home, ['run', 'quickstart', '--baseline', baseline.series]);
    expect(r.stderr).toContain(
      `--baseline "${baseline.series}" is a series of scenario "gate-test", not "quickstart"`,
    );
    expect(r.code).toBe(2);
    expect(await runCount()).toBe(before);
    const g = await runKbench(home, ['gate', baseline.runs[0]?.id ?? '', '--baseline', baseline.series]);
    expect(g.code).toBe(2);
    expect(g.stderr).toContain('share');
  });

  it('kbench gate without --baseline, and --help naming the exit code', async () => {
    const r = await runKbench(home, ['gate', baseline.series]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('kbench gate: --baseline <run id | tag | series> is required');
    const help = await runKbench(home, ['gate', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--max-regression P/);
    expect(help.stdout).toMatch(/3 the gate found a regression/);
  });
});
