// npm run bench: the Apache Kafka comparison, the load drivers, then the secured listener, each in a
// process of its own (each holds the run slot until it exits), each given this command's flags; the
// first failure ends it.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const BENCHMARKS = ['apache-kafka.js', 'drivers.js', 'secured.js'];

for (const script of BENCHMARKS) {
  const run = spawnSync(process.execPath, [join(import.meta.dirname, script), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  if (run.error) throw run.error;
  if (run.status !== 0) process.exit(run.status ?? 1);
}
