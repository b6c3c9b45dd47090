// Counts what producers and consumers did since the last sample, and keeps the measured-phase
// histograms the summary is computed from. Warm-up intervals are sampled but never summarised.
import type { RunSummary, Sample } from '@kbench/schema';
import { type HistogramBuckets, LatencyHistogram } from './histogram.js';
import type { HostUse } from './host.js';
import { type ClientInterval, type ErrorCount, tallyError } from './interval.js';

const MIB = 1024 * 1024;

export class Meter {
  private interval = {
    producedRecords: 0,
    producedBytes: 0,
    consumedRecords: 0,
    consumedBytes: 0,
    errors: 0,
  };
  private intervalBusy = { producer: null as number | null, consumer: null as number | null, cpuMicros: 0 };
  private readonly busyTotals = {
    producer: [0, 0] as [number, number],
    consumer: [0, 0] as [number, number],
    cpuMicros: 0,
  };
  private intervalErrorMessages = { producer: [] as ErrorCount[], consumer: [] as ErrorCount[] };
  private readonly measuredErrorMessages = { producer: [] as ErrorCount[], consumer: [] as ErrorCount[] };
  private intervalWireBytes: number | null = null;
  private intervalRetries: number | null = null;
  /** Records retried in the interval last cut, or null when the driver does not count them. */
  lastRetries: number | null = null;
  /** Produced bytes on the wire in the measured phase, or null when the driver does not count them. */
  private measuredWireBytes: number | null = null;
  /** Whether the broker shares this process (bundled, in-process), for the client CPU figure. */
  brokerInProcess = false;
  /**
   * The machine whose CPU and disk the run reads (its cores, and the disk under the broker's data,
   * null for none); null where /proc cannot be read.
   */
  machine: { cores: number; disk: string | null } | null = null;
  private intervalMachine: HostUse | null = null;
  /**
   * Over the measured phase: busy share times ms, the ms, disk bytes (null once any interval had
   * none), and the share busy outside kbench's processes times ms, over the ms that had it.
   */
  private readonly measuredMachine = {
    busyMs: 0,
    ms: 0,
    diskBytes: 0 as number | null,
    othersMs: 0,
    othersOf: 0,
  };
  private intervalPublish = new LatencyHistogram();
  private intervalE2e = new LatencyHistogram();
  private readonly measuredPublish = new LatencyHistogram();
  private readonly measuredE2e = new LatencyHistogram();
  private measured = {
    ms: 0,
    producedRecords: 0,
    producedBytes: 0,
    consumedRecords: 0,
    consumedBytes: 0,
    errors: 0,
  };
  /** The latency histograms of the interval last cut (null for a side that recorded nothing). */
  lastHistograms: { publish: HistogramBuckets | null; e2e: HistogramBuckets | null } = {
    publish: null,
    e2e: null,
  };
  /** Totals since load began, warm-up included. */
  producedTotal = 0;
  consumedTotal = 0;
  /** Consumer groups that each read every record (for the backlog). */
  constructor(private readonly consumerGroups: number) {}

  /** Adds what producers reported for the current interval. */
  addProduced(interval: ClientInterval): void {
    this.interval.producedRecords += interval.records;
    this.interval.producedBytes += interval.valueBytes;
    this.interval.errors += interval.errors;
    this.tally('producer', interval);
    this.producedTotal += interval.records;
    if (interval.wireBytes !== undefined)
      this.intervalWireBytes = (this.intervalWireBytes ?? 0) + interval.wireBytes;
    if (interval.retries !== undefined) this.intervalRetries = (this.intervalRetries ?? 0) + interval.retries;
    this.intervalPublish.addBuckets(interval.latency);
    if (interval.busy !== null)
      this.intervalBusy.producer = Math.max(this.intervalBusy.producer ?? 0, interval.busy);
  }

  /** Adds what consumers reported for the current interval. */
  addConsumed(interval: ClientInterval): void {
    this.interval.consumedRecords += interval.records;
    this.interval.consumedBytes += interval.valueBytes;
    this.interval.errors += interval.errors;
    this.tally('consumer', interval);
    this.consumedTotal += interval.records;
    this.intervalE2e.addBuckets(interval.latency);
    if (interval.busy !== null)
      this.intervalBusy.consumer = Math.max(this.intervalBusy.consumer ?? 0, interval.busy);
  }

  private tally(role: 'producer' | 'consumer', interval: ClientInterval): void {
    for (const e of interval.errorMessages ?? [])
      tallyError(this.intervalErrorMessages[role], e.message, e.count);
  }

  /** Records written before the measured phase (a preloaded backlog): they count toward the backlog only. */
  preloaded(records: number): void {
    this.producedTotal += records;
  }

  /** CPU time (user + system, µs) the whole process used in the current interval. */
  addCpu(micros: number): void {
    this.intervalBusy.cpuMicros += micros;
  }

  /** What the whole machine did in the current interval. */
  addMachine(use: HostUse): void {
    this.intervalMachine = use;
  }

  backlog(): number {
    if (this.consumerGroups === 0) return 0;
    return Math.max(0, this.producedTotal - this.consumedTotal / this.consumerGroups);
  }

