import type { Sample } from '@kbench/schema';

/** `count` one-second samples, the first `warmup` of them warm-up, with consumers and latencies. */
export function samples(count: number, warmup = 0, overrides: Partial<Sample> = {}): Sample[] {
  return Array.from({ length: count }, (_, i) => ({
    t: i + 1,
    intervalMs: 1000,
    warmup: i < warmup,
    producedRecords: 50_000 + i,
    producedBytes: 5 * 1024 * 1024,
    consumedRecords: 49_000,
    consumedBytes: 4 * 1024 * 1024,
    errors: 0,
    backlog: 1000 * i,
    publishP50Ms: 1.5,
    publishP99Ms: 8,
    publishMaxMs: 30,
    e2eP50Ms: 3,
    e2eP99Ms: 12,
    e2eMaxMs: 40,
    ...overrides,
  }));
}
