//! A fixed amount of work for timing the whole process (the engine's cost per response):
//! `cargo run --release -p kbench-loadgen --example produce_consume -- HOST:PORT [records]
//! [compression]` produces `records` 100-byte records to a fresh 6-partition topic, then reads
//! them all back in a consumer group, and exits. Every produce and fetch response goes through the
//! response path, so a slower decode shows as more CPU time for the same records.

use std::time::{Duration, Instant};

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{CreateTopicsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kbench_loadgen::metadata::MetadataClient;
use kbench_loadgen::{
    Compression, Consumer, ConsumerConfig, Keys, Producer, ProducerConfig, Size, StartAt,
};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bootstrap = vec![args.first().cloned().unwrap_or("127.0.0.1:9092".into())];
    let records: u64 = args.get(1).map_or(2_000_000, |a| a.parse().unwrap());
    let compression = match args.get(2).map(String::as_str) {
        None | Some("none") => Compression::None,
        Some("lz4") => Compression::Lz4,
        Some("zstd") => Compression::Zstd,
        Some("gzip") => Compression::Gzip,
        Some("snappy") => Compression::Snappy,
        Some(other) => panic!("unknown compression {other}"),
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let topic = format!("produce-consume-{nanos}");

    let mut admin = MetadataClient::connect(&bootstrap).await.unwrap();
    let create = CreateTopicsRequest::default()
        .with_timeout_ms(10_000)
        .with_topics(vec![CreatableTopic::default()
            .with_name(TopicName(StrBytes::from_string(topic.clone())))
            .with_num_partitions(6)
            .with_replication_factor(1)]);
    admin.call(&create).await.unwrap();

    let start = Instant::now();
    let producer = Producer::start(ProducerConfig {
        bootstrap: bootstrap.clone(),
        topics: vec![topic.clone()],
        acks: 1,
        message_size: Size::Fixed(100),
        keys: Keys::None,
        compression,
        batch_size: 16 * 1024,
        linger_ms: 0,
        max_in_flight: 5,
        idempotence: false,
        rate: None,
        records: Some(records),
        duration: None,
        clock_offset_micros: 0.0,
    })
    .await
    .unwrap();
    producer.finished().await;
    let produced = producer.take_interval();
    producer.stop().await;
    let produce_secs = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let consumer = Consumer::start(ConsumerConfig {
        bootstrap,
        topics: vec![topic],
        start: StartAt::Earliest,
        group_id: format!("produce-consume-{nanos}"),
        clock_offset_micros: 0.0,
    })
    .await
    .unwrap();
    let mut consumed = 0;
    let mut errors = produced.errors;
    while consumed < produced.records {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let stats = consumer.take_interval();
        consumed += stats.records;
        errors += stats.errors;
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "consumed {consumed} only"
        );
    }
    consumer.stop().await;
    println!(
        "produced {} in {produce_secs:.2} s, consumed {consumed} in {:.2} s, errors {errors}",
        produced.records,
        start.elapsed().as_secs_f64()
    );
}
