// Kafka client properties from the command line: --set addresses one by the rest of the path after
// config., --dry-run lists what the driver is given, and a property the driver cannot honour is
// refused by name. The built `kbench` spawned as a process.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-props-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('kbench run with client properties', () => {
  it('--set producers.config.<name> sets a property; --dry-run lists it', async () => {
    const args = [
      'run',
      'scenarios/quickstart.yaml',
      '--set',
      'driver=native',
      '--set',
      'producers.config.max.in.flight.requests.per.connection=1',
      '--set',
      'producers.config.buffer.memory=1MB',
      '--set',
      'consumers.config.fetch.max.wait.ms=500',
      '--dry-run',
    ];
    const text = await runKbench(home, args);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /producer props\s+acks=1 batch\.size=16384 linger\.ms=0 compression\.type=none enable\.idempotence=false max\.in\.flight\.requests\.per\.connection=1 buffer\.memory=1048576\n/,
    );
    expect(text.stdout).toMatch(/consumer props\s+auto\.offset\.reset=latest fetch\.max\.wait\.ms=500\n/);
    const json = await runKbench(home, [...args, '--json']);
    expect(JSON.parse(json.stdout).load.producerProperties).toMatchObject({
      'max.in.flight.requests.per.connection': '1',
      'buffer.memory': '1048576',
    });
  });

  it('refuses, by name, a property the driver cannot honour and one kbench does not know (exit 2)', async () => {
    const refused = await runKbench(home, [
      'run',
      'scenarios/quickstart.yaml',
      '--set',
      'producers.config.buffer.memory=1MB',
      '--dry-run',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'producers.config.buffer.memory: the kafkajs driver cannot honour buffer.memory (the native driver can); it honours: ',
    );
    const unknown = await runKbench(home, [
      'run',
      'scenarios/quickstart.yaml',
      '--set',
      'consumers.config.fetch.max.wait=500',
      '--dry-run',
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('consumers.config.fetch.max.wait: unknown consumer property');
  });

  it('a run stores the properties its clients ran with, and kbench show prints them', async () => {
    const file = path.join(home, 'props.yaml');
    await writeFile(
      file,
      [
        'driver: native',
        'records: 2000',
        'producers:',
        '  config: { max.in.flight.requests.per.connection: 1, request.timeout.ms: 10000 }',
        'consumers:',
        '  count: 1',
        '  config: { fetch.max.wait.ms: 100 }',
      ].join('\n'),
    );
    const run = await runKbench(home, ['run', file, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(record.scenario.producers).toMatchObject({
      maxInFlight: 1,
      config: { 'request.timeout.ms': 10000 },
    });
    expect(record.environment.clientProperties.producers).toMatchObject({
      'max.in.flight.requests.per.connection': '1',
      'request.timeout.ms': '10000',
    });
    const shown = await runKbench(home, ['show', record.id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(
      /producers {2}acks=1 .*max\.in\.flight\.requests\.per\.connection=1 .*request\.timeout\.ms=10000/,
    );
    expect(shown.stdout).toMatch(/consumers {2}.*fetch\.max\.wait\.ms=100/);
  });
});
