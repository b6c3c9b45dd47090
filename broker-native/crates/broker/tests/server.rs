//! The server over real sockets: bad frames close only their connection.

use bytes::{BufMut, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use kbench_broker_core::{start, BrokerConfig, BrokerHandle};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn broker(dir: &std::path::Path) -> BrokerHandle {
    let mut config = BrokerConfig::new(dir);
    config.limits.max_frame_bytes = 1024;
    start(config).await.unwrap()
}

fn api_versions_frame(version: i16, correlation_id: i32) -> BytesMut {
    let mut header = RequestHeader::default();
    header.request_api_key = ApiKey::ApiVersions as i16;
    header.request_api_version = version;
    header.correlation_id = correlation_id;
    header.client_id = Some(StrBytes::from_static_str("test"));
    let mut body = BytesMut::new();
    header
        .encode(
            &mut body,
            ApiKey::ApiVersions.request_header_version(version),
        )
        .unwrap();
    let mut req = ApiVersionsRequest::default();
    req.client_software_name = StrBytes::from_static_str("test");
    req.client_software_version = StrBytes::from_static_str("1");
    req.encode(&mut body, version.min(3)).unwrap();
    let mut frame = BytesMut::new();
    frame.put_i32(body.len() as i32);
    frame.extend_from_slice(&body);
    frame
}

async fn read_response(stream: &mut TcpStream) -> BytesMut {
    let size = stream.read_i32().await.unwrap();
    let mut buf = BytesMut::zeroed(size as usize);
    stream.read_exact(&mut buf).await.unwrap();
    buf
}

/// Reads until EOF (or reset); true when the peer closed the connection.
async fn is_closed(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
        Ok(Ok(0)) | Ok(Err(_)) => true,
        Ok(Ok(_)) | Err(_) => false,
    }
}

async fn answers_api_versions(port: u16) -> ApiVersionsResponse {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(&api_versions_frame(3, 42)).await.unwrap();
    let mut response = read_response(&mut stream).await;
    let header = ResponseHeader::decode(&mut response, 0).unwrap();
    assert_eq!(header.correlation_id, 42);
    ApiVersionsResponse::decode(&mut response, 3).unwrap()
}

#[tokio::test]
async fn oversized_frame_closes_only_that_connection() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    stream.write_all(&4096i32.to_be_bytes()).await.unwrap();
    assert!(is_closed(&mut stream).await);
    assert_eq!(answers_api_versions(broker.port()).await.error_code, 0);
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn garbage_frame_closes_only_that_connection() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    stream
        .write_all(b"\x00\x00\x00\x0c\x7f\x7f\x00\x01garbage!")
        .await
        .unwrap();
    assert!(is_closed(&mut stream).await);
    let response = answers_api_versions(broker.port()).await;
    assert!(response
        .api_keys
        .iter()
        .any(|k| k.api_key == ApiKey::Produce as i16));
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn unsupported_api_versions_version_gets_a_v0_error_response() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    stream.write_all(&api_versions_frame(9, 7)).await.unwrap();
    let mut response = read_response(&mut stream).await;
    assert_eq!(
        ResponseHeader::decode(&mut response, 0)
            .unwrap()
            .correlation_id,
        7
    );
    let body = ApiVersionsResponse::decode(&mut response, 0).unwrap();
    assert_eq!(body.error_code, 35);
    assert!(body
        .api_keys
        .iter()
        .any(|k| k.api_key == ApiKey::ApiVersions as i16 && k.max_version >= 3));
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn requests_on_one_connection_are_answered_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    let mut both = api_versions_frame(3, 1);
    both.extend_from_slice(&api_versions_frame(2, 2));
    stream.write_all(&both).await.unwrap();
    for expected in [1, 2] {
        let mut response = read_response(&mut stream).await;
        assert_eq!(
            ResponseHeader::decode(&mut response, 0)
                .unwrap()
                .correlation_id,
            expected
        );
    }
    broker.stop().await.unwrap();
}

