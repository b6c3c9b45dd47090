// The statistics of repeated runs: mean, coefficient of variation and a Student-t confidence interval
// of a figure, and the rule the regression gate calls a regression by (a change beyond the threshold
// and outside the noise the repeats measured).
import { type Better, worseningPercent } from './metrics.js';

/** A figure over the runs of a series. */
export interface SampleStats {
  n: number;
  mean: number;
  /** Sample standard deviation (n - 1), null for a single run. */
  stdDev: number | null;
  /** stdDev / |mean|, null for a single run or a mean of 0. */
  cv: number | null;
  /** The 95% confidence interval of the mean (Student t, n - 1 degrees of freedom), null for a single run. */
  ci95: { low: number; high: number; halfWidth: number } | null;
}

export function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return values.length === 0 ? Number.NaN : sum / values.length;
}

/** The sample standard deviation (divisor n - 1); NaN below two values. */
export function stdDev(values: readonly number[]): number {
  if (values.length < 2) return Number.NaN;
  const m = mean(values);
  let squares = 0;
  for (const v of values) squares += (v - m) ** 2;
  return Math.sqrt(squares / (values.length - 1));
}

/** Mean, spread and 95% confidence interval of a figure's values; null for no values. */
export function describeSample(values: readonly number[]): SampleStats | null {
  const n = values.length;
  if (n === 0) return null;
  const m = mean(values);
  if (n === 1) return { n, mean: m, stdDev: null, cv: null, ci95: null };
  const s = stdDev(values);
  const halfWidth = studentTQuantile(0.975, n - 1) * (s / Math.sqrt(n));
  return {
    n,
    mean: m,
    stdDev: s,
    cv: m === 0 ? null : s / Math.abs(m),
    ci95: { low: m - halfWidth, high: m + halfWidth, halfWidth },
  };
}

// ln Γ(x) for x > 0 (Lanczos, g = 7, nine coefficients: about 15 digits).
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0] as number;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += (LANCZOS[i] as number) / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

// The continued fraction of the incomplete beta function (modified Lentz).
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2)
    ? (front * betaFraction(a, b, x)) / a
    : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T <= t) for Student's t with `df` degrees of freedom (df may be fractional, as Welch's is). */
