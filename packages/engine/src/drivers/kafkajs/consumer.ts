import type { Consumer, Kafka } from 'kafkajs';
import type { IntervalAccumulator } from '../../interval.js';
import { nowMicros, sentAtMicros } from '../../payload.js';
import type { ConsumerOptions } from './properties.js';

export interface ConsumerPlan {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  fromBeginning: boolean;
  /** kafkajs options from the scenario's consumer properties. */
  options: ConsumerOptions;
  acc: IntervalAccumulator;
  onError: (err: unknown) => void;
}

/** One member of a consumer group, counting what it reads and how late it reads it. */
export class LoadConsumer {
  private readonly consumer: Consumer;
  private joined = false;
  private readonly joinWaiters: (() => void)[] = [];
  constructor(private readonly plan: ConsumerPlan) {
    this.consumer = plan.kafka.consumer({ groupId: plan.groupId, ...plan.options.consumer });
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => {
      this.joined = true;
      for (const wake of this.joinWaiters.splice(0)) wake();
    });
    this.consumer.on(this.consumer.events.CRASH, (event) => plan.onError(event.payload.error));
  }

  async start(): Promise<void> {
    const { acc } = this.plan;
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: this.plan.topics, fromBeginning: this.plan.fromBeginning });
    await this.consumer.run({
      ...this.plan.options.run,
      eachBatch: async ({ batch }) => {
        const now = nowMicros();
        for (const message of batch.messages) {
          // Values too short to carry a send time have no end-to-end latency, as with the native
          // driver (the record's own timestamp is when it was sent, in whole ms, not when it was
          // due: at a fixed rate it would hide coordinated omission).
          const stamp = sentAtMicros(message.value);
          acc.add(1, message.value?.length ?? 0, stamp === null ? null : Math.max(0, now - stamp));
        }
      },
    });
  }

  /** Resolves once this member has joined its group (or rejects after `timeoutMs`). */
  waitForJoin(timeoutMs: number): Promise<void> {
    if (this.joined) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`consumer in group ${this.plan.groupId} did not join within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.joinWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  disconnect(): Promise<void> {
    return this.consumer.disconnect();
  }
}
