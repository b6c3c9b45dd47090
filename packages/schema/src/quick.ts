// --quick: the same scenario, shortened for CI (`kbench run|reproduce --quick`, and quick reproductions
// started from the web app).

import { setKnob } from './parse.js';
import type { Scenario } from './scenario.js';
import { formatDurationMs, parseDurationMs, parseSizeBytes } from './units.js';

/** What --quick caps a scenario to. */
export const QUICK = { durationMs: 3_000, warmupMs: 1_000, records: 20_000 };
/** Sizes --quick also caps, so setup (a preloaded backlog, thousands of idle topics) stays short too. */
const QUICK_CAPS: Record<string, number> = { 'consumers.backlog': 64 * 1024 * 1024, 'topics.idle': 1000 };

/** What --quick does, in words, for reports and tooltips. */
export function describeQuick(): string {
  const n = (v: number) => v.toLocaleString('en-US');
  return `duration at most ${formatDurationMs(QUICK.durationMs)}, warm-up at most ${formatDurationMs(QUICK.warmupMs)}, records at most ${n(QUICK.records)}, backlog at most ${n((QUICK_CAPS['consumers.backlog'] ?? 0) / 1024 ** 2)} MB, idle topics at most ${n(QUICK_CAPS['topics.idle'] ?? 0)}, fault times scaled to the shorter run`;
}

/** --quick: the same scenario, short enough for CI. */
export function quickVersion(raw: Record<string, unknown>, parsed: Scenario): Record<string, unknown> {
  let out = raw;
  if (parsed.consumers.backlog > (QUICK_CAPS['consumers.backlog'] ?? 0))
    out = setKnob(out, 'consumers.backlog', QUICK_CAPS['consumers.backlog']);
  if (parsed.topics.idle > (QUICK_CAPS['topics.idle'] ?? 0))
    out = setKnob(out, 'topics.idle', QUICK_CAPS['topics.idle']);
  const cap = parsed.sweep ? QUICK_CAPS[parsed.sweep.knob] : undefined;
  if (parsed.sweep && cap !== undefined) {
    // Scaled, not clipped, so a sweep of sizes keeps its order and its distinct values.
    const sizes = parsed.sweep.values.map((v) => parseSizeBytes(v) ?? 0);
    const largest = Math.max(...sizes);
    if (largest > cap) {
      out = setKnob(
        out,
        'sweep.values',
        sizes.map((v) => Math.max(v === 0 ? 0 : 1, Math.round((v * cap) / largest))),
      );
    }
  }
  const duration = parsed.duration === undefined ? undefined : parseDurationMs(parsed.duration);
  const warmup = parseDurationMs(parsed.warmup) ?? 0;
  if (duration !== undefined && duration > QUICK.durationMs)
    out = setKnob(out, 'duration', formatDurationMs(QUICK.durationMs));
  if (warmup > QUICK.warmupMs) out = setKnob(out, 'warmup', formatDurationMs(QUICK.warmupMs));
  if (duration !== undefined && parsed.faults.length > 0) {
    const span = warmup + duration;
    const quickSpan = Math.min(warmup, QUICK.warmupMs) + Math.min(duration, QUICK.durationMs);
    if (quickSpan < span)
      out = setKnob(out, 'faults', quickFaults(parsed.faults, quickSpan / span, quickSpan));
  }
  if (parsed.records !== undefined && parsed.records > QUICK.records)
    out = setKnob(out, 'records', QUICK.records);
  return out;
}

/**
 * A fault timeline for the shortened run: each fault happens at the same fraction of the run (warm-up
 * included, as fault times count from the start of load). A pause keeps its length, cut short only
 * where it would outlast the run, since its effect (a leader moving after the session timeout)
 * depends on the length itself.
 */
export function quickFaults(
  faults: Scenario['faults'],
  scale: number,
  quickSpan: number,
): Record<string, unknown>[] {
  return faults.map((f) => {
    const at = Math.round(((parseDurationMs(f.at) ?? 0) * scale) / 100) * 100;
    const out: Record<string, unknown> = { at: formatDurationMs(at), action: f.action };
    for (const key of ['node', 'run', 'timeout'] as const) if (f[key] !== undefined) out[key] = f[key];
    if (f.for !== undefined) {
      const length = Math.min(parseDurationMs(f.for) ?? 0, Math.max(1, quickSpan - at));
      out.for = formatDurationMs(length);
    }
    return out;
  });
}
