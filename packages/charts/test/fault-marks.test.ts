import { parseScenario } from '@kbench/schema';
import { describe, expect, it } from 'vitest';
import { faultMarks } from '../src/index.js';

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
