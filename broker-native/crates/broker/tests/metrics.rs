//! `GET /metrics` over real sockets: the exposition parses, its figures
//! move after a produce, a cluster labels each node, and hostile clients
//! (a huge head, one that trickles, too many at once) are bounded.

mod prometheus_text;

use bytes::BytesMut;
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{ProduceRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::*;
use kbench_broker_core::launcher::{Cluster, ClusterSpec};
use kbench_broker_core::metrics::{MAX_CONNECTIONS, MAX_HEAD_BYTES};
use kbench_broker_core::{start, BrokerConfig, BrokerHandle};
use kbench_client::ConnectOptions;
use kbench_client::SimpleClient;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn broker(dir: &std::path::Path) -> BrokerHandle {
    let mut config = BrokerConfig::new(dir);
    config.metrics = Some("127.0.0.1:0".into());
    start(config).await.unwrap()
}

/// Sends `request` and reads the whole answer (the server closes after it).
async fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut out))
        .await
        .expect("the server answers and closes")
        .unwrap();
    String::from_utf8(out).unwrap()
}

/// The status line and the body of a scrape.
async fn scrape(addr: SocketAddr) -> (String, String) {
    let answer = exchange(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").await;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

async fn samples(addr: SocketAddr) -> prometheus_text::Samples {
    let (head, body) = scrape(addr).await;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(
        head.contains("Content-Type: text/plain; version=0.0.4"),
        "{head}"
    );
    prometheus_text::parse(&body).unwrap_or_else(|e| panic!("{e}\n{body}"))
}

fn batch(count: usize) -> bytes::Bytes {
    let records: Vec<Record> = (0..count)
        .map(|i| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: 0,
            timestamp: 0,
            key: None,
            value: Some(bytes::Bytes::from_static(b"hello")),
            headers: IndexMap::new(),
        })
        .collect();
    let mut out = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut out,
        &records,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    out.freeze()
}

async fn produce(port: u16, topic: &str, count: usize) {
    let options = ConnectOptions::new(StrBytes::from_static_str("metrics-test"));
    let mut client = SimpleClient::connect(&format!("127.0.0.1:{port}"), &options)
        .await
        .unwrap();
    let mut data = PartitionProduceData::default();
    data.records = Some(batch(count));
    let mut t = TopicProduceData::default();
    t.name = TopicName(StrBytes::from_string(topic.into()));
    t.partition_data = vec![data];
    let mut req = ProduceRequest::default();
    req.acks = 1;
    req.timeout_ms = 5000;
    req.topic_data = vec![t];
    let response = client.call(7, &req).await.unwrap();
    assert_eq!(response.responses[0].partition_responses[0].error_code, 0);
}

#[tokio::test]
async fn the_exposition_parses_and_moves_after_a_produce() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker.broker().log.create_topic("t", 3, false).unwrap();
    let addr = broker.metrics_addr().unwrap();
    let before = samples(addr).await;
    assert_eq!(before["kbench_broker_records_in_total{node=\"1\"}"], 0.0);
    assert_eq!(before["kbench_broker_partitions{node=\"1\"}"], 3.0);
    assert!(before["process_resident_memory_bytes"] > 0.0);
    assert!(before.contains_key("process_cpu_seconds_total"));
    assert!(before.contains_key("kbench_broker_under_replicated{node=\"1\"}"));

    produce(broker.port(), "t", 5).await;
    let after = samples(addr).await;
    assert_eq!(after["kbench_broker_records_in_total{node=\"1\"}"], 5.0);
    assert_eq!(
        after["kbench_broker_produce_requests_total{node=\"1\"}"],
        1.0
    );
    assert!(
        after["kbench_broker_bytes_in_total{node=\"1\"}"]
            > before["kbench_broker_bytes_in_total{node=\"1\"}"]
    );
    assert!(after["kbench_broker_log_size_bytes{node=\"1\"}"] > 0.0);
    broker.stop().await.unwrap();
    // Stopped with the broker.
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn every_field_of_the_stats_list_is_exposed() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let (_, body) = scrape(broker.metrics_addr().unwrap()).await;
    let families = body
        .lines()
        .filter(|l| l.starts_with("# TYPE kbench_broker_"))
        .count();
    // A struct's Debug names each field once: the exposition has one family per field.
    let debug = format!("{:?}", broker.stats());
    assert_eq!(families, debug.matches(": ").count(), "{body}");
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn other_paths_methods_and_versions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let addr = broker.metrics_addr().unwrap();
    let not_found = exchange(addr, b"GET / HTTP/1.1\r\n\r\n").await;
    assert!(not_found.starts_with("HTTP/1.1 404 "), "{not_found}");
    let post = exchange(addr, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").await;
    assert!(post.starts_with("HTTP/1.1 405 "), "{post}");
    assert!(post.contains("\r\nAllow: GET, HEAD\r\n"), "{post}");
    let garbage = exchange(addr, b"\x16\x03\x01 hello\r\n\r\n").await;
    assert!(garbage.starts_with("HTTP/1.1 400 "), "{garbage}");
    let head = exchange(addr, b"HEAD /metrics?x=1 HTTP/1.0\r\n\r\n").await;
    assert!(
        head.starts_with("HTTP/1.1 200 ") && head.ends_with("\r\n\r\n"),
        "{head}"
    );
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn a_head_that_fills_the_bound_without_ending_gets_431() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let addr = broker.metrics_addr().unwrap();
    // Exactly the bound, so the server has read every byte when it closes
    // (unread bytes would turn its close into a reset that hides the answer).
    let mut request = b"GET /metrics HTTP/1.1\r\nX-Big: ".to_vec();
    request.resize(MAX_HEAD_BYTES, b'a');
    let answer = exchange(addr, &request).await;
    assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn a_client_that_trickles_its_head_is_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(broker.metrics_addr().unwrap())
        .await
        .unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\n")
        .await
        .unwrap();
    // One header byte a second, never ending the head: the server closes
    // without answering (its head timeout), and this loop sees it.
    let mut buf = [0u8; 256];
    let closed = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if stream.write_all(b"X").await.is_err() {
                return 0;
            }
            tokio::select! {
                read = stream.read(&mut buf) => return read.unwrap_or(0),
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    })
    .await
    .expect("the server closes a head that never ends");
    assert_eq!(closed, 0, "no answer, just a close");
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn connections_over_the_cap_are_closed_and_the_rest_still_served() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let addr = broker.metrics_addr().unwrap();
    let mut idle = Vec::new();
    for _ in 0..MAX_CONNECTIONS {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    let mut over = TcpStream::connect(addr).await.unwrap();
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(30), over.read(&mut buf))
        .await
        .expect("closed")
        .unwrap_or(0);
    assert_eq!(n, 0, "over the cap: closed without a word");
    drop(idle);
    // Slots free as the idle connections go: a scrape gets through again.
    let served = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let answer = exchange(addr, b"GET /metrics HTTP/1.1\r\n\r\n").await;
            if answer.starts_with("HTTP/1.1 200 ") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        served.is_ok(),
        "a scrape is served once the idle connections are gone"
    );
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn a_cluster_serves_each_node_under_its_label() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = ClusterSpec::new(3, dir.path());
    spec.metrics = Some("127.0.0.1:0".into());
    let cluster = Cluster::start(spec).await.unwrap();
    let found = samples(cluster.metrics_addr().unwrap()).await;
    for node in 1..=3 {
        assert!(
            found.contains_key(&format!(
                "kbench_broker_under_replicated{{node=\"{node}\"}}"
            )),
            "node {node}"
        );
        assert!(found.contains_key(&format!("kbench_broker_connections{{node=\"{node}\"}}")));
    }
    cluster.kill(2).await.unwrap();
    let found = samples(cluster.metrics_addr().unwrap()).await;
    assert!(
        !found.contains_key("kbench_broker_connections{node=\"2\"}"),
        "a killed node is left out"
    );
    cluster.stop().await.unwrap();
}

#[tokio::test]
async fn a_taken_metrics_address_fails_the_start_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut config = BrokerConfig::new(dir.path());
    config.metrics = Some(taken.local_addr().unwrap().to_string());
    let err = start(config).await.err().expect("refused");
    assert!(err.to_string().contains("metrics"), "{err}");
}
