// A write-up's published figures (scenarios/<folder>/published.yaml) and the declarative rules
// that say which direction each effect should go, evaluated on our measured runs.
import { z } from 'zod';
import { readScenarioText } from './parse.js';
import { LATENCY_KEYS, type RunSummary, type Sample } from './run.js';
import type { Scenario } from './scenario.js';

export const DIRECTIONS = ['increasing', 'decreasing', 'flat', 'peak'] as const;
export const COMPARISONS = ['higher', 'lower', 'similar'] as const;

/** Across a sweep's knob (its values in the listed order) or across time within one run. */
export interface ExpectRule {
  kind: 'expect';
  metric: string;
  across: string;
  direction: (typeof DIRECTIONS)[number];
  /** Relative change still counted as flat; for increasing and decreasing, the change needed (default 0.1). */
  tolerance: number;
  says: string;
}

/** Scenario a's metric against scenario b's; `file.yaml[value]` picks one value of a sweep. */
export interface CompareRule {
  kind: 'compare';
  metric: string;
  a: string;
  b: string;
  expect: (typeof COMPARISONS)[number];
  tolerance: number;
  says: string;
}

export type Rule = ExpectRule | CompareRule;

export interface Experiment {
  scenario: string;
  title: string;
  published: Record<string, string>;
  /** Our figures to show beside theirs, as summary metric paths. */
  figures: string[];
  checks: Rule[];
  /** Why our setup may show the effect differently (one machine, say); empty when there is none. */
  note: string;
}

export interface Published {
  title: string;
  url: string;
  setup: string;
  experiments: Experiment[];
}

const THROUGHPUT = ['records', 'recordsPerSec', 'mbPerSec'];
/** Every summary figure a rule or a table may name. */
export const METRICS: readonly string[] = [
  'measuredSeconds',
  ...THROUGHPUT.map((k) => `produced.${k}`),
  'produced.wireMbPerSec',
  'produced.errors',
  ...THROUGHPUT.map((k) => `consumed.${k}`),
  ...LATENCY_KEYS.map((k) => `publishLatencyMs.${k}`),
  ...LATENCY_KEYS.map((k) => `endToEndLatencyMs.${k}`),
  'client.cpuCores',
];

/** Figures that exist per sample too, so `across: time` can follow them through a run. */
const SAMPLE_METRICS: Record<string, (s: Sample) => number | null> = {
  'produced.recordsPerSec': (s) => (s.producedRecords * 1000) / s.intervalMs,
  'produced.mbPerSec': (s) => (s.producedBytes * 1000) / s.intervalMs / 1024 ** 2,
  'consumed.recordsPerSec': (s) => (s.consumedRecords * 1000) / s.intervalMs,
  'consumed.mbPerSec': (s) => (s.consumedBytes * 1000) / s.intervalMs / 1024 ** 2,
  'publishLatencyMs.p99': (s) => s.publishP99Ms,
  'endToEndLatencyMs.p99': (s) => s.e2eP99Ms,
};
export const TIME_METRICS = Object.keys(SAMPLE_METRICS);

export const DEFAULT_FIGURES = ['produced.recordsPerSec', 'produced.mbPerSec', 'publishLatencyMs.p99'];

const LABELS: Record<string, string> = {
  recordsPerSec: 'rec/s',
  mbPerSec: 'MB/s',
  wireMbPerSec: 'wire MB/s',
  p999: 'p99.9',
  p9999: 'p99.99',
  worst10Mean: 'worst 10% mean',
  publishLatencyMs: 'publish',
  endToEndLatencyMs: 'end-to-end',
  cpuCores: 'cores',
};
/** `produced.recordsPerSec` -> `produced rec/s`, `publishLatencyMs.p999` -> `publish p99.9`. */
export function metricLabel(metric: string): string {
  return metric
    .split('.')
    .map((p) => LABELS[p] ?? p)
    .join(' ');
}

