// Kafka request frames written byte by byte, for requests no client library would send,
// and the few response readers the hostile-client tests need.
import { Socket } from 'node:net';

/** The largest count an i32 array length can claim. */
export const HUGE_ARRAY_COUNT = 0x7fffffff;
/** The varint of a compact array (it holds count + 1) claiming 2^32-2 elements: ff ff ff ff 0f. */
export const HUGE_COMPACT_COUNT = 0xffffffff;

/** Appends big-endian Kafka primitives; `bytes()` is the result. */
export class Body {
  private readonly parts: Buffer[] = [];

  int8(value: number): this {
    return this.push(1, (b) => b.writeInt8(value));
  }

  int16(value: number): this {
    return this.push(2, (b) => b.writeInt16BE(value));
  }

  int32(value: number): this {
    return this.push(4, (b) => b.writeInt32BE(value));
  }

  /** An i32 written from its unsigned value (an array count of 0x7fffffff, say). */
  uint32(value: number): this {
    return this.push(4, (b) => b.writeUInt32BE(value));
  }

  bool(value: boolean): this {
    return this.int8(value ? 1 : 0);
  }

  /** STRING / NULLABLE_STRING: i16 length, then UTF-8; null is length -1. */
  string(value: string | null): this {
    if (value === null) return this.int16(-1);
    const text = Buffer.from(value, 'utf8');
    return this.int16(text.length).raw(text);
  }

  /** COMPACT_STRING / COMPACT_NULLABLE_STRING: unsigned varint length + 1; null is 0. */
  compactString(value: string | null): this {
    if (value === null) return this.uvarint(0);
    const text = Buffer.from(value, 'utf8');
    return this.uvarint(text.length + 1).raw(text);
  }

  /** An unsigned LEB128 varint of up to 32 bits. */
  uvarint(value: number): this {
    const out: number[] = [];
    let rest = value >>> 0;
    while (rest >= 0x80) {
      out.push((rest & 0x7f) | 0x80);
      rest >>>= 7;
    }
    out.push(rest);
    return this.raw(Buffer.from(out));
  }

  /** An empty tagged-field section (flexible versions). */
  noTags(): this {
    return this.uvarint(0);
  }

  raw(bytes: Buffer): this {
    this.parts.push(bytes);
    return this;
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }

  private push(size: number, write: (b: Buffer) => void): this {
    const b = Buffer.alloc(size);
    write(b);
    this.parts.push(b);
    return this;
  }
}

export interface RequestHeader {
  apiKey: number;
  version: number;
  correlationId: number;
  clientId: string | null;
  /** Header v2 (flexible versions: a tagged-field section) rather than v1. */
  flexible: boolean;
}

/** A whole request frame: i32 size, the request header, then `body`. */
export function requestFrame(header: RequestHeader, body: Buffer): Buffer {
  const head = new Body().int16(header.apiKey).int16(header.version).int32(header.correlationId);
  // Header v2 keeps the classic (i16-length) client id; only a tagged-field section is added.
  head.string(header.clientId);
  if (header.flexible) head.noTags();
  const payload = Buffer.concat([head.bytes(), body]);
  return Buffer.concat([new Body().int32(payload.length).bytes(), payload]);
}

/** Reads big-endian Kafka primitives from a response body. */
export class Reader {
  private offset = 0;

  constructor(private readonly buffer: Buffer) {}

