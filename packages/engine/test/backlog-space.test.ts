// A preloaded backlog must fit the free space where the bundled broker keeps its data: checked on the
// real file system of the run's work directory, before anything is written.
import { statfsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MAX_BACKLOG_BYTES, parseScenario } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBacklogFits, backlogBytesOnDisk, freeBytes } from '../src/backlog-space.js';
import { type Phase, ScenarioRun } from '../src/index.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-backlog-space-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

const GIB = 1024 ** 3;
const tmpFree = (() => {
  const fs = statfsSync(os.tmpdir());
  return fs.bavail * fs.bsize;
})();

describe('the room a backlog needs', () => {
  it('counts every replica, with a margin for framing and indexes', () => {
    const one = parseScenario({ consumers: { backlog: '1GB' }, producers: { messageSize: 1000 } });
    const three = parseScenario({
      cluster: { nodes: 3 },
      topics: { replicationFactor: 3 },
      consumers: { backlog: '1GB' },
      producers: { messageSize: 1000 },
    });
    expect(backlogBytesOnDisk(one)).toBeGreaterThan(GIB);
    expect(backlogBytesOnDisk(three)).toBe(3 * backlogBytesOnDisk(one));
  });

  it('a backlog that fits the free space passes', () => {
    const s = parseScenario({ consumers: { count: 1, startAt: 'backlog', backlog: '1MB' } });
    expect(() => assertBacklogFits(s, workDir)).not.toThrow();
  });
});

describe('a run whose backlog does not fit', () => {
  it.skipIf(tmpFree + GIB > MAX_BACKLOG_BYTES)(
    'fails before any load, naming consumers.backlog, the bytes needed and the bytes free',
    async () => {
      const backlog = freeBytes(workDir) + GIB;
      const run = new ScenarioRun(
        parseScenario({
          records: 1000,
          producers: { count: 1 },
          consumers: { count: 1, startAt: 'backlog', backlog },
        }),
        { runId: Math.random().toString(16).slice(2, 10), workDir },
      );
      const phases: Phase[] = [];
      run.on('progress', ({ phase }: { phase: Phase }) => {
        phases.push(phase);
        // Should the check ever be missing, stop at once rather than fill the disk.
        if (phase === 'preload') run.stop();
      });
      const outcome = await run.execute();
      expect(outcome.status).toBe('failed');
      const [, needed, free] =
        /^consumers\.backlog: [\d,]+ bytes × RF 1 needs ([\d,]+) bytes on disk .* has ([\d,]+) bytes free$/.exec(
          outcome.error ?? '',
        ) ?? [];
      expect(outcome.error).toContain(`${backlog.toLocaleString('en-US')} bytes × RF 1`);
      expect(Number(needed?.replaceAll(',', ''))).toBeGreaterThan(Number(free?.replaceAll(',', '')));
      expect(phases).not.toContain('setup');
      expect(phases).not.toContain('preload');
      expect(outcome.samples).toEqual([]);
    },
  );
});
