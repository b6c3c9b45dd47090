// The bundled cluster's fault kinds through the spawned CLI: bad faults are refused with exit 2,
// naming the field, before any load is sent.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-fault-kinds-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const run = (...set: string[]) => ['run', 'scenarios/quickstart.yaml', ...set.flatMap((s) => ['--set', s])];

describe('kbench run refuses bad faults with exit 2', () => {
  it('an unknown action, listing the allowed ones', async () => {
    const r = await runKbench(home, run('faults=[{at: 1s, action: partition, node: 1}]'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'faults[0].action: must be one of kill, pause, restart, isolate, heal, slow-disk, rolling-restart, preferred-leaders, command (got "partition")',
    );
  });

  it('a node the cluster does not have, naming the node count', async () => {
    const r = await runKbench(
      home,
      run(
        'cluster.nodes=3',
        'faults=[{at: 1s, action: kill, node: 1}, {at: 2s, action: restart, node: 1}, {at: 3s, action: isolate, node: 4}]',
      ),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('faults[2].node: node 4 does not exist: cluster.nodes is 3');
  });

  it('a bundled-only fault kind on the managed Apache Kafka target', async () => {
    const r = await runKbench(
      home,
      run('target=kafka', 'faults=[{at: 1s, action: slow-disk, node: 1, delay: 5ms}]'),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('faults[0].action: slow-disk needs target bundled');
  });
});
