// What each fault cost, from the run's samples and their latency histograms: time without
// acknowledgements, time until throughput was back, the worst latency and the errors meanwhile
// (docs/scenarios.md#recovery-figures). A pure function of the samples, so it can be tested on built series.
import type { FaultEvent, FaultRecovery, Sample } from '@kbench/schema';
import { type IntervalHistograms, windowLatency } from './stored-latency.js';

/** Throughput is back when it reaches this share of its level before the fault... */
export const RECOVERED_SHARE = 0.9;
/** ...and keeps it, on average, for this long (ms). */
export const RECOVERED_FOR_MS = 1000;
/** The level before a fault is the mean over this long before it (ms)... */
export const LEVEL_WINDOW_MS = 5000;
/** ...and there is none with less than this much load before it (ms). */
export const LEVEL_MIN_MS = 1000;

/** The figures the samples give; the leader election is measured while the fault happens. */
export type SampledRecovery = Omit<FaultRecovery, 'leaderElectionMs' | 'leaderNote'>;

export interface RecoveryInput {
  samples: Sample[];
  /** The samples' latency histograms (any that are missing count as no latency). */
  intervals: IntervalHistograms[];
  /** Each sample's retried records, by the samples' index (null or absent: the driver does not count them). */
  retries?: (number | null)[];
  /** An open-loop run's target rate in records/s: the level to recover to; null for closed loop. */
  targetRate: number | null;
}

/**
 * Each sample's start in seconds since load began: its end less its length, but never before the
 * end of the sample before it. Stored times and lengths are rounded separately (t to 0.1 s or to the
 * ms, the length to the ms), so two samples can seem to overlap by a ms; counted twice, that ms made
 * a fault's time without acks (1.001 s) longer than its time to recovery (1 s).
 */
function sampleStarts(samples: Sample[]): Map<Sample, number> {
  const starts = new Map<Sample, number>();
  samples.forEach((s, i) => {
    const before = samples[i - 1];
    starts.set(s, before ? Math.max(s.t - s.intervalMs / 1000, before.t) : s.t - s.intervalMs / 1000);
  });
  return starts;
}
const round3 = (v: number) => Math.round(v * 1000) / 1000;

/**
 * A fault that acted: a node fault that did not fail, or any command fault (its command ran, whatever
 * its exit code says).
 */
const acted = (f: FaultEvent) => f.error === null || f.action === 'command';

/**
 * The recovery of each fault that acted, in the order given (time order); a node fault that failed
 * gets null and does not end another fault's window.
 */
