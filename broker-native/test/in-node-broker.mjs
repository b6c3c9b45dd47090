// A broker started with the addon inside a Node process of its own, so that an abort in the
// broker kills this process and not the test runner. Options (startBroker's) come as JSON in
// argv[2]; prints `port <n>` once listening; stops when stdin closes or on SIGTERM.
import { startBroker } from '@kbench/broker-native';

const broker = await startBroker(JSON.parse(process.argv[2] ?? '{}'));
process.stdout.write(`port ${broker.port}\n`);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await broker.stop();
  process.exit(0);
}
process.once('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
