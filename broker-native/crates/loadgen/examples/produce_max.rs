//! Closed-loop producer throughput against a running broker, for profiling:
//! `cargo run --release -p kbench-loadgen --example produce_max -- HOST:PORT [batch KiB] [linger ms]
//! [producers] [seconds] [partitions] [acks]`. Creates the topic `produce-max` if missing.

use std::time::{Duration, Instant};

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{CreateTopicsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kbench_loadgen::metadata::MetadataClient;
use kbench_loadgen::{Compression, Keys, Producer, ProducerConfig, Size};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.to_string());
    let bootstrap = vec![arg(0, "127.0.0.1:9092")];
    let batch_kib: u32 = arg(1, "16").parse().unwrap();
    let linger_ms: u32 = arg(2, "0").parse().unwrap();
    let producers: usize = arg(3, "1").parse().unwrap();
    let seconds: u64 = arg(4, "10").parse().unwrap();
    let partitions: i32 = arg(5, "6").parse().unwrap();
    let acks: i16 = arg(6, "1").parse().unwrap();
    let topic = format!("produce-max-{partitions}");

    let mut admin = MetadataClient::connect(&bootstrap).await.unwrap();
    let create = CreateTopicsRequest::default()
        .with_timeout_ms(10_000)
        .with_topics(vec![CreatableTopic::default()
            .with_name(TopicName(StrBytes::from_string(topic.clone())))
            .with_num_partitions(partitions)
            .with_replication_factor(1)]);
    let _ = admin.call(&create).await.unwrap(); // TOPIC_ALREADY_EXISTS is fine

    let config = ProducerConfig {
        bootstrap,
        topics: vec![topic],
        acks,
        message_size: Size::Fixed(100),
        keys: Keys::None,
        compression: Compression::None,
        batch_size: batch_kib * 1024,
        linger_ms,
        max_in_flight: 5,
        idempotence: false,
        rate: None,
        records: None,
        duration: Some(Duration::from_secs(seconds)),
        clock_offset_micros: 0.0,
    };
    let mut running = vec![];
    for _ in 0..producers {
        running.push(Producer::start(config.clone()).await.unwrap());
    }
    let start = Instant::now();
    let (mut records, mut errors) = (0u64, 0u64);
    let mut max_latencies = vec![];
    for second in 1..=seconds {
        tokio::time::sleep_until((start + Duration::from_secs(second)).into()).await;
        let mut this = 0;
        for p in &running {
            let s = p.take_interval();
            this += s.records;
            errors += s.errors;
            if second > 2 {
                max_latencies.push(s.latency.max);
            }
        }
        if second > 2 {
            records += this; // the first two seconds are warm-up
        }
        println!("{second:>3}s {this:>10} rec/s");
    }
    for p in &running {
        p.stop().await;
    }
    let measured = seconds.saturating_sub(2).max(1);
    println!(
        "batch {batch_kib} KiB, linger {linger_ms} ms, {producers} producer(s), acks {acks}: {:.0} rec/s \
         ({:.1} MB/s of values), errors {errors}, max latency per second (µs) {max_latencies:?}",
        records as f64 / measured as f64,
        records as f64 * 100.0 / measured as f64 / 1e6
    );
}
