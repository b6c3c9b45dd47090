// The native load engine inside a Node process of its own, so that an abort in the engine kills
// this process and not the test runner. Starts a producer with the options (NativeProducer.start's)
// given as JSON in argv[2] and prints one JSON line: { error } with the error it failed with, or
// { error: null } once the producer started (then stops it).
import { NativeProducer } from '@kbench/broker-native';

try {
  const producer = await NativeProducer.start(JSON.parse(process.argv[2] ?? '{}'));
  await producer.stop();
  process.stdout.write(`${JSON.stringify({ error: null })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ error: String(error?.message ?? error) })}\n`);
}
