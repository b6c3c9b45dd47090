// Each sample's latency histograms (migration 5) are stored as the bytes they were given, in time
// order, and go with their run when it is deleted.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { History, RunNotFoundError } from '../src/index.js';
import { makeRun, tempDir } from './fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(() => cleanup());

describe('sample histograms', () => {
  it('come back as stored, in time order, with null sides kept null', async () => {
    const history = await History.open(join(dir, 'history.duckdb'));
    await history.createRun(makeRun({ id: 'r1' }));
    const bytes = (...values: number[]) => Uint8Array.from(values);
    await history.appendHistograms('r1', [
      { t: 2, warmup: false, publish: bytes(0, 255, 7), e2e: null },
      { t: 1, warmup: true, publish: bytes(1), e2e: bytes(2, 3) },
    ]);
    // A t stored again replaces the first row.
    await history.appendHistograms('r1', [{ t: 2, warmup: false, publish: bytes(9, 9), e2e: bytes() }]);
    const rows = await history.getHistograms('r1');
    expect(
      rows.map((row) => ({ ...row, publish: row.publish && [...row.publish], e2e: row.e2e && [...row.e2e] })),
    ).toEqual([
      { t: 1, warmup: true, publish: [1], e2e: [2, 3] },
      { t: 2, warmup: false, publish: [9, 9], e2e: [] },
    ]);
    expect(await history.getHistograms('unknown')).toEqual([]);
    await expect(
      history.appendHistograms('unknown', [{ t: 1, warmup: false, publish: null, e2e: null }]),
    ).rejects.toBeInstanceOf(RunNotFoundError);
    expect(await history.deleteRun('r1')).toBe(true);
    expect(await history.getHistograms('r1')).toEqual([]);
  });
});
