// A worker thread running some kafkajs producers or consumers, so that several of them use more
// than one core. It counts locally and hands over its counts when the driver asks.
import { parentPort, workerData } from 'node:worker_threads';
import { IntervalAccumulator } from '../../interval.js';
import { LoadControl } from '../../load-control.js';
import { PayloadSource } from '../../payload.js';
import { createKafka, WireCounter } from './client.js';
import { LoadConsumer } from './consumer.js';
import { LoadProducer } from './producer.js';
import { clientOptions, consumerOptions, consumerProperties, producerProperties } from './properties.js';
import type { FromWorker, ToWorker, WorkerPlan } from './protocol.js';

const port = parentPort;
if (!port) throw new Error('the kafkajs worker must run in a worker thread');
const plan = workerData as WorkerPlan;
const post = (message: FromWorker) => port.postMessage(message);
const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

const acc = new IntervalAccumulator();
// Producers count what they put on the wire (the figure reported as wire bytes); consumers do not.
const wire = plan.role === 'producers' ? new WireCounter() : undefined;
const client = clientOptions(plan.role === 'producers' ? plan.config.config : plan.properties, plan.clientId);
const consumerSettings = consumerOptions(plan.role === 'consumers' ? plan.properties : {});
/** The Kafka properties this worker's clients run with, as given to kafkajs. */
const properties =
  plan.role === 'producers'
    ? producerProperties(plan.config, client)
    : consumerProperties(consumerSettings, client, plan.fromBeginning);
const kafka = createKafka(
  client.clientId,
  plan.bootstrap,
  (level, message) => post({ type: 'log', level, message }),
  plan.security,
  wire,
  client.requestTimeout,
);
const onError = (err: unknown) => post({ type: 'client-error', error: describe(err) });
const producers: LoadProducer[] = [];
const consumers: LoadConsumer[] = [];
let control: LoadControl | null = null;

async function setUp(): Promise<void> {
  if (plan.role === 'producers') {
    control = new LoadControl(null, plan.records, () => performance.now());
    const payload = new PayloadSource(plan.config, plan.seed);
    for (let i = 0; i < plan.count; i++) {
      producers.push(
        new LoadProducer({
          kafka,
          topics: plan.topics,
          config: plan.config,
          requestTimeoutMs: client.requestTimeout,
          ratePerSec: plan.ratePerSec,
          unstamped: plan.unstamped,
          control,
          acc,
          payload,
          onError,
          written: () => wire?.drained() ?? new Promise((resolve) => setImmediate(resolve)),
        }),
      );
    }
    await Promise.all(producers.map((p) => p.connect()));
  } else {
    for (let i = 0; i < plan.count; i++) {
      consumers.push(
        new LoadConsumer({
          kafka,
          groupId: plan.groupId,
          topics: plan.topics,
          fromBeginning: plan.fromBeginning,
          options: consumerSettings,
          acc,
          onError,
        }),
      );
    }
    for (const consumer of consumers) await consumer.start();
    await Promise.all(consumers.map((c) => c.waitForJoin(30_000)));
  }
}

function start(): void {
  if (plan.role !== 'producers' || !control) return;
  if (plan.durationMs !== null) {
    const durationMs = plan.durationMs;
    const bounded = new LoadControl(performance.now() + durationMs, plan.records, () => performance.now());
    control = bounded;
    for (const p of producers) p.setControl(bounded);
  }
  Promise.all(producers.map((p) => p.run())).then(
    () => post({ type: 'finished' }),
    (err: unknown) => onError(err),
  );
}

async function stop(): Promise<void> {
  control?.stop();
  await Promise.allSettled([...producers, ...consumers].map((c) => c.disconnect()));
  post({ type: 'stopped' });
}

let lastLoop = performance.eventLoopUtilization();

/** This thread's counts, and how busy its event loop was since the last take. */
function take() {
  const now = performance.eventLoopUtilization();
  const busy = performance.eventLoopUtilization(now, lastLoop).utilization;
  lastLoop = now;
  return { ...acc.take(), busy, ...(wire ? { wireBytes: wire.take() } : {}) };
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'start') start();
  else if (message.type === 'take') post({ type: 'interval', id: message.id, interval: take() });
  else if (message.type === 'stop') void stop();
});

setUp().then(
  () => post({ type: 'ready', properties }),
  (err: unknown) => post({ type: 'failed', error: describe(err) }),
);
