// kafkajs as a client of the capture proxy: produce, a consumer group
// (join, sync, heartbeats, commits, leave) and admin requests.
// Usage: node clients.cjs HOST:PORT
const { Kafka, logLevel, CompressionTypes } = require('kafkajs');

const kafka = new Kafka({
  clientId: 'kbench-capture',
  brokers: [process.argv[2]],
  logLevel: logLevel.NOTHING,
});

async function admin() {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'js-t', numPartitions: 2 }, { topic: 'js-gone' }] });
  await admin.createPartitions({ topicPartitions: [{ topic: 'js-t', count: 3 }] });
  await admin.describeConfigs({ resources: [{ type: 2, name: 'js-t' }], includeSynonyms: false });
  await admin.alterConfigs({
    resources: [{ type: 2, name: 'js-t', configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
  });
  await admin.fetchTopicMetadata({ topics: ['js-t'] });
  await admin.describeCluster();
  await admin.deleteTopics({ topics: ['js-gone'] });
  return admin;
}

async function produce() {
  const producer = kafka.producer();
  await producer.connect();
  for (let i = 0; i < 5; i++) {
    await producer.send({
      topic: 'js-t',
      messages: [{ key: `k${i}`, value: `value ${i}`, headers: { h: 'v' } }, { value: 'x'.repeat(i * 10) }],
    });
  }
  await producer.send({ topic: 'js-t', compression: CompressionTypes.GZIP, messages: [{ value: 'gzip' }] });
  await producer.send({ topic: 'js-t', acks: 1, messages: [{ value: 'acks=1' }] });
  await producer.disconnect();
  const idempotent = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await idempotent.connect();
  await idempotent.send({ topic: 'js-t', acks: -1, messages: [{ value: 'idempotent' }, { value: 'twice' }] });
  await idempotent.disconnect();
}

async function consume() {
  const consumer = kafka.consumer({ groupId: 'js-group', heartbeatInterval: 300, sessionTimeout: 6000 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'js-t', fromBeginning: true });
  let seen = 0;
  await consumer.run({
    eachMessage: async () => {
      seen += 1;
    },
  });
  const deadline = Date.now() + 20_000;
  while (seen < 12 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  await new Promise((r) => setTimeout(r, 1500));
  await consumer.disconnect();
  console.log(`  consumed ${seen}`);
}

async function main() {
  const a = await admin();
  await produce();
  await consume();
  await a.fetchOffsets({ groupId: 'js-group', topics: ['js-t'] });
  await a.fetchTopicOffsets('js-t');
  await a.fetchTopicOffsetsByTimestamp('js-t', 1);
  await a.listGroups();
  await a.describeGroups(['js-group']);
  await a.disconnect();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
