// An agent of a stored run, as `environment.agents` holds it, for the tests that read one.
import type { AgentBreakdown } from '../src/index.js';

const side = {
  records: 0,
  valueBytes: 0,
  recordsPerSec: 0,
  errors: 0,
  latencyMs: null,
  histogram: { buckets: [], counts: [], count: 0, sum: 0, max: 0 },
};

/** Agent `name` at `name:7755` with one producer, lost at `lostAtMs` (connection closed) or not. */
export function agentBreakdown(name: string, lostAtMs: number | null): AgentBreakdown {
  return {
    name,
    address: `${name}:7755`,
    host: name,
    cores: 2,
    kbench: '0.1.0',
    roles: ['producers'],
    producers: 1,
    consumers: 0,
    clockOffsetMs: 0,
    clockUncertaintyMs: 0.1,
    lostAtMs,
    lostReason: lostAtMs === null ? null : 'connection closed',
    produced: side,
    consumed: side,
  };
}