fn produce_acks0_frame(correlation_id: i32) -> BytesMut {
    use kafka_protocol::indexmap::IndexMap;
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::{ProduceRequest, TopicName};
    use kafka_protocol::records::*;
    let record = Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence: 0,
        timestamp: 0,
        key: None,
        value: Some(bytes::Bytes::from_static(b"hello")),
        headers: IndexMap::new(),
    };
    let mut records = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut records,
        [&record],
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    let mut data = PartitionProduceData::default();
    data.records = Some(records.freeze());
    let mut topic = TopicProduceData::default();
    topic.name = TopicName(StrBytes::from_static_str("t"));
    topic.partition_data = vec![data];
    let mut req = ProduceRequest::default();
    req.acks = 0;
    req.timeout_ms = 1000;
    req.topic_data = vec![topic];
    let mut header = RequestHeader::default();
    header.request_api_key = ApiKey::Produce as i16;
    header.request_api_version = 7;
    header.correlation_id = correlation_id;
    let mut body = BytesMut::new();
    header.encode(&mut body, 1).unwrap();
    req.encode(&mut body, 7).unwrap();
    let mut frame = BytesMut::new();
    frame.put_i32(body.len() as i32);
    frame.extend_from_slice(&body);
    frame
}

/// A connection that sent an acks=0 Produce (correlation id 1) and then an
/// ApiVersions request (correlation id 2).
async fn produce_acks0_then_api_versions(port: u16) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut frames = produce_acks0_frame(1);
    frames.extend_from_slice(&api_versions_frame(3, 2));
    stream.write_all(&frames).await.unwrap();
    stream
}

#[tokio::test]
async fn produce_with_acks_zero_gets_no_response_but_is_appended() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker.broker().log.create_topic("t", 1, false).unwrap();
    let mut stream = produce_acks0_then_api_versions(broker.port()).await;
    let mut response = read_response(&mut stream).await;
    assert_eq!(
        ResponseHeader::decode(&mut response, 0)
            .unwrap()
            .correlation_id,
        2
    );
    assert_eq!(
        broker
            .broker()
            .log
            .partition("t", 0)
            .unwrap()
            .high_watermark(),
        1
    );
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn stop_closes_open_connections_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    stream.write_all(&api_versions_frame(3, 1)).await.unwrap();
    read_response(&mut stream).await;
    broker.stop().await.unwrap();
    broker.stop().await.unwrap();
    assert!(is_closed(&mut stream).await);
    assert!(TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .is_err());
}

#[tokio::test]
async fn discard_closes_like_stop_but_leaves_the_log_unflushed() {
    use kbench_broker_core::storage::shared::CLEAN_SHUTDOWN_FILE;
    let dir = tempfile::tempdir().unwrap();
    // The other way first: a clean stop flushes and leaves its mark.
    let stopped = broker(dir.path()).await;
    stopped.stop().await.unwrap();
    assert!(dir.path().join(CLEAN_SHUTDOWN_FILE).exists());

    let broker = broker(dir.path()).await;
    broker.broker().log.create_topic("t", 1, false).unwrap();
    let mut stream = produce_acks0_then_api_versions(broker.port()).await;
    read_response(&mut stream).await;
    broker.discard().await;
    broker.discard().await;
    // Served no more, and no flush: no clean-shutdown mark, so a later open would recover.
    assert!(is_closed(&mut stream).await);
    assert!(TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .is_err());
    assert!(!dir.path().join(CLEAN_SHUTDOWN_FILE).exists());
    // A stop after it has nothing left to do.
    broker.stop().await.unwrap();
    assert!(!dir.path().join(CLEAN_SHUTDOWN_FILE).exists());
}

