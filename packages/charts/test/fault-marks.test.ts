// Fault markers from a scenario's timeline or a run's recorded faults, and the band over a fault's window.
import { parseScenario } from '@kbench/schema';
import type { LineSeriesOption } from 'echarts';
import { describe, expect, it } from 'vitest';
import { FAULT_BAND, faultMarks, renderSvg, throughputChart } from '../src/index.js';
import { samples } from './fixtures.js';

const scenario = parseScenario({
  cluster: { nodes: 3 },
  faults: [
    { at: '2s', action: 'kill', node: 'leader:0-0' },
    { at: '3s', action: 'pause', node: 1, for: '1s' },
  ],
});

describe('faultMarks', () => {
  it('marks the scenario timeline when given a scenario, or a run that recorded no faults', () => {
    const expected = [
      { t: 2, label: 'kill leader:0-0' },
      { t: 3, label: 'pause node 1 for 1s' },
    ];
    expect(faultMarks(scenario)).toEqual(expected);
    expect(faultMarks({ scenario })).toEqual(expected);
  });

  it('marks the faults a run recorded, with resolved nodes and failures', () => {
    const marks = faultMarks({
      scenario,
      faults: [
        { t: 2.1, action: 'kill', target: 'leader:0-0', node: 3, durationMs: null, error: null },
        { t: 3, action: 'pause', target: 1, node: 1, durationMs: 1000, error: 'not running' },
      ],
    });
    expect(marks).toEqual([
      { t: 2.1, label: 'kill node 3' },
      { t: 3, label: 'pause node 1 for 1s (failed)' },
    ]);
  });
});

describe('the band of a fault with recovery figures', () => {
  const recovery = {
    windowEndT: 4.3,
    noAckSec: 2.2,
    levelPerSec: 2000,
    recoverySec: 2.2,
    recoveryNote: null,
    publishP99Ms: 2244,
    publishMaxMs: 2256,
    e2eP99Ms: null,
    e2eMaxMs: null,
    errors: 50,
    retries: 60,
    leaderElectionMs: 2010,
    leaderNote: null,
  };
  const marks = faultMarks({
    scenario,
    faults: [
      { t: 2.1, action: 'kill', target: 'leader:0-0', node: 3, durationMs: null, error: null, recovery },
    ],
  });

  it('runs from the fault to the end of its window', () => {
    expect(marks).toEqual([{ t: 2.1, label: 'kill node 3', until: 4.3 }]);
  });

  it('is a shaded area on the time charts, drawn in the SVG export', () => {
    const spec = throughputChart([{ label: 'run', samples: samples(8, 1), faults: marks }]);
    const series = (spec.option.series as LineSeriesOption[])[0];
    const areas = series?.markArea?.data as [
      { xAxis: number; itemStyle?: { color: string } },
      { xAxis: number },
    ][];
    expect(areas.map(([from, to]) => [from.xAxis, to.xAxis])).toEqual([
      [0, 1],
      [2.1, 4.3],
    ]);
    expect(areas[1]?.[0].itemStyle?.color).toBe(FAULT_BAND);
    // The band is a filled shape in the band's red, at a tenth of its opacity.
    const svg = renderSvg(spec.option);
    expect(svg).toMatch(/<polygon [^>]*fill="rgb\(220,38,38\)" fill-opacity="0\.1"/);
  });
});
