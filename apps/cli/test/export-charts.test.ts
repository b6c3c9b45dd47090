// `kbench export --svg/--png/--csv` of one run, spawned as a user runs it: the files carry the run's
// fault markers and bands, the faults' recovery figures, its name and id, and y-axis labels that are
// whole at millions of records/s (issue 14, item 3).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { History } from '@kbench/history';
import { parseScenario, type Sample } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

let home: string;
const id = 'c0ffee123456';
const name = 'twelve million a second';

const samples: Sample[] = Array.from({ length: 10 }, (_, i) => ({
  t: i + 1,
  intervalMs: 1000,
  warmup: i < 2,
  producedRecords: 12_000_000 + i * 1000,
  producedBytes: 1_200_000_000,
  consumedRecords: 11_990_000,
  consumedBytes: 1_199_000_000,
  errors: 0,
  backlog: 10_000,
  publishP50Ms: 1.5,
  publishP99Ms: 8,
  publishMaxMs: 30,
  e2eP50Ms: 3,
  e2eP99Ms: 12,
  e2eMaxMs: 40,
}));

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-export-charts-'));
  // A run as `kbench run` stores one, with a fault it executed.
  const history = await History.open(path.join(home, 'history.duckdb'));
  const at = new Date().toISOString();
  await history.createRun({
    id,
    status: 'running',
    scenario: parseScenario({
      name,
      duration: '10s',
      cluster: { nodes: 2 },
      faults: [{ at: '5s', action: 'kill', node: 2 }],
    }),
    source: null,
    environment: {
      cores: 2,
      cpuModel: '',
      memoryBytes: 1024 ** 3,
      os: 'linux',
      hostname: 'test',
      versions: {},
      target: 'bundled',
      bootstrap: '127.0.0.1:9092',
      driver: 'native',
    },
    summary: null,
    error: null,
    startedAt: at,
    finishedAt: null,
    tags: [],
    notes: '',
  });
  await history.appendSamples(id, samples);
  await history.finishRun(id, {
    status: 'completed',
    summary: null,
    error: null,
    finishedAt: at,
    faults: [
      {
        t: 5.02,
        action: 'kill',
        target: 2,
        node: 2,
        durationMs: null,
        error: null,
        // What it cost, as the engine measures it (docs/scenarios.md#recovery-figures).
        recovery: {
          windowEndT: 7,
          noAckSec: 1.2,
          levelPerSec: 12_004_000,
          recoverySec: 1,
          recoveryNote: null,
          publishP99Ms: 1210,
          publishMaxMs: 1250.5,
          e2eP99Ms: null,
          e2eMaxMs: null,
          errors: 4,
          retries: 120,
          leaderElectionMs: 1980,
          leaderNote: null,
        },
      },
    ],
  });
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** Exports the run's charts into a fresh folder; returns the folder. */
async function exported(format: '--svg' | '--png'): Promise<string> {
  const out = path.join(home, `out${format}`);
  const r = await runKbench(home, ['export', id, format, '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  return out;
}

const CHARTS = ['throughput', 'bandwidth', 'latency', 'backlog'];

describe('kbench export of one run', () => {
  it('writes SVGs that carry the fault markers and bands', async () => {
    const out = await exported('--svg');
    for (const chart of CHARTS) {
      const svg = await readFile(path.join(out, `kbench-${id}-${chart}.svg`), 'utf8');
      expect(svg, chart).toContain('>kill node 2</text>');
      // And a band over the fault's window, from the fault to its recovery.
      expect(svg, chart).toMatch(/<polygon [^>]*fill="rgb\(220,38,38\)" fill-opacity="0\.1"/);
    }
  });

  it('writes the faults with their recovery figures as CSV', async () => {
    const out = path.join(home, 'out-csv');
    const r = await runKbench(home, ['export', id, '--csv', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const csv = await readFile(path.join(out, `kbench-${id}-faults.csv`), 'utf8');
    expect(csv.split('\r\n')).toEqual([
      't,action,target,node,duration_ms,error,window_end_t,no_ack_sec,level_per_sec,recovery_sec,recovery_note,publish_p99_ms,publish_max_ms,e2e_p99_ms,e2e_max_ms,errors,retried_records,leader_election_ms,leader_note,waited_ms',
      '5.02,kill,2,2,,,7,1.2,12004000,1,,1210,1250.5,,,4,120,1980,,',
      '',
    ]);
  });

  it("writes SVGs that carry the run's name and id", async () => {
    const out = await exported('--svg');
    for (const chart of CHARTS) {
      const svg = await readFile(path.join(out, `kbench-${id}-${chart}.svg`), 'utf8');
      expect(svg, chart).toContain(`>${name} (${id})</text>`);
    }
  });

  it('writes PNGs with the fault marker drawn', async () => {
    const png = await throughputPng();
    let faultRed = 0;
    for (let y = 0; y < png.height; y++) {
      for (let x = 0; x < png.width; x++) {
        const [r, g, b] = png.pixel(x, y);
        if (r > 180 && g < 70 && b < 70) faultRed++;
      }
    }
    expect(faultRed).toBeGreaterThan(100);
  });

  it('writes PNGs whose y-axis labels (12,000,000) lie wholly inside the picture', async () => {
    const png = await throughputPng();
    let firstInk = png.width;
    for (let y = 0; y < png.height; y++) {
      for (let x = 0; x < firstInk; x++) {
        if (Math.min(...png.pixel(x, y)) < 200) firstInk = x;
      }
    }
    // The labels are the leftmost ink: near the edge, but not cut by it.
    expect(firstInk).toBeLessThan(png.width * 0.1);
    expect(firstInk).toBeGreaterThanOrEqual(4);
  });
});

async function throughputPng() {
  const out = await exported('--png');
  return decodePng(await readFile(path.join(out, `kbench-${id}-throughput.png`)));
}

/** An 8-bit, non-interlaced RGB or RGBA PNG (what resvg writes), decoded. */
function decodePng(file: Buffer): {
  width: number;
  height: number;
  pixel(x: number, y: number): [number, number, number];
} {
  const width = file.readUInt32BE(16);
  const height = file.readUInt32BE(20);
  const [depth, colourType, , , interlace] = file.subarray(24, 29);
  const channels = colourType === 6 ? 4 : colourType === 2 ? 3 : 0;
  if (depth !== 8 || channels === 0 || interlace !== 0)
    throw new Error(`unexpected PNG: depth ${depth}, colour type ${colourType}`);
  const idat: Buffer[] = [];
  for (let at = 8; at < file.length; ) {
    const length = file.readUInt32BE(at);
    if (file.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(file.subarray(at + 8, at + 8 + length));
    at += length + 12;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let i = 0; i < stride; i++) {
      const value = raw[y * (stride + 1) + 1 + i] as number;
      const left = i >= channels ? (pixels[y * stride + i - channels] as number) : 0;
      const up = y > 0 ? (pixels[(y - 1) * stride + i] as number) : 0;
      const upLeft = y > 0 && i >= channels ? (pixels[(y - 1) * stride + i - channels] as number) : 0;
      const predictor = [0, left, up, (left + up) >> 1, paeth(left, up, upLeft)][filter as number] as number;
      pixels[y * stride + i] = (value + predictor) & 0xff;
    }
  }
  return {
    width,
    height,
    pixel: (x, y) => {
      const at = y * stride + x * channels;
      return [pixels[at] as number, pixels[at + 1] as number, pixels[at + 2] as number];
    },
  };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}
