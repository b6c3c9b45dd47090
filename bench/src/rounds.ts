// Repeated runs for the benchmarks: every target once per round, each round starting at a different
// one (so no target always runs first, on a machine still quiet, or last, on one warm from the others),
// and a target's figure taken from its median round.

/**
 * The share of a ProducerPerformance run's records left out as warm-up (`--warmup-records`): its
 * figures are the steady state after it, not the JVMs compiling.
 */
export const WARMUP_SHARE = 0.2;

/** `items` turned left by `by`: round r starts one further along than round r - 1. */
export function rotate<T>(items: T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/**
 * Runs `run(key)` for every key of `setups` once per round, `rounds` times, each round starting one
 * key further along; the results by key, in round order.
 */
export async function inRounds<K extends string, S, R>(
  setups: Record<K, S>,
  rounds: number,
  run: (setup: S) => Promise<R>,
): Promise<Record<K, R[]>> {
  const keys = Object.keys(setups) as K[];
  const results = Object.fromEntries(keys.map((k) => [k, [] as R[]])) as Record<K, R[]>;
  for (let round = 0; round < rounds; round++) {
    for (const key of rotate(keys, round)) results[key].push(await run(setups[key]));
  }
  return results;
}

/** The item whose `value` is the median of `items` (the lower middle one of an even count). */
export function medianBy<T>(items: T[], value: (item: T) => number): T {
  if (items.length === 0) throw new Error('the median of no runs');
  const sorted = [...items].sort((a, b) => value(a) - value(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