export function studentTCdf(t: number, df: number): number {
  if (!Number.isFinite(t)) return t > 0 ? 1 : 0;
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The t with P(T <= t) = p for Student's t with `df` degrees of freedom (0 < p < 1). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1) || !(df > 0)) throw new RangeError(`studentTQuantile: p ${p}, df ${df}`);
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  let low = 0;
  let high = 1;
  while (studentTCdf(high, df) < p) high *= 2;
  for (let i = 0; i < 200 && high - low > 1e-12 * high; i++) {
    const mid = (low + high) / 2;
    if (studentTCdf(mid, df) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/** How the gate decided whether a change is outside the noise. */
export type NoiseRule =
  /** Repeats on both sides: Welch's t-test, two-sided, 95%. */
  | 'welch'
  /** One run on one side: is it outside the other side's 95% prediction interval (its spread, t with n - 1 df)? */
  | 'prediction'
  /** One run on each side: no noise measured; a regression needs twice the threshold. */
  | 'single';

export type GateVerdict = 'regression' | 'improvement' | 'within threshold' | 'within noise' | 'missing';

export interface Judgement {
  better: Better;
  baseline: SampleStats | null;
  current: SampleStats | null;
  /** (current mean - baseline mean) / |baseline mean| in percent; ±Infinity from a baseline of 0. */
  changePercent: number | null;
  /** The same change with its sign made positive for worse (a rate down, a latency up). */
  worsePercent: number | null;
  rule: NoiseRule | null;
  /** Two-sided p of the difference (welch, prediction), null under 'single' or without both sides. */
  pValue: number | null;
  /** Whether the difference is outside the noise (p < 0.05; under 'single', beyond twice the threshold). */
  outsideNoise: boolean | null;
  verdict: GateVerdict;
}

/** The significance level of the gate's tests. */
export const GATE_ALPHA = 0.05;

/**
 * Judges a figure's current values against its baseline values. A regression is a change for the
 * worse beyond `maxRegressionPercent` that is also outside the noise: with two or more runs on each
 * side Welch's t-test (two-sided) gives p < 0.05; with a single run on one side that run lies outside
 * the 95% prediction interval of the other side's runs; with a single run on each side, where no noise
 * was measured, the change must be beyond twice the threshold. An improvement is the mirror image.
 */
export function judge(
  better: Better,
  baselineValues: readonly number[],
  currentValues: readonly number[],
  maxRegressionPercent: number,
): Judgement {
  const baseline = describeSample(baselineValues);
  const current = describeSample(currentValues);
  if (!baseline || !current)
    return {
      better,
      baseline,
      current,
      changePercent: null,
      worsePercent: null,
      rule: null,
      pValue: null,
      outsideNoise: null,
      verdict: 'missing',
    };
  const diff = current.mean - baseline.mean;
  const changePercent =
    baseline.mean === 0
      ? diff === 0
        ? 0
        : Math.sign(diff) * Infinity
      : (diff / Math.abs(baseline.mean)) * 100;
  const worsePercent = worseningPercent(better, changePercent);
  let rule: NoiseRule;
  let pValue: number | null = null;
  let outsideNoise: boolean;
  if (baseline.n >= 2 && current.n >= 2) {
    rule = 'welch';
    pValue = welchPValue(baselineValues, currentValues);
    outsideNoise = pValue < GATE_ALPHA;
  } else if (baseline.n >= 2 || current.n >= 2) {
    rule = 'prediction';
    const [many, single] = baseline.n >= 2 ? [baselineValues, current.mean] : [currentValues, baseline.mean];
    pValue = predictionPValue(many, single);
    outsideNoise = pValue < GATE_ALPHA;
  } else {
    rule = 'single';
    outsideNoise = Math.abs(changePercent) > 2 * maxRegressionPercent;
  }
  const beyond = Math.abs(worsePercent) > maxRegressionPercent;
  let verdict: GateVerdict;
  if (!beyond) verdict = 'within threshold';
  else if (!outsideNoise) verdict = 'within noise';
  else verdict = worsePercent > 0 ? 'regression' : 'improvement';
  return { better, baseline, current, changePercent, worsePercent, rule, pValue, outsideNoise, verdict };
}

/** Two-sided p of Welch's t-test that two samples (two or more values each) have the same mean. */
export function welchPValue(a: readonly number[], b: readonly number[]): number {
  const va = stdDev(a) ** 2 / a.length;
  const vb = stdDev(b) ** 2 / b.length;
  const diff = mean(b) - mean(a);
  const se2 = va + vb;
  if (se2 === 0) return diff === 0 ? 1 : 0;
  const t = diff / Math.sqrt(se2);
  const df = se2 ** 2 / (va ** 2 / (a.length - 1) + vb ** 2 / (b.length - 1));
  return 2 * (1 - studentTCdf(Math.abs(t), df));
}

/** Two-sided p that a single value comes from the population a sample (two or more values) was drawn from. */
export function predictionPValue(sample: readonly number[], single: number): number {
  const s = stdDev(sample);
  const diff = single - mean(sample);
  if (s === 0) return diff === 0 ? 1 : 0;
  const t = diff / (s * Math.sqrt(1 + 1 / sample.length));
  return 2 * (1 - studentTCdf(Math.abs(t), sample.length - 1));
}

/**
 * A threshold as `--max-regression` takes it: `10%` or `10` (percent), above 0 and at most 1000;
 * anything else throws naming the value and the form expected.
 */
export function parsePercent(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(text);
  const value = match ? Number(match[1]) : Number.NaN;
  if (!(value > 0 && value <= 1000))
    throw new Error(`${JSON.stringify(text)} is not a percentage above 0 and at most 1000 (e.g. 10%)`);
  return value;
}
