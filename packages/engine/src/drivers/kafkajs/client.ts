import { Kafka, type KafkaConfig, type LogEntry, logLevel, type SASLOptions } from 'kafkajs';
import type { ConnectionSecurity } from '../../security.js';

export type Log = (level: 'error' | 'warn' | 'info', message: string) => void;

/** kafkajs's ssl and sasl options for a target's security settings. */
export function kafkajsSecurity(security: ConnectionSecurity | undefined): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  if (!security) return {};
  const out: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (security.tls) out.ssl = { ...security.tls };
  if (security.sasl) {
    const { mechanism, username, password } = security.sasl;
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
): Kafka {
  return new Kafka({
    clientId,
    brokers,
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
    requestTimeout: 30_000,
  });
}
