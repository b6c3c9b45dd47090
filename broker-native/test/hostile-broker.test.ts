// A broker's responses are hostile bytes too: a broker (or anything listening where a scenario's
// bootstrap points) that answers the native engine's Metadata request with an array count no
// frame can hold must fail the run with a clear error, not abort the Node process hosting the
// engine (the kbench CLI or server). The engine runs in a child Node process, so an abort shows
// as its signal here instead of killing the test runner.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { NativeProducerOptions } from '@kbench/broker-native';
import { afterEach, expect, it } from 'vitest';
import { Body, HUGE_COMPACT_COUNT } from './raw-frames.js';

const CHILD = fileURLToPath(new URL('./native-engine-child.mjs', import.meta.url));
const API_VERSIONS = 18;
const METADATA = 3;
const METADATA_VERSION = 12;

/** A response frame: size, correlation id, an empty tagged-field section when `flexible`, body. */
function responseFrame(correlationId: number, flexible: boolean, body: Buffer): Buffer {
  const header = new Body().int32(correlationId);
  if (flexible) header.noTags();
  const payload = Buffer.concat([header.bytes(), body]);
  return Buffer.concat([new Body().int32(payload.length).bytes(), payload]);
}

/** ApiVersions v3 (its header stays v0): only Metadata, at v12 alone. */
function apiVersionsAnswer(): Buffer {
  return new Body()
    .int16(0) // error code
    .uvarint(2) // one API key
    .int16(METADATA)
    .int16(METADATA_VERSION)
    .int16(METADATA_VERSION)
    .noTags()
    .int32(0) // throttle time
    .noTags()
    .bytes();
}

/** Metadata v12 claiming 2^32 - 2 brokers, and nothing after the count. */
function hostileMetadataAnswer(): Buffer {
  return new Body().int32(0).uvarint(HUGE_COMPACT_COUNT).bytes();
}

/** Answers each request frame on `socket` as `answer` says (null: no answer). */
function serve(socket: Socket, answer: (apiKey: number, correlationId: number) => Buffer | null): void {
  let pending = Buffer.alloc(0);
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const size = pending.readInt32BE(0);
      const frame = pending.subarray(4, 4 + size);
      pending = pending.subarray(4 + size);
      const reply = answer(frame.readInt16BE(0), frame.readInt32BE(4));
      if (reply) socket.write(reply);
    }
  });
}

let server: Server | undefined;
afterEach(async () => {
  server?.close();
  server = undefined;
});

it('a Metadata response claiming four billion brokers fails the native producer with an error naming it, and its process lives', async () => {
  server = createServer((socket) =>
    serve(socket, (apiKey, correlationId) => {
      if (apiKey === API_VERSIONS) return responseFrame(correlationId, false, apiVersionsAnswer());
      if (apiKey === METADATA) return responseFrame(correlationId, true, hostileMetadataAnswer());
      return null;
    }),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');

  const options: NativeProducerOptions = {
    bootstrap: [`127.0.0.1:${address.port}`],
    topics: ['t'],
    acks: 1,
    messageSize: 100,
    keys: 'none',
    compression: 'none',
    batchSize: 16_384,
    lingerMs: 0,
    maxInFlight: 5,
    idempotence: false,
    records: 10,
  };
  const child = spawn(process.execPath, [CHILD, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];

  expect({ code, signal, stderr: stderr.slice(0, 300) }).toEqual({ code: 0, signal: null, stderr: '' });
  const { error } = JSON.parse(stdout.trim()) as { error: string | null };
  expect(error).toMatch(/MetadataResponse v12: an array of 4294967294 elements .* does not fit/);
});