  /** Closes the current interval into a sample. */
  cut(t: number, intervalMs: number, warmup: boolean): Sample {
    const pub = this.intervalPublish;
    const e2e = this.intervalE2e;
    const ms = (us: number) => Math.round(us) / 1000;
    const sample: Sample = {
      t,
      intervalMs: Math.round(intervalMs),
      warmup,
      ...this.interval,
      backlog: Math.round(this.backlog()),
      publishP50Ms: pub.count ? ms(pub.percentile(50)) : null,
      publishP99Ms: pub.count ? ms(pub.percentile(99)) : null,
      publishMaxMs: pub.count ? ms(pub.max()) : null,
      e2eP50Ms: e2e.count ? ms(e2e.percentile(50)) : null,
      e2eP99Ms: e2e.count ? ms(e2e.percentile(99)) : null,
      e2eMaxMs: e2e.count ? ms(e2e.max()) : null,
    };
    if (this.intervalMachine) {
      sample.machineCpuBusy = Number(this.intervalMachine.cpuBusy.toFixed(3));
      const others = this.intervalMachine.othersBusy;
      sample.machineOthersBusy = others === null ? null : Number(others.toFixed(3));
      sample.diskWrittenBytes = this.intervalMachine.diskBytes;
    }
    this.lastHistograms = {
      publish: pub.count ? pub.toBuckets() : null,
      e2e: e2e.count ? e2e.toBuckets() : null,
    };
    if (!warmup) {
      this.measuredPublish.add(pub);
      this.measuredE2e.add(e2e);
      this.measured.ms += intervalMs;
      this.measured.producedRecords += this.interval.producedRecords;
      this.measured.producedBytes += this.interval.producedBytes;
      this.measured.consumedRecords += this.interval.consumedRecords;
      this.measured.consumedBytes += this.interval.consumedBytes;
      this.measured.errors += this.interval.errors;
      for (const role of ['producer', 'consumer'] as const)
        for (const e of this.intervalErrorMessages[role])
          tallyError(this.measuredErrorMessages[role], e.message, e.count);
      for (const role of ['producer', 'consumer'] as const) {
        const busy = this.intervalBusy[role];
        if (busy !== null) {
          this.busyTotals[role][0] += busy * intervalMs;
          this.busyTotals[role][1] += intervalMs;
        }
      }
      this.busyTotals.cpuMicros += this.intervalBusy.cpuMicros;
      const machine = this.intervalMachine;
      if (machine) {
        this.measuredMachine.busyMs += machine.cpuBusy * intervalMs;
        this.measuredMachine.ms += intervalMs;
        this.measuredMachine.diskBytes =
          this.measuredMachine.diskBytes === null || machine.diskBytes === null
            ? null
            : this.measuredMachine.diskBytes + machine.diskBytes;
        if (machine.othersBusy !== null) {
          this.measuredMachine.othersMs += machine.othersBusy * intervalMs;
          this.measuredMachine.othersOf += intervalMs;
        }
      }
      if (this.intervalWireBytes !== null)
        this.measuredWireBytes = (this.measuredWireBytes ?? 0) + this.intervalWireBytes;
    }
    this.intervalErrorMessages = { producer: [], consumer: [] };
    this.intervalWireBytes = null;
    this.lastRetries = this.intervalRetries;
    this.intervalRetries = null;
    this.intervalBusy = { producer: null, consumer: null, cpuMicros: 0 };
    this.intervalMachine = null;
    this.interval = { producedRecords: 0, producedBytes: 0, consumedRecords: 0, consumedBytes: 0, errors: 0 };
    this.intervalPublish = new LatencyHistogram();
    this.intervalE2e = new LatencyHistogram();
    return sample;
  }

  private meanBusy(role: 'producer' | 'consumer'): number | null {
    const [weighted, ms] = this.busyTotals[role];
    return ms > 0 ? Number((weighted / ms).toFixed(3)) : null;
  }

  summary(): RunSummary {
    const m = this.measured;
    const seconds = m.ms / 1000;
    const per = (n: number) => (seconds > 0 ? n / seconds : 0);
    const round = (n: number, digits: number) => Number(n.toFixed(digits));
    const clientErrors = (['producer', 'consumer'] as const).flatMap((role) =>
      this.measuredErrorMessages[role].map((e) => ({ role, ...e })),
    );
    return {
      measuredSeconds: round(seconds, 3),
      produced: {
        records: m.producedRecords,
        recordsPerSec: round(per(m.producedRecords), 1),
        mbPerSec: round(per(m.producedBytes) / MIB, 3),
        wireMbPerSec: this.measuredWireBytes === null ? null : round(per(this.measuredWireBytes) / MIB, 3),
        errors: m.errors,
      },
      consumed: {
        records: m.consumedRecords,
        recordsPerSec: round(per(m.consumedRecords), 1),
        mbPerSec: round(per(m.consumedBytes) / MIB, 3),
      },
      publishLatencyMs: this.measuredPublish.count ? this.measuredPublish.summaryMs() : null,
      endToEndLatencyMs: this.measuredE2e.count ? this.measuredE2e.summaryMs() : null,
      client: {
        cpuCores: round(seconds > 0 ? this.busyTotals.cpuMicros / 1e6 / seconds : 0, 2),
        includesBroker: this.brokerInProcess,
        producerBusy: this.meanBusy('producer'),
        consumerBusy: this.meanBusy('consumer'),
      },
      ...(this.machine && this.measuredMachine.ms > 0
        ? {
            machine: {
              cpuBusy: round(this.measuredMachine.busyMs / this.measuredMachine.ms, 3),
              cores: this.machine.cores,
              disk: this.machine.disk,
              diskWrittenBytes: this.machine.disk === null ? null : this.measuredMachine.diskBytes,
              othersCores:
                this.measuredMachine.othersOf > 0
                  ? round(
                      (this.measuredMachine.othersMs / this.measuredMachine.othersOf) * this.machine.cores,
                      2,
                    )
                  : null,
            },
          }
        : {}),
      ...(clientErrors.length > 0 ? { clientErrors } : {}),
    };
  }
}
