// One kafkajs producer. kafkajs does not batch by itself: each send() is one produce request,
// so batch.size becomes the records per send, and max in-flight the sends we keep open.
import type { Scenario } from '@kbench/schema';
import { CompressionTypes, type Kafka, type Message, Partitioners, type Producer } from 'kafkajs';
import type { IntervalAccumulator } from '../../interval.js';
import { type LoadControl, RateSchedule } from '../../load-control.js';
import { nowMicros, type PayloadSource } from '../../payload.js';

const ACKS = { 0: 0, 1: 1, all: -1 } as const;

export interface ProducerPlan {
  kafka: Kafka;
  topics: string[];
  config: Scenario['producers'];
  /** The timeout each produce request carries (request.timeout.ms). */
  requestTimeoutMs: number;
  /** Records per second for this producer, or null for as fast as acks come back (closed loop). */
  ratePerSec: number | null;
  /** Values carry no send time (a preloaded backlog): consumers measure no end-to-end latency for them. */
  unstamped: boolean;
  control: LoadControl;
  acc: IntervalAccumulator;
  payload: PayloadSource;
  onError: (err: unknown) => void;
  /** Resolves once what was written has left for the broker; an acks=0 send is done then. */
  written: () => Promise<void>;
}

export class LoadProducer {
  private readonly producer: Producer;
  private topicCursor = 0;
  private schedule: RateSchedule | null = null;
  constructor(private readonly plan: ProducerPlan) {
    this.producer = plan.kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
      idempotent: plan.config.idempotence,
      maxInFlightRequests: plan.config.maxInFlight,
    });
  }

  /** Replaces the stop rule before the run starts (the end time is only known at start). */
  setControl(control: LoadControl): void {
    this.plan.control = control;
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }

  private recordsPerSend(): number {
    const typical = this.plan.payload.meanSize;
    const byBatchSize = Math.max(1, Math.floor(this.plan.config.batchSize / Math.max(1, typical)));
    if (this.plan.ratePerSec === null) return byBatchSize;
    // At a fixed rate, send at most ~5 ms worth of records at a time so intended send times stay fine-grained.
    return Math.max(1, Math.min(byBatchSize, Math.round(this.plan.ratePerSec * 0.005)));
  }

  /** Sends until the load control says stop; resolves when every send has been answered. */
  async run(): Promise<void> {
    if (this.plan.ratePerSec !== null) this.schedule = new RateSchedule(nowMicros(), this.plan.ratePerSec);
    const lanes = Array.from({ length: this.plan.config.maxInFlight }, () => this.lane());
    await Promise.all(lanes);
  }

  private async lane(): Promise<void> {
    const perSend = this.recordsPerSend();
    const { control, acc, payload, config } = this.plan;
    const compression = config.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
    for (;;) {
      const count = control.claim(perSend);
      if (count === 0) return;
      let intended = nowMicros();
      if (this.schedule) {
        // Open loop: latency counts from when the send was due, not from when we got to it.
        intended = this.schedule.next(count);
        const waitMs = (intended - nowMicros()) / 1000;
        if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
        // Records due after the run's end are not sent.
        if (waitMs > 0 && control.over) return;
        // A send that went out late counts from when it was due (no coordinated omission), one
        // that went out early from when it went: a timer may fire a millisecond or two early
        // (Node counts from its loop's cached clock), and counted from the later due time 40%
        // of a run's latencies read 0 µs.
        intended = Math.min(intended, nowMicros());
      }
      const messages: Message[] = [];
      let bytes = 0;
      for (let i = 0; i < count; i++) {
        const value = payload.value(this.plan.unstamped ? Number.NaN : intended);
        bytes += value.length;
        messages.push({ key: payload.key(), value });
      }
      const topic = this.plan.topics[this.topicCursor++ % this.plan.topics.length] as string;
      try {
        await this.producer.send({
          topic,
          messages,
          acks: ACKS[config.acks],
          compression,
          timeout: this.plan.requestTimeoutMs,
        });
        // kafkajs answers an acks=0 send as soon as it is queued on the socket, before any I/O.
        if (config.acks === 0) await this.plan.written();
        acc.add(count, bytes, nowMicros() - intended);
      } catch (err) {
        acc.error(count, err instanceof Error ? err.message : String(err));
        this.plan.onError(err);
        if (control.stopped) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }
}
