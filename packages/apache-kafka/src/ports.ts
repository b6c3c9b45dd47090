// Free loopback ports and readiness probes over plain TCP.
import { createServer, Socket } from 'node:net';

/** A port nothing listens on right now (the OS picks it; a tiny race with other processes remains). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port from the OS');
  return address.port;
}

// ApiVersions v0: size, api key 18, version 0, correlation id 1, client id "kbench".
const API_VERSIONS_REQUEST = (() => {
  const clientId = Buffer.from('kbench');
  const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length);
  body.writeInt16BE(18, 0);
  body.writeInt16BE(0, 2);
  body.writeInt32BE(1, 4);
  body.writeInt16BE(clientId.length, 8);
  clientId.copy(body, 10);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
})();

/** True when a Kafka broker on host:port answers an ApiVersions request (it serves requests, not just accepts). */
export function answersApiVersions(host: string, port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let received = 0;
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received >= 8) done(true); // size + correlation id: a response
    });
    socket.connect(port, host, () => socket.write(API_VERSIONS_REQUEST));
  });
}

/** One request (header v1, client id "kbench") and its response body after the correlation id, or null on any failure. */
export function kafkaRequest(
  host: string,
  port: number,
  apiKey: number,
  apiVersion: number,
  body: Buffer,
  timeoutMs = 2000,
): Promise<Buffer | null> {
  const clientId = Buffer.from('kbench');
  const header = Buffer.alloc(10);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(apiVersion, 2);
  header.writeInt32BE(7, 4);
  header.writeInt16BE(clientId.length, 8);
  const payload = Buffer.concat([header, clientId, body]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(payload.length, 0);
  return new Promise((resolve) => {
    const socket = new Socket();
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (result: Buffer | null) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(null));
    socket.once('error', () => done(null));
    socket.once('close', () => done(null));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received < 4) return;
      const all = Buffer.concat(chunks);
      const length = all.readInt32BE(0);
      if (all.length >= 4 + length) done(all.subarray(8, 4 + length));
    });
    socket.connect(port, host, () => socket.write(Buffer.concat([size, payload])));
  });
}

/**
 * The ids of the brokers a node's Metadata (v4) lists: in KRaft, the registered brokers that are
 * not fenced, so a topic of replication factor N can be created once N are listed. Null when the
 * node does not answer.
 */
export async function metadataBrokerIds(host: string, port: number): Promise<number[] | null> {
  const body = Buffer.alloc(5);
  body.writeInt32BE(-1, 0); // topics: null (we only read the brokers)
  body.writeInt8(0, 4); // allow_auto_topic_creation
  const response = await kafkaRequest(host, port, 3, 4, body);
  if (response === null || response.length < 8) return null;
  try {
    let at = 4; // throttle_time_ms
    const count = response.readInt32BE(at);
    at += 4;
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(response.readInt32BE(at));
      at += 4;
      at += 2 + response.readInt16BE(at); // host
      at += 4; // port
      const rack = response.readInt16BE(at);
      at += 2 + Math.max(0, rack);
    }
    return ids.sort((a, b) => a - b);
  } catch {
    return null;
  }
}