export class PublishedError extends Error {
  override name = 'PublishedError';
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Reads published.yaml text, checking every field; errors name the path, as scenario errors do. */
export function parsePublished(text: string, source = 'published.yaml'): Published {
  const raw = readScenarioText(text, source);
  const problems: string[] = [];
  const bad = (path: string, message: string) => problems.push(`${path}: ${message}`);
  const str = (o: Obj, key: string, path: string, required = true): string => {
    const v = o[key];
    if (typeof v === 'string' && v.trim() !== '') return v;
    if (v === undefined && !required) return '';
    bad(`${path}${key}`, `must be text (got ${JSON.stringify(v)})`);
    return '';
  };
  if (!isObj(raw)) throw new PublishedError(`${source}: must be an object with title and experiments`);
  const experimentsRaw = raw.experiments;
  if (!Array.isArray(experimentsRaw) || experimentsRaw.length === 0)
    bad('experiments', 'must list experiments');
  const experiments = (Array.isArray(experimentsRaw) ? experimentsRaw : []).map((e, i): Experiment => {
    const at = `experiments[${i}].`;
    if (!isObj(e)) {
      bad(`experiments[${i}]`, 'must be an object');
      return { scenario: '', title: '', published: {}, figures: [], checks: [], note: '' };
    }
    const published: Record<string, string> = {};
    if (!isObj(e.published)) bad(`${at}published`, 'must map each published figure to its value');
    else
      for (const [k, v] of Object.entries(e.published)) {
        // In `{ 50,001 topics: worse }` a comma ends an entry: a key `50` with no value, then `001 topics`.
        if (v === null || v === undefined || (typeof v === 'string' && v.trim() === ''))
          bad(
            `${at}published[${JSON.stringify(k)}]`,
            `has no value (got ${JSON.stringify(v ?? null)}); inside { } a comma ends an entry, so quote text with commas`,
          );
        else published[k] = String(v);
      }
    const figures = e.figures === undefined ? DEFAULT_FIGURES : e.figures;
    if (!Array.isArray(figures)) bad(`${at}figures`, 'must list metric paths');
    const figureList = (Array.isArray(figures) ? figures : []).map(String);
    figureList.forEach((f, j) => {
      if (!METRICS.includes(f)) bad(`${at}figures[${j}]`, `unknown metric ${JSON.stringify(f)}`);
    });
    const checks = (Array.isArray(e.checks) ? e.checks : []).map((c, j) =>
      parseRule(c, `${at}checks[${j}]`, bad),
    );
    if (e.checks !== undefined && !Array.isArray(e.checks)) bad(`${at}checks`, 'must be a list of rules');
    return {
      scenario: str(e, 'scenario', at),
      title: str(e, 'title', at),
      published,
      figures: figureList,
      note: str(e, 'note', at, false),
      checks: checks.filter((c): c is Rule => c !== null),
    };
  });
  const out: Published = {
    title: str(raw, 'title', ''),
    url: str(raw, 'url', '', false),
    setup: str(raw, 'setup', '', false),
    experiments,
  };
  if (problems.length > 0) throw new PublishedError(`${source}: invalid\n  ${problems.join('\n  ')}`);
  return out;
}

function parseRule(input: unknown, at: string, bad: (path: string, message: string) => void): Rule | null {
  if (!isObj(input)) {
    bad(at, 'must be { expect: {...} } or { compare: {...} }, with says');
    return null;
  }
  const says = typeof input.says === 'string' ? input.says : '';
  if (!says) bad(`${at}.says`, 'must say in words what the rule checks');
  const metricOf = (o: Obj, path: string): string => {
    const m = String(o.metric);
    if (!METRICS.includes(m))
      bad(`${path}.metric`, `unknown metric ${JSON.stringify(o.metric)}; known: ${METRICS.join(', ')}`);
    return m;
  };
  const tolerance = (o: Obj, path: string): number => {
    if (o.tolerance === undefined) return 0.1;
    const t = Number(o.tolerance);
    if (!(t >= 0 && t < 1))
      bad(`${path}.tolerance`, `must be a fraction from 0 to 1 (got ${JSON.stringify(o.tolerance)})`);
    return t;
  };
  if (isObj(input.expect)) {
    const o = input.expect;
    const path = `${at}.expect`;
    const direction = o.direction as ExpectRule['direction'];
    if (!DIRECTIONS.includes(direction)) bad(`${path}.direction`, `must be one of ${DIRECTIONS.join(', ')}`);
    const across = typeof o.across === 'string' ? o.across : '';
    if (!across) bad(`${path}.across`, 'must name the sweep knob, or time');
    const metric = metricOf(o, path);
    if (across === 'time' && !TIME_METRICS.includes(metric))
      bad(`${path}.metric`, `across time needs a per-sample metric: ${TIME_METRICS.join(', ')}`);
    return { kind: 'expect', metric, across, direction, tolerance: tolerance(o, path), says };
  }
  if (isObj(input.compare)) {
    const o = input.compare;
    const path = `${at}.compare`;
    const expect = o.expect as CompareRule['expect'];
    if (!COMPARISONS.includes(expect)) bad(`${path}.expect`, `must be one of ${COMPARISONS.join(', ')}`);
    for (const side of ['a', 'b'] as const) {
      if (typeof o[side] !== 'string' || !SCENARIO_REF.test(o[side] as string))
        bad(`${path}.${side}`, 'must name a scenario file of this folder, or file.yaml[sweep value]');
    }
    return {
      kind: 'compare',
      metric: metricOf(o, path),
      a: String(o.a),
      b: String(o.b),
      expect,
      tolerance: tolerance(o, path),
      says,
    };
  }
  bad(at, 'must be { expect: {...} } or { compare: {...} }');
  return null;
}

const SCENARIO_REF = /^([^[\]]+\.ya?ml)(?:\[(.+)\])?$/;

/** `file.yaml` or `file.yaml[value]` -> the file and the sweep value, if any. */
export function parseScenarioRef(ref: string): { file: string; value?: string } {
  const m = SCENARIO_REF.exec(ref);
  return { file: m?.[1] ?? ref, value: m?.[2] };
}

/** The sweep value of each plan expandSweep makes, as a rule's `file.yaml[value]` names it. */
export function sweepLabels(scenario: Scenario): (string | undefined)[] {
  if (!scenario.sweep) return [undefined];
  return scenario.sweep.values.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v)));
}

