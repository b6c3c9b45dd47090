// Change points of a series by e-divisive means (Matteson & James 2014, "A nonparametric approach
// for multiple change point analysis of multivariate data"), univariate with alpha = 1, as MongoDB
// and Hunter/Otava use it on benchmark histories: bisect at the split that maximises the energy
// divergence between the two sides, keep the split only when a permutation test says so, repeat
// within the segments. The permutations use a seeded generator, so one series always gives one answer.

export interface ChangePointOptions {
  /** A split is kept when its permutation p-value is at most this (default 0.05). */
  significance?: number;
  /** Permutations per test (default 199, so the smallest p-value is 1/200). */
  permutations?: number;
  /** Fewest points on each side of a change point (default 2, the least the statistic is defined for). */
  minSegment?: number;
  /** Seed of the permutations' generator (default 1). */
  seed?: number;
}

export interface ChangePoint {
  /** Index of the first point after the change. */
  index: number;
  /** Mean of the segment before and after it (between the neighbouring change points). */
  before: number;
  after: number;
  /** (after - before) / |before| in percent, or null when before is 0. */
  changePercent: number | null;
  /** The permutation test's p-value. */
  pValue: number;
  /** The divergence statistic (Q-hat) of the split. */
  q: number;
}

/** Longest series searched (the statistic is quadratic in the length): the newest points are kept. */
export const MAX_CHANGE_POINT_SERIES = 500;

/** The change points of `values`, in index order; none for fewer than 2 * minSegment points. */
export function changePoints(values: readonly number[], options: ChangePointOptions = {}): ChangePoint[] {
  const significance = options.significance ?? 0.05;
  const permutations = Math.max(1, Math.floor(options.permutations ?? 199));
  const minSegment = Math.max(2, Math.floor(options.minSegment ?? 2));
  const random = seededRandom(options.seed ?? 1);
  const offset = Math.max(0, values.length - MAX_CHANGE_POINT_SERIES);
  const series = values.slice(offset);
  if (series.some((v) => !Number.isFinite(v)))
    throw new RangeError('changePoints: every value must be a finite number');

  // Indices where a segment starts (the series' end closes the last one); grows by bisection.
  const found: { index: number; pValue: number; q: number }[] = [];
  for (;;) {
    const bounds = boundsOf(found, series.length);
    const best = bestSplit(series, bounds, minSegment);
    if (best === null) break;
    let atLeast = 0;
    const shuffled = series.slice();
    for (let r = 0; r < permutations; r++) {
      // Each segment shuffled within itself: the null hypothesis is "no further change".
      for (let s = 0; s + 1 < bounds.length; s++)
        shuffle(shuffled, bounds[s] ?? 0, bounds[s + 1] ?? 0, random);
      const permuted = bestSplit(shuffled, bounds, minSegment);
      // A permutation that reorders the same split ties in exact arithmetic; summed in another
      // order it may come out a rounding error below, so ties are judged with a tolerance.
      if (permuted !== null && permuted.q >= best.q - 1e-9 * Math.max(1, Math.abs(best.q))) atLeast++;
    }
    const pValue = (atLeast + 1) / (permutations + 1);
    if (pValue > significance) break;
    found.push({ index: best.index, pValue, q: best.q });
  }

  const indices = found.map((f) => f.index).sort((a, b) => a - b);
  const edges = [0, ...indices, series.length];
  return indices.map((index, i) => {
    const f = found.find((c) => c.index === index) as { pValue: number; q: number };
    const before = mean(series, edges[i] ?? 0, index);
    const after = mean(series, index, edges[i + 2] ?? series.length);
    return {
      index: index + offset,
      before,
      after,
      changePercent: before === 0 ? null : ((after - before) / Math.abs(before)) * 100,
      pValue: f.pValue,
      q: f.q,
    };
  });
}

function boundsOf(found: readonly { index: number }[], length: number): number[] {
  return [0, ...found.map((f) => f.index).sort((a, b) => a - b), length];
}

/** The split with the largest Q-hat over all segments, or null where no segment can be split. */
function bestSplit(
  series: readonly number[],
  bounds: readonly number[],
  minSegment: number,
): { index: number; q: number } | null {
  let best: { index: number; q: number } | null = null;
  for (let s = 0; s + 1 < bounds.length; s++) {
    const split = bestSplitOf(series, bounds[s] ?? 0, bounds[s + 1] ?? 0, minSegment);
    if (split !== null && (best === null || split.q > best.q)) best = split;
  }
  return best;
}

/**
 * The split of series[start, end) maximising
 * Q(t) = (a b / n) (2/(a b) sum|x - y| - 1/C(a,2) sum|x - x'| - 1/C(b,2) sum|y - y'|),
 * with a = t - start points before it and b = end - t after. The three sums are carried from one t
 * to the next by moving a point from the right side to the left, so a segment costs O(n^2).
 */
function bestSplitOf(
  series: readonly number[],
  start: number,
  end: number,
  minSegment: number,
): { index: number; q: number } | null {
  const n = end - start;
  if (n < 2 * minSegment) return null;
  const at = (i: number): number => series[i] ?? 0;
  let between = 0;
  let left = 0;
  let right = 0;
  for (let i = start; i < end; i++) for (let j = i + 1; j < end; j++) right += Math.abs(at(i) - at(j));
  let best: { index: number; q: number } | null = null;
  for (let t = start + 1; t < end - 1; t++) {
    // Point t-1 moves from the right side to the left.
    const moved = at(t - 1);
    let toLeft = 0;
    for (let i = start; i < t - 1; i++) toLeft += Math.abs(at(i) - moved);
    let toRight = 0;
    for (let j = t; j < end; j++) toRight += Math.abs(moved - at(j));
    between += toRight - toLeft;
    left += toLeft;
    right -= toRight;
    const a = t - start;
    const b = end - t;
    if (a < minSegment || b < minSegment) continue;
    const q = ((a * b) / n) * ((2 * between) / (a * b) - left / pairs(a) - right / pairs(b));
    if (best === null || q > best.q) best = { index: t, q };
  }
  return best;
}

function pairs(k: number): number {
  return (k * (k - 1)) / 2;
}

function mean(series: readonly number[], from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += series[i] ?? 0;
  return to > from ? sum / (to - from) : 0;
}

/** Fisher-Yates over values[from, to). */
function shuffle(values: number[], from: number, to: number, random: () => number): void {
  for (let i = to - 1; i > from; i--) {
    const j = from + Math.floor(random() * (i - from + 1));
    const swap = values[i] ?? 0;
    values[i] = values[j] ?? 0;
    values[j] = swap;
  }
}

/** mulberry32: a small seeded generator of numbers in [0, 1); the same seed, the same sequence. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