export function faultRecoveries(faults: FaultEvent[], input: RecoveryInput): (SampledRecovery | null)[] {
  const { samples } = input;
  const starts = sampleStarts(samples);
  // Every sample asked about is one of `samples`.
  const startOf = (s: Sample) => starts.get(s) as number;
  const producing = samples.some((s) => s.producedRecords > 0);
  const loadEnd = samples.at(-1)?.t ?? 0;
  const done: { t: number; recovery: SampledRecovery }[] = [];
  return faults.map((fault) => {
    if (!acted(fault)) return null;
    const t = fault.t;
    const next = faults.find((f) => acted(f) && f.t > t);
    const limit = next ? Math.min(next.t, loadEnd) : loadEnd;
    // Samples whose interval reaches past the fault's start, up to the window's limit.
    const after = samples.filter((s) => s.t > t && startOf(s) < limit);

    // Time without acknowledgements: the longest run of empty samples, the first clipped to the start.
    let noAck: number | null = null;
    if (producing) {
      let longest = 0;
      let run = 0;
      for (const s of after) {
        if (s.producedRecords === 0) {
          run += Math.min(s.t, limit) - Math.max(startOf(s), t);
          longest = Math.max(longest, run);
        } else run = 0;
      }
      noAck = round3(longest);
    }

    // The level before the fault: the target rate, or the mean acked rate over the seconds before it
    // (since the previous fault's window ended); a fault inside another's window inherits its level.
    const previous = done.at(-1);
    let level: number | null = input.targetRate;
    let note: string | null = null;
    if (level === null) {
      if (previous && previous.recovery.windowEndT >= t) {
        level = previous.recovery.levelPerSec;
        if (level === null) note = `no level before it: it came during the fault at ${previous.t} s`;
      } else {
        const from = Math.max(t - LEVEL_WINDOW_MS / 1000, previous?.recovery.windowEndT ?? 0);
        const before = samples.filter((s) => s.t <= t && s.t > from);
        const covered = before.reduce((sum, s) => sum + s.intervalMs, 0);
        const records = before.reduce((sum, s) => sum + s.producedRecords, 0);
        if (covered < LEVEL_MIN_MS)
          note = `no level before it: ${round3(covered / 1000)} s of load before the fault (${LEVEL_MIN_MS / 1000} s needed)`;
        else if (records === 0)
          note = 'no level before it: no record was acknowledged in the seconds before it';
        else level = (records * 1000) / covered;
      }
    }

    // Recovery: after the first sample below 90% of the level, the first sample back at 90% that
    // starts a span of at least 1 s whose mean is too; the time is that sample's start. None below: 0.
    let recoverySec: number | null = null;
    let recoveredAt: number | null = null;
    if (level !== null) {
      const floor = RECOVERED_SHARE * level;
      const rate = (s: Sample) => (s.intervalMs > 0 ? (s.producedRecords * 1000) / s.intervalMs : 0);
      const inWindow = after.filter((s) => s.t <= limit);
      const dip = inWindow.findIndex((s) => rate(s) < floor);
      if (dip < 0) {
        recoverySec = 0;
        recoveredAt = t;
      } else {
        for (let j = dip + 1; j < inWindow.length && recoveredAt === null; j += 1) {
          if (rate(inWindow[j]!) < floor) continue;
          let records = 0;
          let ms = 0;
          for (let k = j; k < inWindow.length && ms < RECOVERED_FOR_MS; k += 1) {
            records += inWindow[k]!.producedRecords;
            ms += inWindow[k]!.intervalMs;
          }
          if (ms >= RECOVERED_FOR_MS && (records * 1000) / ms >= floor) {
            recoverySec = round3(Math.max(0, startOf(inWindow[j]!) - t));
            // The window takes in that sample: the records that waited out the fault are acked in it.
            recoveredAt = inWindow[j]!.t;
          }
        }
        if (recoveredAt === null) {
          const perSec = Math.round(level);
          note = next
            ? `not back to 90% of ${perSec} rec/s before the next fault (${next.t} s)`
            : `not back to 90% of ${perSec} rec/s for ${RECOVERED_FOR_MS / 1000} s before load ended`;
        }
      }
    }

    // The window: through the first sample back (at least the first sample after the fault), else to
    // the next fault or the end.
    const first = after[0];
    const windowEndT = round3(
      recoveredAt === null ? limit : Math.min(limit, Math.max(recoveredAt, first?.t ?? recoveredAt)),
    );
    const latency = windowLatency([input.intervals], { from: t, to: windowEndT, warmup: true });
    let errors = 0;
    let retries: number | null = null;
    samples.forEach((s, i) => {
      if (!(s.t > t && s.t <= windowEndT)) return;
      errors += s.errors;
      const retried = input.retries?.[i];
      if (retried !== null && retried !== undefined) retries = (retries ?? 0) + retried;
    });
    const recovery: SampledRecovery = {
      windowEndT,
      noAckSec: noAck,
      levelPerSec: level === null ? null : Math.round(level),
      recoverySec,
      recoveryNote: recoverySec === null ? note : null,
      publishP99Ms: latency.publishLatencyMs?.p99 ?? null,
      publishMaxMs: latency.publishLatencyMs?.max ?? null,
      e2eP99Ms: latency.endToEndLatencyMs?.p99 ?? null,
      e2eMaxMs: latency.endToEndLatencyMs?.max ?? null,
      errors,
      retries,
    };
    done.push({ t, recovery });
    return recovery;
  });
}
