import { describe, expect, it } from 'vitest';
import { type AgentsRun, type RunSummary, runCaveats, runCaveatsText } from '../src/index.js';
import { agentBreakdown } from './agent-breakdown.js';

function summary(over: Partial<RunSummary> = {}): RunSummary {
  return {
    measuredSeconds: 10,
    produced: { records: 9000, recordsPerSec: 900, mbPerSec: 0.09, wireMbPerSec: null, errors: 0 },
    consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
    publishLatencyMs: null,
    endToEndLatencyMs: null,
    client: { cpuCores: 0.5, includesBroker: true, producerBusy: 0.3, consumerBusy: null },
    ...over,
  };
}
const paced = (rate: number) => ({
  driver: 'native',
  producers: { count: 1, rate, maxInFlight: 5 },
});

describe('runCaveats', () => {
  it('has none for a run alone on its machine that reached its rate', () => {
    expect(runCaveats({ summary: summary(), scenario: paced(900) })).toEqual([]);
    expect(runCaveatsText([])).toBeNull();
  });

  it('names each reason the figures are not the target alone, in one line', () => {
    const caveats = runCaveats({
      summary: summary({
        client: { cpuCores: 1, includesBroker: true, producerBusy: 0.97, consumerBusy: null },
        machine: { cpuBusy: 0.99, cores: 2, disk: null, diskWrittenBytes: null, othersCores: 0.8 },
      }),
      concurrentWith: ['ab12'],
      scenario: paced(1000),
    });
    expect(caveats.map((c) => c.kind)).toEqual(['concurrent', 'client-paced', 'rate-short']);
    // A run beside another kbench run says that, not the busy cores as well (they are that run's).
    expect(runCaveatsText(caveats)).toBe(
      'shared the machine with run ab12; the client set the pace (producer thread 97% busy); reached 900 of the 1,000 records/s asked',
    );
  });

  it('names other busy processes, and a lost agent', () => {
    const agents: AgentsRun = {
      e2eClockUncertaintyMs: 0,
      onLoss: 'continue',
      agents: [agentBreakdown('a', null), agentBreakdown('b', 2500)],
    };
    const caveats = runCaveats({
      summary: summary({
        machine: { cpuBusy: 0.99, cores: 2, disk: null, diskWrittenBytes: null, othersCores: 1.1 },
      }),
      agents,
    });
    expect(caveats.map((c) => c.text)).toEqual([
      "something besides this run kept 1.1 of the machine's 2 cores busy",
      'lost agent b at 2.5 s and went on without it',
    ]);
  });

  it('tells no shortfall without the scenario, nor for a closed-loop run', () => {
    expect(runCaveats({ summary: summary() })).toEqual([]);
    expect(
      runCaveats({
        summary: summary(),
        scenario: { ...paced(1), producers: { count: 1, rate: 'max', maxInFlight: 5 } },
      }),
    ).toEqual([]);
  });
});
