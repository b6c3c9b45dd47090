// Message values and keys. A value of 8 bytes or more carries its send time (µs since the epoch,
// float64 LE) in its first 8 bytes, so a consumer can measure end-to-end latency.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import {
  fileErrorText,
  MAX_MESSAGE_BYTES,
  type MessageSize,
  meanMessageSize,
  messageSizeBounds,
  type Scenario,
  seededRandom,
} from '@kbench/schema';

const POOL_BYTES = 1024 * 1024;
export const TIMESTAMP_BYTES = 8;

/** Wall-clock time in microseconds with sub-millisecond resolution. */
export function nowMicros(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

/**
 * Draws message sizes: fixed, uniform over [min, max], normal or exponential (rounded and
 * clamped to [min ?? 1, max ?? the largest message]). Payload files are not drawn: see PayloadSource.
 */
export function sizeSampler(size: Exclude<MessageSize, { payloadFile: string }>, seed = 1): () => number {
  if (typeof size === 'number') return () => size;
  const random = seededRandom(seed);
  if (!('distribution' in size)) return () => size.min + Math.floor(random() * (size.max - size.min + 1));
  const lo = size.min ?? 1;
  const hi = size.max ?? MAX_MESSAGE_BYTES;
  const clamp = (x: number) => Math.min(hi, Math.max(lo, Math.round(x)));
  if (size.distribution === 'exponential') return () => clamp(-size.mean * Math.log(1 - random()));
  // Normal by Box-Muller, both draws of a pair used.
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const z = spare;
      spare = null;
      return clamp(size.mean + size.stddev * z);
    }
    const u = 1 - random();
    const v = random();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return clamp(size.mean + size.stddev * r * Math.cos(2 * Math.PI * v));
  };
}

/** Entries in a drawn size table: enough that cycling through it keeps the distribution's shape. */
export const SIZE_TABLE_ENTRIES = 64 * 1024;

/**
 * `entries` sizes drawn with `sizeSampler` (same seed, same sizes), for a driver that cycles
 * through a table instead of drawing per record (the native driver).
 */
export function sizeTable(
  size: Exclude<MessageSize, { payloadFile: string }>,
  seed = 1,
  entries = SIZE_TABLE_ENTRIES,
): Uint32Array {
  const sample = sizeSampler(size, seed);
  const table = new Uint32Array(entries);
  for (let i = 0; i < entries; i++) table[i] = sample();
  return table;
}

export const PAYLOAD_FILE_FIELD = 'producers.messageSize.payloadFile';

/** A payload file that cannot be used; the message names the field, `problem` says what is wrong. */
export class PayloadFileError extends Error {
  override name = 'PayloadFileError';
  constructor(readonly problem: string) {
    super(`${PAYLOAD_FILE_FIELD}: ${problem}`);
  }
}

const LIMIT = `the largest message (${MAX_MESSAGE_BYTES} bytes, 16 MiB)`;

function notRegular(file: string, stats: Stats): PayloadFileError | null {
  if (stats.isFile()) return null;
  const kind = stats.isDirectory()
    ? 'a directory'
    : stats.isCharacterDevice()
      ? 'a character device'
      : stats.isBlockDevice()
        ? 'a block device'
        : stats.isFIFO()
          ? 'a FIFO'
          : stats.isSocket()
            ? 'a socket'
            : 'not a regular file';
  return new PayloadFileError(
    `${file} is ${kind}; a payload file must be a regular file of at most ${LIMIT}`,
  );
}

/**
 * The content of a payload file; a PayloadFileError naming the field otherwise. Never reads more
 * than the largest message and one byte: a device (/dev/zero), a FIFO or a huge file is refused
 * before reading, and a file that grows between the check and the read is refused once past the limit.
 */
export function readPayloadFile(file: string): Buffer {
  let fd: number | undefined;
  try {
    // stat first, so a device or FIFO is never even opened; fstat again on what was opened.
    const named = notRegular(file, statSync(file));
    if (named) throw named;
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    const stats = fstatSync(fd);
    const opened = notRegular(file, stats);
    if (opened) throw opened;
    if (stats.size > MAX_MESSAGE_BYTES)
      throw new PayloadFileError(`${file} is ${stats.size} bytes, above ${LIMIT}`);
    let buffer = Buffer.allocUnsafe(stats.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > MAX_MESSAGE_BYTES)
          throw new PayloadFileError(`${file} grew past ${LIMIT} while being read`);
        const grown = Buffer.allocUnsafe(Math.min(MAX_MESSAGE_BYTES + 1, buffer.length * 2));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) return buffer.subarray(0, length);
      length += read;
    }
  } catch (err) {
    if (err instanceof PayloadFileError) throw err;
    throw new PayloadFileError(`cannot read ${file}: ${fileErrorText(err)}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export class PayloadSource {
  private readonly pool: Buffer;
  private readonly payload: Buffer | null;
  private readonly nextSizeFn: () => number;
  private cursor = 0;
  private keyCounter = 0;
  /** The mean value size (the file's size for a payload file). */
  readonly meanSize: number;
  constructor(
    private readonly producers: Scenario['producers'],
    seed = 1,
  ) {
    const size = producers.messageSize;
    if (typeof size === 'object' && 'payloadFile' in size) {
      const payload = readPayloadFile(size.payloadFile);
      this.payload = payload;
      this.nextSizeFn = () => payload.length;
      this.meanSize = payload.length;
      this.pool = randomBytes(POOL_BYTES);
    } else {
      this.payload = null;
      this.nextSizeFn = sizeSampler(size, seed);
      this.meanSize = meanMessageSize(size) ?? 1;
      this.pool = randomBytes(POOL_BYTES + (messageSizeBounds(size)?.max ?? 0));
    }
  }

  nextSize(): number {
    return this.nextSizeFn();
  }

  /** A fresh value buffer stamped with `sentAtMicros` (a payload file's content, stamped the same way). */
  value(sentAtMicros: number): Buffer {
    let value: Buffer;
    if (this.payload) value = Buffer.from(this.payload);
    else {
      const size = this.nextSize();
      value = Buffer.allocUnsafe(size);
      this.pool.copy(value, 0, this.cursor, this.cursor + size);
      this.cursor = (this.cursor + 4099) % POOL_BYTES;
    }
    if (value.length >= TIMESTAMP_BYTES) value.writeDoubleLE(sentAtMicros, 0);
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
  const stamp = value.readDoubleLE(0);
  // NaN: a value written without a send time (a preloaded backlog).
  return Number.isFinite(stamp) ? stamp : null;
}

/** A payload file's size in bytes (1 when it cannot be read: the scenario check reports that). */
export function payloadFileBytes(size: MessageSize): number {
  if (typeof size !== 'object' || !('payloadFile' in size)) return 1;
  try {
    return Math.max(1, readPayloadFile(size.payloadFile).length);
  } catch {
    return 1;
  }
}