/// One uncompressed batch of `count` records from offset `first`, each value
/// `value_len` bytes derived from its offset.
fn value_batch(first: i64, count: usize, value_len: usize) -> BytesMut {
    use kafka_protocol::indexmap::IndexMap;
    use kafka_protocol::records::*;
    let records: Vec<Record> = (0..count as i64)
        .map(|i| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i,
            sequence: i as i32,
            timestamp: 1_700_000_000_000,
            key: None,
            value: Some(value_of(first + i, value_len)),
            headers: IndexMap::new(),
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &records,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    buf
}

fn value_of(offset: i64, len: usize) -> bytes::Bytes {
    (0..len)
        .map(|j| (offset as usize * 31 + j) as u8)
        .collect::<Vec<_>>()
        .into()
}

fn fetch_frame(version: i16, correlation_id: i32, topic: &str, max_bytes: i32) -> BytesMut {
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::{FetchRequest, TopicName};
    let mut partition = FetchPartition::default();
    partition.fetch_offset = 0;
    partition.partition_max_bytes = max_bytes;
    let mut t = FetchTopic::default();
    t.topic = TopicName(StrBytes::from_string(topic.to_string()));
    t.partitions = vec![partition];
    let mut req = FetchRequest::default();
    req.replica_id = (-1).into();
    req.max_wait_ms = 0;
    req.min_bytes = 1;
    req.max_bytes = max_bytes;
    req.session_epoch = -1;
    req.topics = vec![t];
    let mut header = RequestHeader::default();
    header.request_api_key = ApiKey::Fetch as i16;
    header.request_api_version = version;
    header.correlation_id = correlation_id;
    let mut body = BytesMut::new();
    header
        .encode(&mut body, ApiKey::Fetch.request_header_version(version))
        .unwrap();
    req.encode(&mut body, version).unwrap();
    let mut frame = BytesMut::new();
    frame.put_i32(body.len() as i32);
    frame.extend_from_slice(&body);
    frame
}

#[tokio::test]
async fn multi_megabyte_fetch_response_arrives_intact() {
    use kafka_protocol::messages::FetchResponse;
    use kafka_protocol::records::RecordBatchDecoder;
    const BATCHES: i64 = 6;
    const PER_BATCH: usize = 16;
    const VALUE_LEN: usize = 64 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    broker.broker().log.create_topic("big", 1, false).unwrap();
    let partition = broker.broker().log.partition("big", 0).unwrap();
    for b in 0..BATCHES {
        partition
            .append(&value_batch(b * PER_BATCH as i64, PER_BATCH, VALUE_LEN))
            .unwrap();
    }
    let total_records = BATCHES * PER_BATCH as i64;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    // Non-flexible and flexible versions, each followed by another request
    // on the same connection, so a mis-sized frame would show.
    for (i, version) in [4i16, 11, 12].into_iter().enumerate() {
        let correlation_id = 100 + i as i32;
        let mut frames = fetch_frame(version, correlation_id, "big", 64 << 20);
        frames.extend_from_slice(&api_versions_frame(3, correlation_id + 50));
        stream.write_all(&frames).await.unwrap();

        let mut response = read_response(&mut stream).await;
        let header = ResponseHeader::decode(
            &mut response,
            ApiKey::Fetch.response_header_version(version),
        )
        .unwrap();
        assert_eq!(header.correlation_id, correlation_id);
        let body = FetchResponse::decode(&mut response, version).unwrap();
        assert!(response.is_empty(), "v{version}: trailing bytes");
        let part = &body.responses[0].partitions[0];
        assert_eq!(part.error_code, 0, "v{version}");
        assert_eq!(part.high_watermark, total_records);
        let mut records = part.records.clone().unwrap();
        assert!(
            records.len() > 5 << 20,
            "v{version}: {} bytes",
            records.len()
        );
        let sets = RecordBatchDecoder::decode_all(&mut records).unwrap();
        let decoded: Vec<_> = sets.into_iter().flat_map(|s| s.records).collect();
        assert_eq!(decoded.len() as i64, total_records, "v{version}");
        for (expected_offset, record) in decoded.iter().enumerate() {
            assert_eq!(record.offset, expected_offset as i64);
            assert_eq!(
                record.value.as_ref().unwrap(),
                &value_of(record.offset, VALUE_LEN),
                "v{version}: value of offset {}",
                record.offset
            );
        }

        let mut next = read_response(&mut stream).await;
        assert_eq!(
            ResponseHeader::decode(&mut next, 0).unwrap().correlation_id,
            correlation_id + 50
        );
    }
    let bytes_out = broker
        .broker()
        .stats
        .bytes_out
        .load(std::sync::atomic::Ordering::Relaxed);
    assert!(bytes_out > 3 * (5 << 20));
    broker.stop().await.unwrap();
}

async fn limited(
    dir: &std::path::Path,
    set: impl FnOnce(&mut kbench_broker_core::Limits),
) -> BrokerHandle {
    let mut config = BrokerConfig::new(dir);
    set(&mut config.limits);
    start(config).await.unwrap()
}

async fn connect(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port)).await.unwrap()
}

