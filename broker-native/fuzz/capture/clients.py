#!/usr/bin/env python3
"""librdkafka (confluent-kafka) as a client of the capture proxy: produce
(plain, idempotent, compressed), a consumer group with commits, and the
admin requests the broker implements. Usage: clients.py HOST:PORT"""

import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)

BOOTSTRAP = sys.argv[1]
TIMEOUT = 15


def attempt(what, call):
    """Runs one client call; a failure is printed, and the capture goes on."""
    try:
        call()
    except KafkaException as e:
        print(f"  {what} failed: {e}")


def wait(futures):
    for future in futures.values():
        try:
            future.result(timeout=TIMEOUT)
        except KafkaException as e:
            print(f"  (broker said: {e})")


def admin_requests(admin):
    wait(admin.create_topics([NewTopic("py-admin", 2, 1), NewTopic("py-gone", 1, 1)]))
    wait(admin.create_partitions([NewPartitions("py-admin", 3)]))
    topic = ConfigResource(ConfigResource.Type.TOPIC, "py-admin")
    wait(admin.describe_configs([topic]))
    wait(admin.alter_configs([ConfigResource(ConfigResource.Type.TOPIC, "py-admin",
                                             set_config={"retention.ms": "3600000"})]))
    wait(admin.incremental_alter_configs([ConfigResource(
        ConfigResource.Type.TOPIC, "py-admin",
        incremental_configs=[ConfigEntry("segment.bytes", "1048576",
                                         incremental_operation=AlterConfigOpType.SET)])]))
    wait(admin.describe_configs([ConfigResource(ConfigResource.Type.BROKER, "1")]))
    attempt("describe_cluster",
            lambda: admin.describe_cluster(include_authorized_operations=False).result(timeout=TIMEOUT))
    attempt("list_topics", lambda: admin.list_topics(timeout=TIMEOUT))
    wait(admin.delete_topics(["py-gone"]))


def produce(topic, **config):
    producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 5, **config})
    for i in range(20):
        producer.produce(topic, key=f"k{i % 3}", value=f"value {i} " * (i % 4 + 1),
                         partition=i % 2, headers=[("h", b"v")] if i % 5 == 0 else None)
    producer.flush(TIMEOUT)


def consume_group(topic, group):
    consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    consumer.subscribe([topic])
    seen = 0
    deadline = time.time() + 20
    while seen < 20 and time.time() < deadline:
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            seen += 1
            if seen % 5 == 0:
                consumer.commit(message=message, asynchronous=False)
    time.sleep(1.5)  # a few heartbeats
    consumer.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=TIMEOUT)
    low_high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=TIMEOUT)
    consumer.offsets_for_times([TopicPartition(topic, 0, 1)], timeout=TIMEOUT)
    consumer.close()
    print(f"  consumed {seen}, partition 0 watermarks {low_high}")


def group_admin(admin, group, topic):
    admin.list_consumer_groups().result(timeout=TIMEOUT)
    wait(admin.describe_consumer_groups([group]))
    admin.list_offsets({TopicPartition(topic, 0): OffsetSpec.latest(),
                        TopicPartition(topic, 1): OffsetSpec.earliest()})
    for future in admin.list_consumer_group_offsets(
            [__import__("confluent_kafka").ConsumerGroupTopicPartitions(group)]).values():
        future.result(timeout=TIMEOUT)


def main():
    admin = AdminClient({"bootstrap.servers": BOOTSTRAP})
    admin_requests(admin)
    wait(admin.create_topics([NewTopic("py-t", 2, 1)]))
    produce("py-t")
    produce("py-t", **{"enable.idempotence": True, "acks": "all"})
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        produce("py-t", **{"compression.codec": codec})
    attempt("consumer group", lambda: consume_group("py-t", "py-group"))
    attempt("group admin", lambda: group_admin(admin, "py-group", "py-t"))


if __name__ == "__main__":
    main()
