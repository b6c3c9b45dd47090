// Durations and sizes as people write them in scenario files ("60s", "2GB").

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses "500ms", "60s", "5m", "1h" or a bare number of seconds into milliseconds. */
export function parseDurationMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
  if (!match) return undefined;
  const unit = DURATION_UNITS_MS[match[2] ?? 's'] ?? 1000;
  return Math.round(Number(match[1]) * unit);
}

/** Writes milliseconds back the way a person would ("1.5s", "2m", "250ms"). */
export function formatDurationMs(ms: number): string {
  // Seconds read best up to a couple of minutes ("60s", "90s"); whole minutes and hours beyond.
  if (ms % 3_600_000 === 0 && ms >= 7_200_000) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms >= 120_000) return `${ms / 60_000}m`;
  if (ms >= 1000 || ms === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

// Kafka's tools count KB, MB and GB in powers of 1024; we do too, so figures line up with theirs.
const SIZE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1024,
  kib: 1024,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  tb: 1024 ** 4,
  tib: 1024 ** 4,
};

/** Parses "100", 100, "1KB", "2.5 GB" into bytes (KB = 1024 B). */
export function parseSizeBytes(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(value);
  if (!match) return undefined;
  const unit = SIZE_UNITS[(match[2] || 'b').toLowerCase()];
  if (unit === undefined) return undefined;
  return Math.round(Number(match[1]) * unit);
}

export const MIB = 1024 * 1024;
