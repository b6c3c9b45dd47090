// Per-second broker figures from the counters of the bundled broker or cluster: each cut turns the
// counters since the previous one into rates and counts for the interval.
// The counters' shape is the addon's (`BrokerStats`, generated from the broker's one list of them).
import type { BrokerStats, ClusterNodeStats } from '@kbench/broker-native';
import type { BrokerNodeSample } from '@kbench/schema';

export class BrokerStatsMeter {
  private last = new Map<number, BrokerStats>();

  constructor(private readonly read: () => Promise<ClusterNodeStats[]>) {}

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
      const delta = (key: keyof BrokerStats): number => {
        const base = restarted || before === undefined ? 0 : before[key];
        return Math.max(0, stats[key] - base);
      };
      const fsyncs = delta('fsyncs');
      out.push({
        node: nodeId,
        bytesInPerSec: perSec(delta('bytesIn')),
        bytesOutPerSec: perSec(delta('bytesOut')),
        logSizeBytes: stats.logSizeBytes,
        fsyncs,
        fsyncMeanMs: fsyncs > 0 ? delta('fsyncMicrosTotal') / fsyncs / 1000 : null,
        fsyncMaxMs: stats.fsyncMicrosMax / 1000,
        underReplicated: stats.underReplicated,
        isrShrinks: delta('isrShrinks'),
        isrExpands: delta('isrExpands'),
        replicatedBytesPerSec: perSec(delta('replicatedBytes')),
      });
    }
    // A node that is down keeps its last counters, so that whether its counters restart from
    // zero or not, its first interval back is right.
    for (const n of now) this.last.set(n.nodeId, n.stats);
    return out;
  }
}
