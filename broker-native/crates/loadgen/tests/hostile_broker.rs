//! A broker's responses are hostile bytes too. A fake broker on a TCP socket answers the native
//! consumer and producer with counts no response can hold and a compressed batch that expands
//! to half a gigabyte: the engine must report a protocol error naming what it refused, and go
//! on. Before the fix each count made the process reserve gigabytes and abort (which kills the
//! test binary), and the bomb was expanded whole.

mod fake_broker;

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use fake_broker::{frame, raw_frame, Asked, FakeBroker, TOPIC};
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kbench_loadgen::metadata::MetadataClient;
use kbench_loadgen::{
    Compression, Consumer, ConsumerConfig, ConsumerProperties, Keys, Producer, ProducerConfig,
    ProducerProperties, Size, StartAt,
};

/// An unsigned varint count of u32::MAX - 1 elements, as a flexible version writes it.
const HUGE_COMPACT_COUNT: &[u8] = b"\xff\xff\xff\xff\x0f";
/// An i32 count of i32::MAX elements, as a non-flexible version writes it.
const HUGE_COUNT: &[u8] = b"\x7f\xff\xff\xff";

fn consumer_config(broker: &FakeBroker) -> ConsumerConfig {
    ConsumerConfig {
        bootstrap: broker.bootstrap(),
        topics: vec![TOPIC.to_string()],
        start: StartAt::Earliest,
        group_id: "g".into(),
        clock_offset_micros: 0.0,
    }
}

/// Starts a consumer against `broker` and expects it to fail with an error that mentions `what`.
async fn consumer_refuses(broker: &FakeBroker, what: &str) {
    match Consumer::start(consumer_config(broker)).await {
        Ok(_) => panic!("the consumer started; expected an error about {what}"),
        Err(e) => assert!(e.to_string().contains(what), "{e}"),
    }
}

/// Ten 100-byte records, acks=1, to the fake broker's topic.
fn producer_config(broker: &FakeBroker) -> ProducerConfig {
    ProducerConfig {
        bootstrap: broker.bootstrap(),
        topics: vec![TOPIC.to_string()],
        acks: 1,
        message_size: Size::Fixed(100),
        keys: Keys::None,
        compression: Compression::None,
        batch_size: 16 * 1024,
        linger_ms: 0,
        max_in_flight: 5,
        idempotence: false,
        rate: None,
        records: Some(10),
        duration: None,
        clock_offset_micros: 0.0,
    }
}

/// A producer of `producer_config` that waits 200 ms for an answer (request.timeout.ms).
async fn impatient_producer(broker: &FakeBroker) -> Producer {
    let properties = ProducerProperties {
        request_timeout_ms: Some(200),
        ..ProducerProperties::default()
    };
    Producer::start_with(producer_config(broker), properties)
        .await
        .unwrap()
}

