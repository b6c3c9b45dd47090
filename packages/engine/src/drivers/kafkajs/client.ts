import { Kafka, type LogEntry, logLevel } from 'kafkajs';

export type Log = (level: 'error' | 'warn' | 'info', message: string) => void;

/** A kafkajs client whose own log lines go to our log instead of stdout. */
export function createKafka(clientId: string, brokers: string[], log: Log): Kafka {
  return new Kafka({
    clientId,
    brokers,
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
