//! Native consumers as consumer-group members, against our broker started in-process: they split
//! partitions without overlap, rebalance when members come and go, and commit their offsets.

use std::collections::BTreeSet;
use std::time::Duration;

use kbench_broker_core::{BrokerConfig, BrokerHandle};
use kbench_loadgen::group::committed_offsets;
use kbench_loadgen::{
    Compression, Consumer, ConsumerConfig, Keys, Producer, ProducerConfig, Size, StartAt,
};

async fn broker(dir: &std::path::Path) -> BrokerHandle {
    kbench_broker_core::start(BrokerConfig::new(dir))
        .await
        .unwrap()
}

fn bootstrap(broker: &BrokerHandle) -> Vec<String> {
    vec![format!("127.0.0.1:{}", broker.port())]
}

fn producer_config(broker: &BrokerHandle, topic: &str, records: u64) -> ProducerConfig {
    ProducerConfig {
        bootstrap: bootstrap(broker),
        topics: vec![topic.to_string()],
        acks: 1,
        message_size: Size::Fixed(100),
        keys: Keys::RoundRobin(60),
        compression: Compression::None,
        batch_size: 16 * 1024,
        linger_ms: 0,
        max_in_flight: 5,
        idempotence: false,
        rate: None,
        records: Some(records),
        duration: None,
        clock_offset_micros: 0.0,
    }
}

fn consumer_config(broker: &BrokerHandle, topic: &str, group: &str) -> ConsumerConfig {
    ConsumerConfig {
        bootstrap: bootstrap(broker),
        topics: vec![topic.to_string()],
        start: StartAt::Earliest,
        group_id: group.to_string(),
        clock_offset_micros: 0.0,
    }
}

/// Waits until the members' assignments are disjoint and cover `partitions` partitions, each
/// member holding `each` of them; returns the assignments.
async fn settled(
    consumers: &[&Consumer],
    partitions: usize,
    each: usize,
) -> Vec<Vec<(String, i32)>> {
    let mut last = vec![];
    // A guard against hanging, not a timing assertion.
    for _ in 0..300 {
        last = consumers.iter().map(|c| c.assignment()).collect::<Vec<_>>();
        let all: Vec<_> = last.iter().flatten().cloned().collect();
        let distinct: BTreeSet<_> = all.iter().cloned().collect();
        if all.len() == partitions
            && distinct.len() == partitions
            && last.iter().all(|a| a.len() == each)
        {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("assignments never settled: {last:?}");
}

/// Reads from `consumers` until `expected` records arrived in all, then a little longer; returns
/// the total.
async fn drain(consumers: &[&Consumer], counted: &mut u64, expected: u64) -> u64 {
    for _ in 0..300 {
        for c in consumers {
            let stats = c.take_interval();
            assert_eq!(stats.errors, 0, "{:?}", c.last_error());
            *counted += stats.records;
        }
        if *counted >= expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    for c in consumers {
        *counted += c.take_interval().records;
    }
    *counted
}

async fn produce(config: ProducerConfig) {
    let producer = Producer::start(config).await.unwrap();
    producer.finished().await;
    assert_eq!(
        producer.take_interval().errors,
        0,
        "{:?}",
        producer.last_error()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_members_split_six_partitions_and_read_every_record_once() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker.broker().log.create_topic("t", 6, false).unwrap();
    produce(producer_config(&broker, "t", 60_000)).await;
    let (a, b) = tokio::join!(
        Consumer::start(consumer_config(&broker, "t", "g")),
        Consumer::start(consumer_config(&broker, "t", "g")),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let assignments = settled(&[&a, &b], 6, 3).await;
    // The range assignor gives each a contiguous half.
    let mut halves: Vec<Vec<i32>> = assignments
        .iter()
        .map(|a| a.iter().map(|(_, p)| *p).collect())
        .collect();
    halves.sort();
    assert_eq!(halves, vec![vec![0, 1, 2], vec![3, 4, 5]]);
    let mut counted = 0;
    assert_eq!(drain(&[&a, &b], &mut counted, 60_000).await, 60_000);
    a.stop().await;
    b.stop().await;
    broker.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_joining_and_leaving_rebalance_and_keep_every_partition_covered() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker.broker().log.create_topic("t", 6, false).unwrap();
    let a = Consumer::start(consumer_config(&broker, "t", "g"))
        .await
        .unwrap();
    let b = Consumer::start(consumer_config(&broker, "t", "g"))
        .await
        .unwrap();
    settled(&[&a, &b], 6, 3).await;
    // Records keep coming while the group changes under them.
    let producer = Producer::start(ProducerConfig {
        rate: Some(10_000.0),
        ..producer_config(&broker, "t", 40_000)
    })
    .await
    .unwrap();
    let mut counted = 0;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let c = Consumer::start(consumer_config(&broker, "t", "g"))
        .await
        .unwrap();
    settled(&[&a, &b, &c], 6, 2).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    counted += a.take_interval().records;
    a.stop().await;
    counted += a.take_interval().records;
    settled(&[&b, &c], 6, 3).await;
    producer.finished().await;
    assert_eq!(producer.take_interval().errors, 0);
    // Every record once: the partitions that moved continued from the committed offsets.
    assert_eq!(drain(&[&b, &c], &mut counted, 40_000).await, 40_000);
    b.stop().await;
    c.stop().await;
    broker.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_offsets_are_visible_through_offset_fetch_after_stop() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker.broker().log.create_topic("t", 3, false).unwrap();
    produce(producer_config(&broker, "t", 9_000)).await;
    let consumer = Consumer::start(consumer_config(&broker, "t", "committer"))
        .await
        .unwrap();
    let mut counted = 0;
    assert_eq!(drain(&[&consumer], &mut counted, 9_000).await, 9_000);
    consumer.stop().await;
    assert_eq!(
        consumer.take_interval().errors,
        0,
        "{:?}",
        consumer.last_error()
    );
    let committed = committed_offsets(&bootstrap(&broker), "committer", &["t".to_string()])
        .await
        .unwrap();
    assert_eq!(committed.len(), 3, "{committed:?}");
    assert_eq!(committed.iter().map(|(_, _, o)| o).sum::<i64>(), 9_000);
    // A new member of the group starts where the last one stopped: nothing left to read.
    let again = Consumer::start(consumer_config(&broker, "t", "committer"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(again.take_interval().records, 0);
    again.stop().await;
    broker.stop().await.unwrap();
}