/** Reads a metric path from a summary; null when the run did not measure it. */
export function metricValue(summary: RunSummary | null, metric: string): number | null {
  let node: unknown = summary;
  for (const part of metric.split('.')) {
    if (!isObj(node)) return null;
    node = node[part];
  }
  return typeof node === 'number' && Number.isFinite(node) ? node : null;
}

/** One measured run, as the rules see it. */
export interface MeasuredRun {
  /** The scenario file within the folder. */
  file: string;
  /** The sweep value this run had, as written in the scenario (undefined without a sweep). */
  sweepValue?: string;
  summary: RunSummary | null;
  samples: Sample[];
}

export const verdictSchema = z.object({
  says: z.string(),
  /** null: the rule could not be checked (a run missing or not measured). */
  matches: z.boolean().nullable(),
  detail: z.string(),
});
export type Verdict = z.infer<typeof verdictSchema>;

/** A verdict's outcome in words; a quick run's few seconds settle no direction, so it is only indicative. */
export function verdictOutcome(
  v: Verdict,
  quick: boolean,
): { kind: 'match' | 'mismatch' | 'unchecked'; text: string } {
  if (v.matches === null) return { kind: 'unchecked', text: 'not checked' };
  const text = v.matches ? 'matches' : 'does not match';
  return { kind: v.matches ? 'match' : 'mismatch', text: quick ? `indicative: ${text}` : text };
}

const fmt = (v: number) =>
  v.toLocaleString('en-US', { maximumFractionDigits: Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 1 ? 2 : 3 });

/** Evaluates a rule on the runs of an experiment folder; `own` is the experiment's scenario file. */
export function evaluateRule(rule: Rule, own: string, runs: MeasuredRun[]): Verdict {
  return rule.kind === 'compare' ? evaluateCompare(rule, runs) : evaluateExpect(rule, own, runs);
}

function findRun(ref: string, runs: MeasuredRun[]): MeasuredRun | undefined {
  const { file, value } = parseScenarioRef(ref);
  return runs.find((r) => r.file === file && (value === undefined || r.sweepValue === value));
}

