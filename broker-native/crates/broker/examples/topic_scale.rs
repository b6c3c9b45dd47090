//! Measures the broker at many topics (the 2016 topic-count benchmark):
//! CreateTopics time, start-up time with the topics on disk, RSS, and
//! Metadata latency for one topic at 1 topic and at N topics.
//!
//! `cargo run --release --example topic_scale -- [N=120001] [BINARY=target/release/kbench-broker]`

use bytes::{Buf, BufMut, BytesMut};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{
    ApiKey, CreateTopicsRequest, CreateTopicsResponse, MetadataRequest, MetadataResponse,
    RequestHeader, ResponseHeader, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BATCH: usize = 1000;
const METADATA_SAMPLES: usize = 2000;

struct Conn {
    stream: TcpStream,
    correlation: i32,
}

impl Conn {
    fn call<Req: Encodable, Resp: Decodable>(
        &mut self,
        key: ApiKey,
        version: i16,
        req: &Req,
    ) -> Resp {
        self.correlation += 1;
        let mut header = RequestHeader::default();
        header.request_api_key = key as i16;
        header.request_api_version = version;
        header.correlation_id = self.correlation;
        header.client_id = Some(StrBytes::from_static_str("topic-scale"));
        let mut body = BytesMut::new();
        header
            .encode(&mut body, key.request_header_version(version))
            .unwrap();
        req.encode(&mut body, version).unwrap();
        let mut frame = BytesMut::with_capacity(body.len() + 4);
        frame.put_i32(body.len() as i32);
        frame.extend_from_slice(&body);
        self.stream.write_all(&frame).unwrap();
        let mut size = [0u8; 4];
        self.stream.read_exact(&mut size).unwrap();
        let mut buf = BytesMut::zeroed(i32::from_be_bytes(size) as usize);
        self.stream.read_exact(&mut buf).unwrap();
        let header =
            ResponseHeader::decode(&mut buf, key.response_header_version(version)).unwrap();
        assert_eq!(header.correlation_id, self.correlation);
        let resp = Resp::decode(&mut buf, version).unwrap();
        assert_eq!(buf.remaining(), 0);
        resp
    }
}

fn start(binary: &str, dir: &str) -> (Child, u16, Duration) {
    let started = Instant::now();
    let mut child = Command::new(binary)
        .args(["--port", "0", "--data-dir", dir])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn broker");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let took = started.elapsed();
    let port = line
        .split_whitespace()
        .nth(2)
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("unexpected line {line:?}"));
    (child, port, took)
}

fn stop(mut child: Child) {
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
}

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb / 1024.0
}

fn name(i: usize) -> String {
    format!("topic-{i:06}")
}

fn create(conn: &mut Conn, from: usize, to: usize) {
    let mut req = CreateTopicsRequest::default();
    req.timeout_ms = 60_000;
    req.topics = (from..to)
        .map(|i| {
            let mut t = CreatableTopic::default();
            t.name = TopicName(StrBytes::from_string(name(i)));
            t.num_partitions = 1;
            t.replication_factor = 1;
            t
        })
        .collect();
    let resp: CreateTopicsResponse = conn.call(ApiKey::CreateTopics, 7, &req);
    assert!(resp.topics.iter().all(|t| t.error_code == 0));
}

/// Median and p99 of Metadata for one named topic, in microseconds.
fn metadata_latency(conn: &mut Conn, topic: &str) -> (f64, f64) {
    let mut req = MetadataRequest::default();
    let mut t = MetadataRequestTopic::default();
    t.name = Some(TopicName(StrBytes::from_string(topic.to_string())));
    req.topics = Some(vec![t]);
    let mut samples: Vec<f64> = (0..METADATA_SAMPLES)
        .map(|_| {
            let at = Instant::now();
            let resp: MetadataResponse = conn.call(ApiKey::Metadata, 12, &req);
            assert_eq!(resp.topics[0].error_code, 0);
            at.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (
        samples[samples.len() / 2],
        samples[samples.len() * 99 / 100],
    )
}

fn all_topics(conn: &mut Conn) -> usize {
    let mut req = MetadataRequest::default();
    req.topics = None;
    let resp: MetadataResponse = conn.call(ApiKey::Metadata, 12, &req);
    resp.topics.len()
}

fn connect(port: u16) -> Conn {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_nodelay(true).unwrap();
    Conn {
        stream,
        correlation: 0,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().map_or(120_001, |v| v.parse().unwrap());
    let binary = args
        .next()
        .unwrap_or_else(|| "target/release/kbench-broker".to_string());
    let dir = std::env::temp_dir().join(format!("kbench-topic-scale-{}", std::process::id()));
    let dir_str = dir.to_str().unwrap().to_string();

    let (child, port, first_start) = start(&binary, &dir_str);
    let pid = child.id();
    println!(
        "start-up, empty data dir: {:.1} ms",
        first_start.as_secs_f64() * 1e3
    );
    let mut conn = connect(port);
    create(&mut conn, 0, 1);
    let (p50, p99) = metadata_latency(&mut conn, &name(0));
    println!("Metadata(one topic) at 1 topic: p50 {p50:.0} us, p99 {p99:.0} us");
    println!("RSS at 1 topic: {:.1} MiB", rss_mib(pid));

    let at = Instant::now();
    let mut from = 1;
    while from < count {
        let to = (from + BATCH).min(count);
        create(&mut conn, from, to);
        from = to;
    }
    let took = at.elapsed().as_secs_f64();
    println!(
        "CreateTopics {} topics in batches of {BATCH}: {took:.2} s ({:.0} topics/s)",
        count - 1,
        (count - 1) as f64 / took
    );
    let (p50, p99) = metadata_latency(&mut conn, &name(count / 2));
    println!("Metadata(one topic) at {count} topics: p50 {p50:.0} us, p99 {p99:.0} us");
    println!("RSS at {count} topics: {:.1} MiB", rss_mib(pid));
    drop(conn);
    stop(child);

    let (child, port, restart) = start(&binary, &dir_str);
    println!(
        "start-up with {count} topics on disk: {:.2} s",
        restart.as_secs_f64()
    );
    println!("RSS after restart: {:.1} MiB", rss_mib(child.id()));
    let mut conn = connect(port);
    assert_eq!(all_topics(&mut conn), count);
    let (p50, p99) = metadata_latency(&mut conn, &name(count - 1));
    println!("Metadata(one topic) after restart: p50 {p50:.0} us, p99 {p99:.0} us");
    drop(conn);
    stop(child);
    std::fs::remove_dir_all(&dir).unwrap();
}
