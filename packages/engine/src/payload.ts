// Message values and keys. A value of 8 bytes or more carries its send time (µs since the epoch,
// float64 LE) in its first 8 bytes, so a consumer can measure end-to-end latency.
import { randomBytes } from 'node:crypto';
import type { Scenario } from '@kbench/schema';

const POOL_BYTES = 1024 * 1024;
export const TIMESTAMP_BYTES = 8;

/** Wall-clock time in microseconds with sub-millisecond resolution. */
export function nowMicros(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

export class PayloadSource {
  private readonly pool: Buffer;
  private cursor = 0;
  private keyCounter = 0;
  constructor(private readonly producers: Scenario['producers']) {
    const max = typeof producers.messageSize === 'number' ? producers.messageSize : producers.messageSize.max;
    this.pool = randomBytes(POOL_BYTES + max);
  }

  nextSize(): number {
    const size = this.producers.messageSize;
    if (typeof size === 'number') return size;
    return size.min + Math.floor(Math.random() * (size.max - size.min + 1));
  }

  /** A fresh value buffer stamped with `sentAtMicros`. */
  value(sentAtMicros: number): Buffer {
    const size = this.nextSize();
    const value = Buffer.allocUnsafe(size);
    this.pool.copy(value, 0, this.cursor, this.cursor + size);
    this.cursor = (this.cursor + 4099) % POOL_BYTES;
    if (size >= TIMESTAMP_BYTES) value.writeDoubleLE(sentAtMicros, 0);
    return value;
  }

  key(): string | null {
    const keys = this.producers.keys;
    if (keys === 'none') return null;
    if (keys === 'random')
      return this.pool.toString('hex', this.cursor % POOL_BYTES, (this.cursor % POOL_BYTES) + 8);
    const n = Number(keys.slice('roundRobin:'.length));
    return `key-${this.keyCounter++ % n}`;
  }
}

/** The send time a value carries, in µs, or null when it is too short to carry one. */
export function sentAtMicros(value: Buffer | null): number | null {
  if (!value || value.length < TIMESTAMP_BYTES) return null;
  return value.readDoubleLE(0);
}
