// npm run bench (secured listener part): what TLS and SASL cost the native engine, and what it gains
// over kafkajs there. The bundled broker in plain text and with cluster.security { tls: true, sasl:
// scram-sha-512 } (a CA, certificate and user made for each run), the same workload, runs of the two
// interleaved, then the kafkajs driver over the same SASL_SSL listener. Writes the "secured" section
// of docs/benchmarks.md.
import os from 'node:os';
import { ScenarioRun } from '@kbench/engine';
import { parseScenario, type RunSummary } from '@kbench/schema';
import { BENCHMARKS_DOC, int, replaceSection } from './doc.js';
import { holdBenchSlot } from './slot.js';

const RUNS = Number(process.env.KBENCH_BENCH_RUNS ?? 3);
const DURATION = process.env.KBENCH_BENCH_DURATION ?? '20s';
const WARMUP = '5s';
const log = (line: string) => process.stderr.write(`[bench secured] ${line}\n`);

const SECURED = { tls: true, sasl: 'scram-sha-512' } as const;
/** The 1-minute load average before each run: other work on the machine shows in every figure. */
const loads: number[] = [];

type Row = 'native plaintext' | 'native SASL_SSL' | 'kafkajs SASL_SSL';

async function measure(row: Row, index: number): Promise<RunSummary> {
  const driver = row.startsWith('native') ? 'native' : 'kafkajs';
  const secured = row.endsWith('SASL_SSL');
  const scenario = parseScenario({
    name: `bench ${row}`,
    target: 'bundled',
    driver,
    cluster: secured ? { security: SECURED } : {},
    topics: { partitions: 6 },
    producers: { count: 1, acks: 1, messageSize: 100, rate: 'max', batchSize: 16384 },
    duration: DURATION,
    warmup: WARMUP,
  });
  const runId = `benchsec${row.replace(/\W/g, '').toLowerCase()}${index}`;
  loads.push(os.loadavg()[0] ?? 0);
  const outcome = await new ScenarioRun(scenario, { runId }).execute();
  if (outcome.status !== 'completed' || !outcome.summary)
    throw new Error(`${row} run failed: ${outcome.error}`);
  const expected = secured ? 'SASL_SSL scram-sha-512' : undefined;
  if (outcome.environment.security !== expected)
    throw new Error(`${row} run connected as ${outcome.environment.security ?? 'PLAINTEXT'}`);
  log(`${row} run ${index + 1}: ${int(outcome.summary.produced.recordsPerSec)} rec/s`);
  return outcome.summary;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

async function main(): Promise<void> {
  holdBenchSlot('npm run bench (secured)');
  const results: Record<Row, RunSummary[]> = {
    'native plaintext': [],
    'native SASL_SSL': [],
    'kafkajs SASL_SSL': [],
  };
  // Interleaved, so a drift of the machine during the benchmark falls on both sides of the ratio.
  for (let i = 0; i < RUNS; i++) {
    for (const row of ['native plaintext', 'native SASL_SSL'] as const)
      results[row].push(await measure(row, i));
  }
  for (let i = 0; i < RUNS; i++) results['kafkajs SASL_SSL'].push(await measure('kafkajs SASL_SSL', i));
  const rate = (row: Row) => mean(results[row].map((s) => s.produced.recordsPerSec));
  const plain = rate('native plaintext');
  const secured = rate('native SASL_SSL');
  const kafkajs = rate('kafkajs SASL_SSL');
  const rows = (Object.keys(results) as Row[]).map((row) => {
    const summaries = results[row];
    const last = summaries.at(-1);
    return `| ${row} | ${summaries.map((s) => int(s.produced.recordsPerSec)).join(' / ')} | ${int(rate(row))} | ${(rate(row) / plain).toFixed(2)}x | ${last?.publishLatencyMs?.p99 ?? '-'} ms | ${last?.client?.cpuCores ?? '-'} |`;
  });
  replaceSection(
    BENCHMARKS_DOC,
    'secured',
    `## The bundled broker over SASL_SSL: what encryption and authentication cost

The bundled broker in the kbench process (\`target: bundled\`), plain text against
\`cluster.security: { tls: true, sasl: scram-sha-512 }\` (rustls on the broker and in the native engine,
a CA, certificate and SCRAM user made for each run), the same workload: closed loop (\`rate: max\`),
1 producer, 100 B values, 6 partitions, \`acks=1\`, batch 16 KB, linger 0, ${DURATION} with ${WARMUP}
warm-up left out, a fresh broker per run. The native runs alternate plain and secured, then the
kafkajs driver runs over the same secured listener.

| driver and listener | rec/s, ${RUNS} runs | mean | vs native plaintext | publish p99 (last run) | client cores (last run) |
|---|---|---|---|---|---|
${rows.join('\n')}

**Native over SASL_SSL: ${(secured / plain).toFixed(2)}x its plaintext rate, and ${(secured / kafkajs).toFixed(1)}x the kafkajs driver over
the same listener.**

The broker and the clients share this machine's cores, so both ends pay for encryption from the same
budget. The 1-minute load average before the runs was ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} on ${os.cpus().length} cores.
Above the core count, other work shared the machine and every figure is lower for it. Measured
${new Date().toISOString()}.`,
  );
  log(`wrote the secured section of ${BENCHMARKS_DOC}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
