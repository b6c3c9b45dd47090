"""librdkafka through Python's confluent-kafka against a broker: create a topic, produce with
delivery reports, consume as a group, commit, and check counts, values and committed offsets.
Prints one JSON object on stdout; exits non-zero on any failure. Usage: <bootstrap> <topic> <count>"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
partitions = 3
group = f"{topic}-group"
report = {"librdkafka": __import__("confluent_kafka").libversion()[0]}

admin = AdminClient({"bootstrap.servers": bootstrap})
for name, future in admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)]).items():
    future.result(timeout=30)  # raises on a broker error
metadata = admin.list_topics(topic, timeout=30)
report["partitions"] = len(metadata.topics[topic].partitions)
# Every topic (a Metadata request with null topics: librdkafka 2.16 sends it 3 bytes longer than
# its body, which the broker once refused by closing the connection).
report["listedAll"] = topic in admin.list_topics(timeout=30).topics

delivered, failed = [], []


def on_delivery(error, message):
    (failed if error else delivered).append(str(error) if error else (message.partition(), message.offset()))


producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
for i in range(count):
    producer.produce(topic, key=f"key-{i}".encode(), value=f"value-{i}".encode(), on_delivery=on_delivery)
    producer.poll(0)
remaining = producer.flush(30)
report.update(delivered=len(delivered), failed=failed[:5], unflushed=remaining)


def consume(expected, timeout_s=60):
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe([topic])
    seen = []
    deadline = time.time() + timeout_s
    while len(seen) < expected and time.time() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        if message.error():
            raise KafkaException(message.error())
        seen.append((message.key().decode(), message.value().decode()))
    if seen:
        consumer.commit(asynchronous=False)
    assignment = [TopicPartition(topic, p) for p in range(partitions)]
    committed = consumer.committed(assignment, timeout=30)
    consumer.close()
    return seen, sum(max(tp.offset, 0) for tp in committed)


records, committed = consume(count)
report["consumed"] = len(records)
report["distinct"] = len(set(records))
report["valuesMatchKeys"] = all(key.split("-")[1] == value.split("-")[1] for key, value in records)
report["expectedValues"] = set(records) == {(f"key-{i}", f"value-{i}") for i in range(count)}
report["committed"] = committed

# A second member of the same group starts from the committed offsets: nothing left to read.
again, _ = consume(1, timeout_s=8)
report["consumedAfterCommit"] = len(again)

print(json.dumps(report))
ok = (
    report["delivered"] == count and not failed and remaining == 0 and report["consumed"] == count
    and report["expectedValues"] and report["committed"] == count and report["consumedAfterCommit"] == 0
)
sys.exit(0 if ok else 1)
