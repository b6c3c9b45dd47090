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
