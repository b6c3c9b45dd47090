// npm run bench: the Apache Kafka comparison, the durability comparison, the load drivers, then the
// secured listener, each in a process of its own (each holds the run slot until it exits), each given this
// command's flags; the first failure ends it. `--only a,b` runs only the parts that write those sections.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const BENCHMARKS = [
  { script: 'apache-kafka.js', sections: ['machine', 'throughput', 'replication', 'topics'] },
  { script: 'durability.js', sections: ['durability'] },
  { script: 'drivers.js', sections: ['drivers'] },
  { script: 'secured.js', sections: ['secured'] },
];

const args = process.argv.slice(2);
const at = args.findIndex((a) => a === '--only' || a.startsWith('--only='));
const only =
  at < 0
    ? undefined
    : new Set((args[at]!.includes('=') ? args[at]!.split('=')[1]! : (args[at + 1] ?? '')).split(','));
const known = BENCHMARKS.flatMap((b) => b.sections);
const unknown = only ? [...only].filter((s) => !known.includes(s)) : [];
if (only && (only.size === 0 || unknown.length > 0)) {
  process.stderr.write(
    `--only: unknown section ${JSON.stringify(unknown.join(','))}; sections: ${known.join(', ')}\n`,
  );
  process.exit(2);
}

for (const { script, sections } of BENCHMARKS) {
  if (only && !sections.some((s) => only.has(s))) continue;
  const run = spawnSync(process.execPath, [join(import.meta.dirname, script), ...args], { stdio: 'inherit' });
  if (run.error) throw run.error;
  if (run.status !== 0) process.exit(run.status ?? 1);
}