  int16(): number {
    const value = this.buffer.readInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  int32(): number {
    const value = this.buffer.readInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  string(): string | null {
    const length = this.int16();
    if (length < 0) return null;
    const value = this.buffer.toString('utf8', this.offset, this.offset + length);
    this.offset += length;
    return value;
  }
}

export const API_VERSIONS_CORRELATION_ID = 0x0a0a;

/** ApiVersions v0: header v1 and an empty body, which every broker answers. */
export function apiVersionsRequest(): Buffer {
  return requestFrame(
    {
      apiKey: 18,
      version: 0,
      correlationId: API_VERSIONS_CORRELATION_ID,
      clientId: 'hostile-test',
      flexible: false,
    },
    Buffer.alloc(0),
  );
}

/** ApiVersions v0 response (header v0): error code and the number of APIs listed. */
export function readApiVersions(frame: Buffer): { correlationId: number; errorCode: number; apis: number } {
  const r = new Reader(frame);
  return { correlationId: r.int32(), errorCode: r.int16(), apis: r.int32() };
}

export const CREATE_TOPICS_CORRELATION_ID = 0x0c0c;

/** CreateTopics v4 (the last non-flexible version) for one topic, no assignments or configs. */
export function createTopicRequest(topic: string, partitions: number): Buffer {
  const body = new Body()
    .int32(1)
    .string(topic)
    .int32(partitions)
    .int16(1)
    .int32(0) // assignments
    .int32(0) // configs
    .int32(10_000) // timeout_ms
    .bool(false) // validate_only
    .bytes();
  return requestFrame(
    {
      apiKey: 19,
      version: 4,
      correlationId: CREATE_TOPICS_CORRELATION_ID,
      clientId: 'hostile-test',
      flexible: false,
    },
    body,
  );
}

/** CreateTopics v4 response: each topic's error code and message. */
export function readCreateTopics(
  frame: Buffer,
): { name: string | null; errorCode: number; errorMessage: string | null }[] {
  const r = new Reader(frame);
  r.int32(); // correlation id
  r.int32(); // throttle_time_ms
  const count = r.int32();
  return Array.from({ length: count }, () => ({
    name: r.string(),
    errorCode: r.int16(),
    errorMessage: r.string(),
  }));
}

/** Connects from `localAddress` (default: the kernel's choice) to 127.0.0.1:`port`. */
export function connect(port: number, localAddress?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    socket.once('error', reject);
    socket.connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) }, () => {
      socket.off('error', reject);
      resolve(socket);
    });
  });
}

/** Resolves with the first whole response frame (without its size) read from `socket`. */
export function readFrame(socket: Socket, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const done = (error: Error | null, frame?: Buffer) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('error', onError);
      if (error) reject(error);
      else resolve(frame!);
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 4) return;
      const size = buffered.readInt32BE(0);
      if (buffered.length >= 4 + size) done(null, buffered.subarray(4, 4 + size));
    };
    const onClose = () => done(new Error('the broker closed the connection before answering'));
    const onError = (error: Error) => done(error);
    const timer = setTimeout(() => done(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('error', onError);
  });
}

/** Sends one request on a new connection and returns its response frame. */
export async function exchange(port: number, request: Buffer, timeoutMs = 15_000): Promise<Buffer> {
  const socket = await connect(port);
  try {
    const answer = readFrame(socket, timeoutMs);
    socket.write(request);
    return await answer;
  } finally {
    socket.destroy();
  }
}

/**
 * Sends `request` on a new connection and waits until the broker answers or closes it (or
 * `timeoutMs` passes); what it did is returned, never judged.
 */
export async function sendHostile(
  port: number,
  request: Buffer,
  timeoutMs = 10_000,
): Promise<'answered' | 'closed' | 'neither'> {
  const socket = await connect(port);
  try {
    return await new Promise((resolve) => {
      const timer = setTimeout(() => resolve('neither'), timeoutMs);
      socket.once('data', () => {
        clearTimeout(timer);
        resolve('answered');
      });
      socket.once('close', () => {
        clearTimeout(timer);
        resolve('closed');
      });
      socket.on('error', () => {});
      socket.write(request);
    });
  } finally {
    socket.destroy();
  }
}

/** Waits for `socket` to close; false if it is still open after `timeoutMs`. */
export function closedWithin(socket: Socket, timeoutMs: number): Promise<boolean> {
  if (socket.closed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