function evaluateCompare(rule: CompareRule, runs: MeasuredRun[]): Verdict {
  const a = findRun(rule.a, runs);
  const b = findRun(rule.b, runs);
  const missing = [!a && rule.a, !b && rule.b].filter(Boolean);
  if (missing.length > 0)
    return { says: rule.says, matches: null, detail: `not checked: ${missing.join(' and ')} not run` };
  const va = metricValue(a?.summary ?? null, rule.metric);
  const vb = metricValue(b?.summary ?? null, rule.metric);
  if (va === null || vb === null)
    return {
      says: rule.says,
      matches: null,
      detail: `not checked: ${metricLabel(rule.metric)} not measured`,
    };
  const relative = Math.abs(va - vb) / Math.max(Math.abs(va), Math.abs(vb), Number.MIN_VALUE);
  const matches =
    rule.expect === 'higher' ? va > vb : rule.expect === 'lower' ? va < vb : relative <= rule.tolerance;
  const detail = `${metricLabel(rule.metric)} ${fmt(va)} (${rule.a}) vs ${fmt(vb)} (${rule.b})`;
  return { says: rule.says, matches, detail };
}

function evaluateExpect(rule: ExpectRule, own: string, runs: MeasuredRun[]): Verdict {
  let series: { at: string; value: number }[];
  if (rule.across === 'time') {
    const run = runs.find((r) => r.file === own);
    const pick = SAMPLE_METRICS[rule.metric];
    if (!run || !pick) return { says: rule.says, matches: null, detail: `not checked: ${own} not run` };
    series = run.samples
      .filter((s) => !s.warmup && s.intervalMs > 0)
      .map((s) => ({ at: `${Math.round(s.t)}s`, value: pick(s) }))
      .filter((p): p is { at: string; value: number } => p.value !== null);
  } else {
    series = runs
      .filter((r) => r.file === own)
      .map((r) => ({ at: r.sweepValue ?? '?', value: metricValue(r.summary, rule.metric) }))
      .filter((p): p is { at: string; value: number } => p.value !== null);
  }
  if (series.length < 2)
    return {
      says: rule.says,
      matches: null,
      detail: `not checked: fewer than two measured points across ${rule.across}`,
    };
  const values = series.map((p) => p.value);
  const first = values[0] as number;
  const last = values[values.length - 1] as number;
  const steps = values.slice(1).map((v, i) => v - (values[i] as number));
  const label = metricLabel(rule.metric);
  if (rule.direction === 'flat') {
    // Thirds, so one noisy second at either end does not decide it.
    const third = Math.max(1, Math.floor(values.length / 3));
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const head = mean(values.slice(0, third));
    const tail = mean(values.slice(-third));
    const change = head === 0 ? (tail === 0 ? 0 : 1) : (tail - head) / head;
    return {
      says: rule.says,
      matches: Math.abs(change) <= rule.tolerance,
      detail: `${label}: first third ${fmt(head)}, last third ${fmt(tail)} (${change >= 0 ? '+' : ''}${fmt(change * 100)}%) over ${values.length} samples`,
    };
  }
  const path = series.map((p) => `${p.at}: ${fmt(p.value)}`).join(', ');
  if (rule.direction === 'peak') {
    const top = values.indexOf(Math.max(...values));
    return {
      says: rule.says,
      matches: top > 0 && top < values.length - 1,
      detail: `${label} across ${rule.across} (${path}); highest at ${series[top]?.at}`,
    };
  }
  const up = rule.direction === 'increasing';
  const agreeing = steps.filter((d) => (up ? d > 0 : d < 0)).length;
  // From the first point to the last, by more than the tolerance: a change within it is noise on
  // one run per point, and does not count as the effect.
  const change = first === 0 ? (last === 0 ? 0 : Math.sign(last)) : (last - first) / Math.abs(first);
  const pct = `${change >= 0 ? '+' : ''}${fmt(change * 100)}%`;
  return {
    says: rule.says,
    matches: up ? change > rule.tolerance : change < -rule.tolerance,
    detail: `${label} across ${rule.across} (${path}); ${agreeing} of ${steps.length} steps ${up ? 'rise' : 'fall'}, ${pct} first to last (the effect needs more than ${up ? '+' : '-'}${fmt(rule.tolerance * 100)}%)`,
  };
}
