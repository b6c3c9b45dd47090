// Topic creation for the benchmarks, with Kafka's own TopicCommand (the same tool against every target).
import { runKafkaTool } from '@kbench/apache-kafka';

/** Creates `topic` with `partitions`, and a replication factor and min.insync.replicas when given. */
export async function createTopic(
  bootstrap: string,
  topic: string,
  partitions: number,
  replication?: { factor: number; minIsr: number },
): Promise<void> {
  const args = [
    '--bootstrap-server',
    bootstrap,
    '--create',
    '--topic',
    topic,
    '--partitions',
    String(partitions),
  ];
  if (replication)
    args.push(
      '--replication-factor',
      String(replication.factor),
      '--config',
      `min.insync.replicas=${replication.minIsr}`,
    );
  const created = await runKafkaTool('org.apache.kafka.tools.TopicCommand', args, { timeoutMs: 120_000 });
  if (created.exitCode !== 0)
    throw new Error(`TopicCommand --create ${topic} failed: ${created.stdout}${created.stderr}`);
}
