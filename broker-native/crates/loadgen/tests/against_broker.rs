//! End to end against our broker started in-process: produce with every compression and acks
//! setting, then consume everything back and check the counts.

use std::time::Duration;

use kbench_broker_core::{BrokerConfig, BrokerHandle};
use kbench_loadgen::{
    Compression, Consumer, ConsumerConfig, Keys, Producer, ProducerConfig, Size, StartAt,
};

const RECORDS: u64 = 100_000;
const PARTITIONS: i32 = 6;

async fn broker(dir: &std::path::Path) -> BrokerHandle {
    kbench_broker_core::start(BrokerConfig::new(dir))
        .await
        .unwrap()
}

fn bootstrap(broker: &BrokerHandle) -> Vec<String> {
    vec![format!("127.0.0.1:{}", broker.port())]
}

fn producer_config(broker: &BrokerHandle, topic: &str) -> ProducerConfig {
    ProducerConfig {
        bootstrap: bootstrap(broker),
        topics: vec![topic.to_string()],
        acks: 1,
        message_size: Size::Fixed(100),
        keys: Keys::None,
        compression: Compression::None,
        batch_size: 16 * 1024,
        linger_ms: 0,
        max_in_flight: 5,
        idempotence: false,
        rate: None,
        records: Some(RECORDS),
        duration: None,
        clock_offset_micros: 0.0,
    }
}

/// Produces `config.records` and returns how many were acknowledged (per the stats).
async fn produce(config: ProducerConfig) -> u64 {
    let producer = Producer::start(config).await.unwrap();
    producer.finished().await;
    let stats = producer.take_interval();
    assert_eq!(stats.errors, 0, "{:?}", producer.last_error());
    stats.records
}

/// Consumes from the earliest offset until `expected` records arrived; returns (records, bytes,
/// latencies recorded).
async fn consume(broker: &BrokerHandle, topic: &str, expected: u64) -> (u64, u64, u64) {
    let consumer = Consumer::start(ConsumerConfig {
        bootstrap: bootstrap(broker),
        topics: vec![topic.to_string()],
        start: StartAt::Earliest,
        group_id: "g".into(),
        clock_offset_micros: 0.0,
    })
    .await
    .unwrap();
    let (mut records, mut bytes, mut latencies) = (0, 0, 0);
    // A guard against hanging, not a timing assertion.
    for _ in 0..600 {
        let stats = consumer.take_interval();
        assert_eq!(stats.errors, 0, "{:?}", consumer.last_error());
        records += stats.records;
        bytes += stats.value_bytes;
        latencies += stats.latency.count;
        if records >= expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // One more look: nothing beyond what was produced arrives.
    tokio::time::sleep(Duration::from_millis(300)).await;
    records += consumer.take_interval().records;
    consumer.stop().await;
    (records, bytes, latencies)
}

async fn round_trip(compression: Compression, acks: i16) {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker
        .broker()
        .log
        .create_topic("t", PARTITIONS, false)
        .unwrap();
    let config = ProducerConfig {
        compression,
        acks,
        ..producer_config(&broker, "t")
    };
    let acked = produce(config).await;
    assert_eq!(acked, RECORDS);
    let (records, bytes, latencies) = consume(&broker, "t", RECORDS).await;
    assert_eq!(records, RECORDS, "{compression:?} acks={acks}");
    assert_eq!(bytes, RECORDS * 100);
    assert_eq!(latencies, RECORDS);
    broker.stop().await.unwrap();
}

macro_rules! round_trips {
    ($($name:ident: $compression:expr, $acks:expr;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            round_trip($compression, $acks).await;
        }
    )*};
}