/// A flood of sockets that never send a byte once locked every client out
/// (the accept loop waited for a free slot). At the cap, the longest-idle
/// connection now makes room; a well-behaved client gets in at once.
#[tokio::test]
async fn at_the_connection_cap_the_longest_idle_connection_makes_room() {
    let dir = tempfile::tempdir().unwrap();
    let broker = limited(dir.path(), |l| l.max_connections = 20).await;
    let mut flood = Vec::new();
    for _ in 0..20 {
        flood.push(connect(broker.port()).await);
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for _ in 0..3 {
        let answered =
            tokio::time::timeout(Duration::from_secs(10), answers_api_versions(broker.port()))
                .await
                .expect("a client behind the flood was answered");
        assert_eq!(answered.error_code, 0);
    }
    // Some of the flood were closed to make room.
    let mut closed = 0;
    for socket in &mut flood {
        let mut byte = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::from_millis(50), socket.read(&mut byte)).await
        {
            closed += 1;
        }
    }
    assert!(closed >= 1, "no idle connection was evicted");
    broker.stop().await.unwrap();
}

/// Connections from one address are capped; other addresses still get in.
#[tokio::test]
async fn one_address_cannot_take_every_slot() {
    let dir = tempfile::tempdir().unwrap();
    let broker = limited(dir.path(), |l| l.max_connections_per_ip = 5).await;
    let mut flood = Vec::new();
    for _ in 0..5 {
        flood.push(connect(broker.port()).await);
    }
    // A sixth from the same address, with nobody idle for a second yet, is
    // closed at once rather than left hanging.
    let mut sixth = connect(broker.port()).await;
    assert!(is_closed(&mut sixth).await);
    // Another loopback address is not affected.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let mut other = socket
        .connect(format!("127.0.0.1:{}", broker.port()).parse().unwrap())
        .await
        .unwrap();
    other.write_all(&api_versions_frame(3, 9)).await.unwrap();
    let mut response = read_response(&mut other).await;
    assert_eq!(
        ResponseHeader::decode(&mut response, 0)
            .unwrap()
            .correlation_id,
        9
    );
    broker.stop().await.unwrap();
}

/// Kafka's connections.max.idle.ms: a silent connection is closed.
#[tokio::test]
async fn an_idle_connection_is_closed_after_connections_max_idle() {
    let dir = tempfile::tempdir().unwrap();
    let broker = limited(dir.path(), |l| {
        l.connections_max_idle = Duration::from_millis(300)
    })
    .await;
    let mut idle = connect(broker.port()).await;
    assert!(is_closed(&mut idle).await);
    broker.stop().await.unwrap();
}

/// A slow sender (a header, then a byte now and then) is closed once its
/// frame is not whole within the frame timeout.
#[tokio::test]
async fn a_frame_that_trickles_in_is_cut_off_at_the_frame_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let broker = limited(dir.path(), |l| l.frame_timeout = Duration::from_millis(500)).await;
    let mut slow = connect(broker.port()).await;
    slow.write_all(&100i32.to_be_bytes()).await.unwrap();
    let mut closed = false;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if slow.write_all(b"x").await.is_err() {
            closed = true;
            break;
        }
    }
    assert!(closed || is_closed(&mut slow).await);
    assert_eq!(answers_api_versions(broker.port()).await.error_code, 0);
    broker.stop().await.unwrap();
}