/// Waits (a guard against hanging, not a timing assertion) for a running client's last error.
async fn last_error(read: impl Fn() -> Option<String>) -> String {
    for _ in 0..600 {
        if let Some(e) = read() {
            return e;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the client reported no error: it is still waiting");
}

#[tokio::test]
async fn a_metadata_response_claiming_four_billion_brokers_is_a_protocol_error() {
    let broker = FakeBroker::start(|asked: &Asked| {
        // Metadata v12: throttle time, then the brokers array.
        (asked.api_key == ApiKey::Metadata)
            .then(|| raw_frame(asked, true, &[&[0; 4][..], HUGE_COMPACT_COUNT].concat()))
    })
    .await;
    let started = Producer::start(producer_config(&broker)).await;
    let e = started.expect_err("the producer started").to_string();
    assert!(
        e.contains("MetadataResponse v12") && e.contains("does not fit"),
        "{e}"
    );
}

#[tokio::test]
async fn a_join_group_response_claiming_four_billion_members_is_a_protocol_error() {
    let broker = FakeBroker::start(|asked: &Asked| {
        // JoinGroup v9: throttle time, error code, generation, protocol type (null), protocol
        // name, leader, skip assignment, member id, then the members array.
        (asked.api_key == ApiKey::JoinGroup).then(|| {
            let mut body = BytesMut::new();
            body.put_slice(&[0; 4 + 2 + 4]);
            body.put_u8(0);
            body.put_slice(b"\x06range\x09member-1\x00\x09member-1");
            body.put_slice(HUGE_COMPACT_COUNT);
            raw_frame(asked, true, &body)
        })
    })
    .await;
    consumer_refuses(&broker, "JoinGroupResponse v9").await;
}

#[tokio::test]
async fn a_member_subscription_claiming_two_billion_topics_is_a_protocol_error() {
    let broker = FakeBroker::start(|asked: &Asked| {
        // A fair JoinGroup response whose member wrote ConsumerProtocolSubscription v0 with
        // i32::MAX topics: bytes from another group member, passed on by the broker.
        (asked.api_key == ApiKey::JoinGroup).then(|| {
            let metadata = Bytes::from([&[0, 0][..], HUGE_COUNT].concat());
            let member = StrBytes::from_static_str(fake_broker::MEMBER);
            frame(
                asked,
                &JoinGroupResponse::default()
                    .with_generation_id(1)
                    .with_protocol_name(Some(StrBytes::from_static_str("range")))
                    .with_leader(member.clone())
                    .with_member_id(member.clone())
                    .with_members(vec![JoinGroupResponseMember::default()
                        .with_member_id(member)
                        .with_metadata(metadata)]),
            )
        })
    })
    .await;
    consumer_refuses(&broker, "ConsumerProtocolSubscription v0").await;
}

#[tokio::test]
async fn a_sync_group_assignment_claiming_two_billion_topics_is_a_protocol_error() {
    let broker = FakeBroker::start(|asked: &Asked| {
        // ConsumerProtocolAssignment v0 with i32::MAX topics, as the group's leader could write.
        (asked.api_key == ApiKey::SyncGroup).then(|| {
            let assignment = Bytes::from([&[0, 0][..], HUGE_COUNT].concat());
            frame(
                asked,
                &SyncGroupResponse::default().with_assignment(assignment),
            )
        })
    })
    .await;
    consumer_refuses(&broker, "ConsumerProtocolAssignment v0").await;
}

#[tokio::test]
async fn a_fetch_response_claiming_four_billion_topics_is_a_protocol_error() {
    let broker = FakeBroker::start(|asked: &Asked| {
        // Fetch v12: throttle time, error code, session id, then the responses array.
        (asked.api_key == ApiKey::Fetch)
            .then(|| raw_frame(asked, true, &[&[0; 10][..], HUGE_COMPACT_COUNT].concat()))
    })
    .await;
    let consumer = Consumer::start(consumer_config(&broker)).await.unwrap();
    let e = last_error(|| consumer.last_error()).await;
    assert!(
        e.contains("FetchResponse v12") && e.contains("does not fit"),
        "{e}"
    );
    consumer.stop().await;
}

#[tokio::test]
async fn an_api_versions_answer_in_v0_to_a_v3_request_is_read_as_v0() {
    // A broker that does not know ApiVersions v3 answers in v0 with UNSUPPORTED_VERSION (35)
    // and the versions it has; the client then asks again in v0.
    let broker = FakeBroker::start(|asked: &Asked| {
        (asked.api_key == ApiKey::ApiVersions && asked.version == 3).then(|| {
            let v0 = Asked {
                version: 0,
                ..*asked
            };
            frame(&v0, &ApiVersionsResponse::default().with_error_code(35))
        })
    })
    .await;
    let metadata = MetadataClient::connect(&broker.bootstrap()).await.unwrap();
    assert_eq!(metadata.versions().pick::<MetadataRequest>().unwrap(), 12);
}

/// One uncompressed record as the producer writes it: no key, `value`, no headers.
fn record(value: &[u8]) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, v: i64) {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        while z >= 0x80 {
            out.push(z as u8 | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
    }
    let mut body = vec![0]; // attributes
    varint(&mut body, 0); // timestamp delta
    varint(&mut body, 0); // offset delta
    varint(&mut body, -1); // no key
    varint(&mut body, value.len() as i64);
    body.extend_from_slice(value);
    varint(&mut body, 0); // no headers
    let mut out = vec![];
    varint(&mut out, body.len() as i64);
    out.extend_from_slice(&body);
    out
}

/// A gzip record batch whose records expand to at least `expanded` bytes, about 330 times its
/// size: one chunk of records compressed with a sync flush, so that the chunk's deflate
/// blocks (which only look back at the same periodic records) can be repeated as often as
/// wanted, and a trailer whose CRC is right for the whole.
fn gzip_bomb(expanded: usize) -> (Bytes, i32) {
    use flate2::{Compress, Compression, FlushCompress};
    let one = record(&[7; 1000]);
    let chunk: Vec<u8> = one.repeat(64); // longer than deflate's 32 KiB window
    let chunks = expanded.div_ceil(chunk.len());
    let mut deflate = Compress::new(Compression::best(), false);
    let mut first = Vec::with_capacity(1 << 20);
    deflate
        .compress_vec(&chunk, &mut first, FlushCompress::Sync)
        .unwrap();
    let mut repeated = Vec::with_capacity(1 << 20);
    deflate
        .compress_vec(&chunk, &mut repeated, FlushCompress::Sync)
        .unwrap();
    let mut last = Vec::with_capacity(64);
    deflate
        .compress_vec(&[], &mut last, FlushCompress::Finish)
        .unwrap();
    let mut crc = crc32fast::Hasher::new();
    let mut chunk_crc = crc32fast::Hasher::new();
    chunk_crc.update(&chunk);
    for _ in 0..chunks {
        crc.combine(&chunk_crc);
    }
    let mut gzip = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    gzip.extend_from_slice(&first);
    for _ in 1..chunks {
        gzip.extend_from_slice(&repeated);
    }
    gzip.extend_from_slice(&last);
    gzip.extend_from_slice(&crc.finalize().to_le_bytes());
    gzip.extend_from_slice(&((chunks * chunk.len()) as u32).to_le_bytes());

    let count = (chunks * 64) as i32;
    let mut batch = BytesMut::new();
    batch.put_i64(0); // base offset
    batch.put_i32((49 + gzip.len()) as i32); // length after this field
    batch.put_i32(0); // partition leader epoch
    batch.put_i8(2); // magic
    batch.put_u32(0); // crc (the engine does not check it)
    batch.put_i16(1); // attributes: gzip
    batch.put_i32(count - 1); // last offset delta
    batch.put_i64(0); // base timestamp
    batch.put_i64(0); // max timestamp
    batch.put_i64(-1); // producer id
    batch.put_i16(-1); // producer epoch
    batch.put_i32(-1); // base sequence
    batch.put_i32(count);
    batch.put_slice(&gzip);
    (batch.freeze(), count)
}

#[tokio::test]
async fn a_gzip_bomb_in_a_fetch_response_is_refused_not_expanded() {
    let (batch, count) = gzip_bomb(512 << 20);
    assert!(batch.len() < 2 << 20, "the bomb is {} bytes", batch.len());
    let broker = FakeBroker::start(move |asked: &Asked| {
        (asked.api_key == ApiKey::Fetch && asked.nth == 0).then(|| {
            let partition = PartitionData::default()
                .with_partition_index(0)
                .with_high_watermark(i64::from(count))
                .with_records(Some(batch.clone()));
            frame(
                asked,
                &FetchResponse::default().with_responses(vec![FetchableTopicResponse::default()
                    .with_topic(TopicName(StrBytes::from_static_str(TOPIC)))
                    .with_partitions(vec![partition])]),
            )
        })
    })
    .await;
    let consumer = Consumer::start(consumer_config(&broker)).await.unwrap();
    let e = last_error(|| consumer.last_error()).await;
    assert!(e.contains("gzip") && e.contains("64 MiB"), "{e}");
    assert_eq!(consumer.take_interval().records, 0);
    consumer.stop().await;
}

/// A broker that takes produce requests in and never answers them: a paused node, a connection
/// that died without a word. As the Java client does, the producer gives up on a request after
/// request.timeout.ms, closes the connection and sends its records again, and says so. Before,
/// it waited for good and a run measured the wait as the broker's.
#[tokio::test]
async fn a_produce_request_never_answered_is_given_up_after_the_request_timeout() {
    let broker =
        FakeBroker::start(|asked: &Asked| (asked.api_key == ApiKey::Produce).then(Bytes::new))
            .await;
    let producer = impatient_producer(&broker).await;
    // It goes on: sends them again, gives up again. (A guard against hanging, not a timing
    // assertion.)
    let mut seen = kbench_loadgen::IntervalStats::default();
    for _ in 0..600 {
        seen.merge(&producer.take_interval());
        if seen.errors >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        seen.error_messages,
        vec![(
            "produce: no answer within request.timeout.ms (200 ms): connection closed, its records sent again"
                .to_string(),
            seen.errors
        )]
    );
    assert!(seen.errors >= 2, "{seen:?}");
    assert_eq!(seen.records, 0);
    // Its records were put back to be sent again, each time.
    assert!(seen.retries >= 20, "{seen:?}");
    assert!(!producer.is_finished());
    producer.stop().await;
}

/// The same for a fetch: a broker that holds it for good. The consumer gives up on it after its
/// max wait plus request.timeout.ms, closes the connection and fetches again.
#[tokio::test]
async fn a_fetch_never_answered_is_given_up_after_the_request_timeout() {
    let broker =
        FakeBroker::start(|asked: &Asked| (asked.api_key == ApiKey::Fetch).then(Bytes::new)).await;
    let consumer = Consumer::start_with(
        consumer_config(&broker),
        ConsumerProperties {
            fetch_max_wait_ms: Some(100),
            request_timeout_ms: Some(200),
            ..ConsumerProperties::default()
        },
    )
    .await
    .unwrap();
    let said = last_error(|| consumer.last_error()).await;
    assert!(
        said.contains("fetch: no answer within fetch.max.wait.ms + request.timeout.ms (300 ms)"),
        "{said}"
    );
    assert!(consumer
        .effective_properties()
        .contains(&("request.timeout.ms", "200".to_string())));
    consumer.stop().await;
}

/// A broker that holds Metadata requests too (after the first on a connection): the producer's
/// refresh after a request timeout must not wait for good either. It gives up on the Metadata
/// request after request.timeout.ms, says so, and asks again.
#[tokio::test]
async fn a_metadata_refresh_never_answered_is_given_up_after_the_request_timeout() {
    let broker = FakeBroker::start(|asked: &Asked| {
        let held = asked.api_key == ApiKey::Produce
            || (asked.api_key == ApiKey::Metadata && asked.nth > 0);
        held.then(Bytes::new)
    })
    .await;
    let producer = impatient_producer(&broker).await;
    // A guard against hanging, not a timing assertion.
    let mut said: Vec<String> = vec![];
    for _ in 0..600 {
        said.extend(
            producer
                .take_interval()
                .error_messages
                .into_iter()
                .map(|(m, _)| m),
        );
        if said
            .iter()
            .any(|m| m.starts_with("metadata refresh: no answer"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        said.iter()
            .any(|m| m
                == "metadata refresh: no answer to Metadata within request.timeout.ms (200 ms)"),
        "{said:?}"
    );
    producer.stop().await;
}

/// After a Metadata request went unanswered, the next goes to another bootstrap broker first: the
/// one that held it (a paused node) is asked last.
#[tokio::test]
async fn a_metadata_request_never_answered_sends_the_next_to_another_bootstrap_broker() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let asked_for_metadata = AtomicUsize::new(0);
    // Answers its first Metadata request ever, and holds every one after, on any connection.
    let holding = FakeBroker::start(move |asked: &Asked| {
        let held = asked.api_key == ApiKey::Metadata
            && asked_for_metadata.fetch_add(1, Ordering::Relaxed) > 0;
        held.then(Bytes::new)
    })
    .await;
    let fair = FakeBroker::start(|_: &Asked| None).await;
    let mut metadata = MetadataClient::connect(&[holding.bootstrap(), fair.bootstrap()].concat())
        .await
        .unwrap();
    metadata.set_request_timeout(Duration::from_millis(200));
    let topics = [TOPIC.to_string()];
    // Each fake broker lists itself as node 0.
    let first = metadata.fetch(&topics, Duration::ZERO).await.unwrap();
    assert_eq!(first.brokers[&0], holding.bootstrap()[0]);
    let e = metadata.fetch(&topics, Duration::ZERO).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "no answer to Metadata within request.timeout.ms (200 ms)"
    );
    let next = metadata.fetch(&topics, Duration::ZERO).await.unwrap();
    assert_eq!(next.brokers[&0], fair.bootstrap()[0]);
}

/// A consumer of `consumer_config` that waits 200 ms for an answer (request.timeout.ms).
/// Its start is bounded here (a guard against hanging, not a timing assertion): before the fix a
/// held group call left it waiting for good.
async fn impatient_consumer(broker: &FakeBroker) -> Consumer {
    let start = Consumer::start_with(
        consumer_config(broker),
        ConsumerProperties {
            request_timeout_ms: Some(200),
            ..ConsumerProperties::default()
        },
    );
    tokio::time::timeout(Duration::from_secs(120), start)
        .await
        .expect("the consumer's start waited for good")
        .unwrap()
}

/// Counts one API's requests across every connection of a fake broker.
fn counter() -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0))
}

