// Per-second broker figures from the counters of the bundled broker or cluster: each cut turns the
// counters since the previous one into rates and counts for the interval.
import type { BrokerNodeSample } from '@kbench/schema';
import type { NodeCounters } from './target.js';

type Counters = NodeCounters['stats'];

export class BrokerStatsMeter {
  private last = new Map<number, Counters>();

  constructor(private readonly read: () => Promise<NodeCounters[]>) {}

  /** Takes the counters as they are now as the start of the first interval. */
  async reset(): Promise<void> {
    this.last = new Map((await this.read()).map((n) => [n.nodeId, n.stats]));
  }

  /** The interval since the previous cut, one entry per running node, by node id. */
  async cut(intervalMs: number): Promise<BrokerNodeSample[]> {
    const now = await this.read();
    const perSec = (n: number) => (intervalMs > 0 ? (n * 1000) / intervalMs : 0);
    const out: BrokerNodeSample[] = [];
    for (const { nodeId, stats } of [...now].sort((a, b) => a.nodeId - b.nodeId)) {
      const before = this.last.get(nodeId);
      // A node that restarted counts from zero again: its counters since then are the interval's.
      const restarted = before !== undefined && stats.bytesIn < before.bytesIn;
      const delta = (key: keyof Counters): number | undefined => {
        const value = stats[key];
        if (value === undefined) return undefined;
        const base = restarted || before === undefined ? 0 : (before[key] ?? 0);
        return Math.max(0, value - base);
      };
      const sample: BrokerNodeSample = {
        node: nodeId,
        bytesInPerSec: perSec(delta('bytesIn') ?? 0),
        bytesOutPerSec: perSec(delta('bytesOut') ?? 0),
        logSizeBytes: stats.logSizeBytes,
      };
      const fsyncs = delta('fsyncs');
      if (fsyncs !== undefined) {
        sample.fsyncs = fsyncs;
        const micros = delta('fsyncMicrosTotal');
        if (micros !== undefined) sample.fsyncMeanMs = fsyncs > 0 ? micros / fsyncs / 1000 : null;
        if (stats.fsyncMicrosMax !== undefined) sample.fsyncMaxMs = stats.fsyncMicrosMax / 1000;
      }
      if (stats.underReplicated !== undefined) sample.underReplicated = stats.underReplicated;
      const shrinks = delta('isrShrinks');
      if (shrinks !== undefined) sample.isrShrinks = shrinks;
      const expands = delta('isrExpands');
      if (expands !== undefined) sample.isrExpands = expands;
      const replicated = delta('replicatedBytes');
      if (replicated !== undefined) sample.replicatedBytesPerSec = perSec(replicated);
      out.push(sample);
    }
    // A node that is down keeps its last counters, so that whether its counters restart from
    // zero or not, its first interval back is right.
    for (const n of now) this.last.set(n.nodeId, n.stats);
    return out;
  }
}
