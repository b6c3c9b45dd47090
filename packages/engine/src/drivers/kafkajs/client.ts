import net, { type Socket } from 'node:net';
import tls from 'node:tls';
import {
  type ISocketFactory,
  Kafka,
  type KafkaConfig,
  type LogEntry,
  logLevel,
  type SASLOptions,
} from 'kafkajs';
import type { ConnectionSecurity } from '../../security.js';
import { oauthBearerMechanism } from './oauthbearer.js';

export type Log = (level: 'error' | 'warn' | 'info', message: string) => void;

/** kafkajs's ssl and sasl options for a target's security settings. */
export function kafkajsSecurity(security: ConnectionSecurity | undefined): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  if (!security) return {};
  const out: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (security.tls) out.ssl = { ...security.tls };
  const sasl = security.sasl;
  if (sasl?.mechanism === 'oauthbearer') out.sasl = oauthBearerMechanism(sasl);
  else if (sasl) {
    const { mechanism, username, password } = sasl;
    out.sasl = { mechanism, username, password } as SASLOptions;
  }
  return out;
}

/** A kafkajs client whose own log lines go to our log instead of stdout. */
export function createKafka(
  clientId: string,
  brokers: string[],
  log: Log,
  security?: ConnectionSecurity,
  wire?: WireCounter,
  requestTimeout = 30_000,
): Kafka {
  return new Kafka({
    clientId,
    brokers,
    ...(wire ? { socketFactory: wire.socketFactory() } : {}),
    ...kafkajsSecurity(security),
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const text = `kafkajs ${entry.logger ?? ''}: ${entry.message}`;
        log(level === logLevel.ERROR ? 'error' : 'warn', text);
      },
    retry: { retries: 5, initialRetryTime: 100 },
    connectionTimeout: 5000,
    requestTimeout,
  });
}

/**
 * Bytes on the wire of a kafkajs client: what it wrote to its broker connections (requests as
 * encoded, record batches compressed, headers included). kafkajs's own instrumentation reports
 * response sizes only, so the count comes from the sockets, which kafkajs lets us create.
 */
export class WireCounter {
  private readonly sockets = new Map<Socket, number>();
  /** One wait per socket whose buffer is full, shared by every send waiting on it. */
  private readonly draining = new Map<Socket, Promise<void>>();

  socketFactory(): ISocketFactory {
    return ({ host, port, ssl, onConnect }) => {
      const socket = ssl
        ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
        : net.connect({ host, port }, onConnect);
      socket.setKeepAlive(true, 60_000);
      this.sockets.set(socket, 0);
      return socket;
    };
  }

  /**
   * Resolves once this thread's event loop has turned and every connection has taken what was
   * written to it (no socket over its buffer limit). An acks=0 send is done when its request is
   * written: kafkajs resolves it at once, with no I/O to wait for, so a producer that went on
   * sending would keep the event loop from ever running (no counts handed over, no socket flushed).
   */
  async drained(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const socket of this.sockets.keys()) {
      if (socket.destroyed || !socket.writableNeedDrain) continue;
      let wait = this.draining.get(socket);
      if (!wait) {
        wait = new Promise<void>((resolve) => {
          const done = () => {
            socket.off('drain', done);
            socket.off('close', done);
            this.draining.delete(socket);
            resolve();
          };
          socket.on('drain', done);
          socket.on('close', done);
        });
        this.draining.set(socket, wait);
      }
      await wait;
    }
  }

  /** Bytes written since the last take. */
  take(): number {
    let total = 0;
    for (const [socket, counted] of this.sockets) {
      const written = socket.bytesWritten;
      total += written - counted;
      if (socket.destroyed) this.sockets.delete(socket);
      else this.sockets.set(socket, written);
    }
    return total;
  }
}