/// Waits (a guard against hanging, not a timing assertion) until `count` reaches `n`.
async fn reaches(count: &std::sync::atomic::AtomicUsize, n: usize) {
    for _ in 0..600 {
        if count.load(std::sync::atomic::Ordering::Relaxed) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the count stayed below {n}");
}

/// A coordinator that holds heartbeats for good: the member gives up on one after
/// request.timeout.ms, says so, and finds the coordinator again and rejoins, as the Java client
/// does. Before, it went on fetching without a word while the group could have given its
/// partitions to others.
#[tokio::test]
async fn a_heartbeat_never_answered_is_given_up_and_the_member_rejoins() {
    let joins = counter();
    let seen = joins.clone();
    let broker = FakeBroker::start(move |asked: &Asked| {
        if asked.api_key == ApiKey::JoinGroup {
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        (asked.api_key == ApiKey::Heartbeat).then(Bytes::new)
    })
    .await;
    let consumer = impatient_consumer(&broker).await;
    let said = last_error(|| consumer.last_error()).await;
    assert_eq!(
        said,
        "heartbeat: no answer from the group coordinator within request.timeout.ms (200 ms): connection closed, finding the coordinator again"
    );
    reaches(&joins, 2).await;
    consumer.stop().await;
}

/// A coordinator that holds the first SyncGroup: the join gives up on it after
/// request.timeout.ms and joins again, instead of waiting for good at the consumer's start.
#[tokio::test]
async fn a_sync_group_never_answered_is_given_up_and_the_join_tried_again() {
    let joins = counter();
    let seen = joins.clone();
    let syncs = counter();
    let broker = FakeBroker::start(move |asked: &Asked| {
        use std::sync::atomic::Ordering::Relaxed;
        match asked.api_key {
            ApiKey::JoinGroup => {
                seen.fetch_add(1, Relaxed);
                None
            }
            // The first SyncGroup on any connection is held.
            ApiKey::SyncGroup => (syncs.fetch_add(1, Relaxed) == 0).then(Bytes::new),
            _ => None,
        }
    })
    .await;
    let consumer = impatient_consumer(&broker).await;
    assert_eq!(joins.load(std::sync::atomic::Ordering::Relaxed), 2);
    assert_eq!(consumer.assignment(), vec![(TOPIC.to_string(), 0)]);
    consumer.stop().await;
}

/// A coordinator that asks for a rebalance and then holds the member's offset commit: the commit
/// is given up after request.timeout.ms, said, and the member rejoins.
#[tokio::test]
async fn an_offset_commit_never_answered_in_a_rebalance_is_given_up_and_the_member_rejoins() {
    let joins = counter();
    let seen = joins.clone();
    let broker = FakeBroker::start(move |asked: &Asked| {
        match asked.api_key {
            ApiKey::JoinGroup => {
                seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                None
            }
            // The first heartbeat answers REBALANCE_IN_PROGRESS.
            ApiKey::Heartbeat if asked.nth == 0 => Some(fake_broker::frame(
                asked,
                &HeartbeatResponse::default().with_error_code(27),
            )),
            ApiKey::OffsetCommit => Some(Bytes::new()),
            _ => None,
        }
    })
    .await;
    let consumer = impatient_consumer(&broker).await;
    reaches(&joins, 2).await;
    let said = last_error(|| consumer.last_error()).await;
    assert!(
        said.starts_with(
            "offset commit: OffsetCommit: no answer from the group coordinator 127.0.0.1:"
        ) && said.ends_with(
            " within 200 ms (request.timeout.ms): connection closed, finding the coordinator again"
        ),
        "{said}"
    );
    consumer.stop().await;
}
