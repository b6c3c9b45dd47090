// A run sampled finer around a fault (issue 19, item 4): the time charts draw each sample at its own
// time, so 100 ms samples take a tenth of the room of 1 s ones, and a stall is a drop to 0 as long as it lasted.
import type { LineSeriesOption } from 'echarts';
import { describe, expect, it } from 'vitest';
import { PALETTE, renderSvg, throughputChart } from '../src/index.js';
import { samples } from './fixtures.js';

// t : intervalMs : acknowledged records, as a real run stored them (3 bundled nodes, 2000 rec/s, the
// leader paused 1 s at 3 s; packages/engine/test/fault-sampling.test.ts runs it).
const RUN = `1:1000:1990 2.001:1001:2000 3:999:2000 3.101:101:0 3.201:100:0 3.301:100:0 3.4:99:0 3.501:101:0
3.601:100:0 3.7:99:0 3.8:100:0 3.9:100:0 4:100:0 4.101:101:2200 4.201:100:200 4.301:100:200 4.401:100:200
4.5:99:200 4.601:101:200 4.701:100:200 4.851:150:250 4.902:51:140 5:99:210 5.101:100:200 5.201:100:200
5.301:100:200 5.401:100:200 5.501:100:200 5.601:100:200 5.701:100:200 5.801:100:200 5.901:99:200
6.003:103:200 6.112:109:220 6.201:89:180 6.301:100:200 6.401:100:200 6.501:100:200 6.601:100:200
6.701:100:200 6.801:100:200 6.9:99:200 7.003:103:210 7.1:97:190 7.2:100:200 7.301:101:200 7.4:99:200
7.501:101:200 7.601:100:200 7.701:100:200 7.801:100:200 7.901:100:200 8.001:100:200 8.1:99:200
8.201:101:200 8.301:100:200 8.401:100:200 8.5:99:200 8.601:101:200 8.701:100:200 8.801:100:200
8.901:100:200 9.001:100:200 10.001:1000:2000 11:999:2020`;

const run = RUN.split(/\s+/).map((field) => {
  const [t, intervalMs, producedRecords] = field.split(':').map(Number) as [number, number, number];
  return { ...samples(1)[0]!, t, intervalMs, producedRecords, consumedRecords: 0 };
});

/** The points of the SVG path stroked in `color` that has the most of them, in pixels. */
function linePoints(svg: string, color: string): [number, number][] {
  const paths = [...svg.matchAll(/<path d="([^"]+)"[^>]*stroke="([^"]+)"/g)]
    .filter((m) => m[2] === color)
    .map((m) =>
      [...(m[1] as string).matchAll(/[ML]\s*(-?[\d.]+)[ ,](-?[\d.]+)/g)].map(
        (p) => [Number(p[1]), Number(p[2])] as [number, number],
      ),
    );
  return paths.reduce((a, b) => (b.length > a.length ? b : a), []);
}

describe('a run sampled finer around a fault', () => {
  const spec = throughputChart([{ label: 'run', samples: run }]);

  it('plots every sample at its own time, as a rate per second of its own interval', () => {
    const [produced] = spec.option.series as LineSeriesOption[];
    const data = produced?.data as [number, number | null][];
    expect(data.map(([t]) => t)).toEqual(run.map((s) => s.t));
    expect(data[0]).toEqual([1, 1990]);
    // 200 records in 100 ms is 2000 a second, as the 1 s samples around it.
    expect(data.find(([t]) => t === 4.201)).toEqual([4.201, 2000]);
    // The stall: zeros, not gaps, so the line drops to 0 and stays there while it lasts.
    expect(data.filter(([t]) => t > 3 && t <= 4).map(([, y]) => y)).toEqual(Array(10).fill(0));
  });

  it('renders the points at x positions in proportion to their times, with the stall on the zero line', () => {
    const points = linePoints(renderSvg(spec.option), PALETTE[0]);
    expect(points).toHaveLength(run.length);
    const first = points[0] as [number, number];
    const last = points.at(-1) as [number, number];
    const pxPerSecond = (last[0] - first[0]) / ((run.at(-1)?.t ?? 0) - (run[0]?.t ?? 0));
    expect(pxPerSecond).toBeGreaterThan(0);
    points.forEach(([x], i) => {
      expect(Math.abs(x - (first[0] + ((run[i]?.t ?? 0) - (run[0]?.t ?? 0)) * pxPerSecond))).toBeLessThan(
        0.5,
      );
    });
    // The ten samples of the stall sit on the lowest line of the plot (y grows downwards), about 1 s wide.
    const stall = points.filter((_, i) => run[i]?.producedRecords === 0);
    const zeroY = Math.max(...points.map(([, y]) => y));
    expect(stall).toHaveLength(10);
    for (const [, y] of stall) expect(y).toBe(zeroY);
    const widthSeconds = ((stall.at(-1)?.[0] ?? 0) - (stall[0]?.[0] ?? 0)) / pxPerSecond;
    expect(widthSeconds).toBeCloseTo(4 - 3.101, 2);
  });
});