/// A size prefix alone reserves nothing, and frames are read only as the
/// broker-wide budget allows: two large frames that together exceed it are
/// both answered, one after the other.
#[tokio::test]
async fn large_frames_share_the_request_budget() {
    let dir = tempfile::tempdir().unwrap();
    let broker = limited(dir.path(), |l| {
        l.max_frame_bytes = 600 * 1024;
        l.queued_max_request_bytes = 700 * 1024;
    })
    .await;
    let padded = |correlation_id: i32| padded_api_versions(correlation_id, 500 * 1024);
    let mut a = connect(broker.port()).await;
    let mut b = connect(broker.port()).await;
    let (fa, fb) = (padded(1), padded(2));
    let (ra, rb) = tokio::join!(
        async {
            a.write_all(&fa).await.unwrap();
            read_response(&mut a).await
        },
        async {
            b.write_all(&fb).await.unwrap();
            read_response(&mut b).await
        }
    );
    for (mut response, id) in [(ra, 1), (rb, 2)] {
        assert_eq!(
            ResponseHeader::decode(&mut response, 0)
                .unwrap()
                .correlation_id,
            id
        );
    }
    broker.stop().await.unwrap();
}

/// Frames that announce their size and send nothing more hold none of the budget: before, six
/// size prefixes (24 bytes) claiming the whole budget held every other client's large frame
/// until the frame timeout closed them.
#[tokio::test]
async fn size_prefixes_alone_hold_none_of_the_request_budget() {
    let dir = tempfile::tempdir().unwrap();
    let broker = limited(dir.path(), |l| {
        l.max_frame_bytes = 600 * 1024;
        l.queued_max_request_bytes = 700 * 1024;
        l.frame_timeout = Duration::from_secs(600);
    })
    .await;
    let mut holders = Vec::new();
    for _ in 0..3 {
        let mut holder = connect(broker.port()).await;
        holder
            .write_all(&(600i32 * 1024).to_be_bytes())
            .await
            .unwrap();
        holders.push(holder);
    }
    // Give the broker time to read the prefixes (a guard, not a timing assertion).
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A 500 KiB request from another client is read and answered; the bound only keeps a
    // regression from hanging the test for the frame timeout.
    let mut client = connect(broker.port()).await;
    let request = padded_api_versions(7, 500 * 1024);
    let answered = tokio::time::timeout(Duration::from_secs(120), async {
        client.write_all(&request).await.unwrap();
        read_response(&mut client).await
    })
    .await
    .expect("the request waited for budget that size prefixes held");
    let mut answered = answered;
    assert_eq!(
        ResponseHeader::decode(&mut answered, 0)
            .unwrap()
            .correlation_id,
        7
    );
    drop(holders);
    broker.stop().await.unwrap();
}

/// An ApiVersions v3 request padded with an unknown tagged field of `pad` bytes.
fn padded_api_versions(correlation_id: i32, pad: usize) -> BytesMut {
    let frame = api_versions_frame(3, correlation_id);
    let body = &frame[4..];
    let mut out = BytesMut::new();
    // The body minus its final tagged-field count (0), then one tag.
    let mut inner = BytesMut::from(&body[..body.len() - 1]);
    inner.put_u8(1);
    inner.put_u8(99);
    let mut varint = pad as u32;
    while varint >= 0x80 {
        inner.put_u8((varint as u8) | 0x80);
        varint >>= 7;
    }
    inner.put_u8(varint as u8);
    inner.extend(std::iter::repeat_n(0u8, pad));
    out.put_i32(inner.len() as i32);
    out.extend_from_slice(&inner);
    out
}