round_trips! {
    none_acks_0: Compression::None, 0;
    none_acks_1: Compression::None, 1;
    none_acks_all: Compression::None, -1;
    gzip_acks_0: Compression::Gzip, 0;
    gzip_acks_1: Compression::Gzip, 1;
    gzip_acks_all: Compression::Gzip, -1;
    snappy_acks_0: Compression::Snappy, 0;
    snappy_acks_1: Compression::Snappy, 1;
    snappy_acks_all: Compression::Snappy, -1;
    lz4_acks_0: Compression::Lz4, 0;
    lz4_acks_1: Compression::Lz4, 1;
    lz4_acks_all: Compression::Lz4, -1;
    zstd_acks_0: Compression::Zstd, 0;
    zstd_acks_1: Compression::Zstd, 1;
    zstd_acks_all: Compression::Zstd, -1;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_producer_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker
        .broker()
        .log
        .create_topic("t", PARTITIONS, false)
        .unwrap();
    let config = ProducerConfig {
        acks: -1,
        idempotence: true,
        ..producer_config(&broker, "t")
    };
    assert_eq!(produce(config).await, RECORDS);
    assert_eq!(consume(&broker, "t", RECORDS).await.0, RECORDS);
    broker.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_fixed_rate_records_spread_over_two_topics() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker.broker().log.create_topic("a", 3, false).unwrap();
    broker.broker().log.create_topic("b", 2, false).unwrap();
    let config = ProducerConfig {
        topics: vec!["a".into(), "b".into()],
        keys: Keys::RoundRobin(10),
        message_size: Size::Uniform { min: 4, max: 300 },
        rate: Some(20_000.0),
        records: Some(10_000),
        linger_ms: 2,
        ..producer_config(&broker, "a")
    };
    assert_eq!(produce(config).await, 10_000);
    let consumer = Consumer::start(ConsumerConfig {
        bootstrap: bootstrap(&broker),
        topics: vec!["a".into(), "b".into()],
        start: StartAt::Earliest,
        group_id: "g".into(),
        clock_offset_micros: 0.0,
    })
    .await
    .unwrap();
    assert_eq!(consumer.assignment().len(), 5);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(consumer.take_interval().records, 10_000);
    consumer.stop().await;
    broker.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latest_consumer_sees_only_later_records() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker.broker().log.create_topic("t", 2, false).unwrap();
    let before = ProducerConfig {
        records: Some(1000),
        ..producer_config(&broker, "t")
    };
    produce(before.clone()).await;
    let consumer = Consumer::start(ConsumerConfig {
        bootstrap: bootstrap(&broker),
        topics: vec!["t".into()],
        start: StartAt::Latest,
        group_id: "g".into(),
        clock_offset_micros: 0.0,
    })
    .await
    .unwrap();
    produce(ProducerConfig {
        records: Some(500),
        ..before
    })
    .await;
    let mut seen = 0;
    for _ in 0..100 {
        seen += consumer.take_interval().records;
        if seen >= 500 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    seen += consumer.take_interval().records;
    assert_eq!(seen, 500);
    consumer.stop().await;
    broker.stop().await.unwrap();
}

/// The smallest end-to-end latency (µs, its bucket's floor: within 1/1024) a consumer with `consumer_offset` sees for records a
/// producer with `producer_offset` stamps.
async fn smallest_e2e_latency(producer_offset: f64, consumer_offset: f64) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker.broker().log.create_topic("t", 1, false).unwrap();
    produce(ProducerConfig {
        records: Some(2000),
        clock_offset_micros: producer_offset,
        ..producer_config(&broker, "t")
    })
    .await;
    let consumer = Consumer::start(ConsumerConfig {
        bootstrap: bootstrap(&broker),
        topics: vec!["t".into()],
        start: StartAt::Earliest,
        group_id: "g".into(),
        clock_offset_micros: consumer_offset,
    })
    .await
    .unwrap();
    let mut latency = kbench_loadgen::HistogramSnapshot::default();
    for _ in 0..100 {
        latency.merge(&consumer.take_interval().latency);
        if latency.count >= 2000 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    consumer.stop().await;
    broker.stop().await.unwrap();
    assert_eq!(latency.count, 2000);
    kbench_loadgen::histogram::bucket_floor(latency.buckets[0] as usize)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clock_offsets_move_the_stamp_and_the_receive_time_onto_one_timeline() {
    // Both run on one real clock here. A producer told its clock is 3 s ahead of the controller's
    // (offset +3 s) stamps each send time 3 s earlier, on the controller's timeline: a consumer
    // told its clock is the controller's (offset 0) sees every record at least 3 s late.
    assert!(smallest_e2e_latency(3e6, 0.0).await >= 2_997_000);
    // A consumer told the same offset as the producer: the corrections cancel.
    assert!(smallest_e2e_latency(3e6, 3e6).await < 2_997_000);
}
