//! A tiny Kafka-protocol broker on a TCP socket that answers what a native consumer asks to join
//! a group and read one topic ("t", one partition, led by itself), and lets a test replace any
//! answer with bytes of its own: the hostile broker the load engine must survive.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, HeaderVersion, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const TOPIC: &str = "t";
pub const MEMBER: &str = "member-1";

/// The version the fake broker offers of each API (one each, so hostile bodies can be written
/// by hand for it).
pub const VERSIONS: &[(ApiKey, i16)] = &[
    (ApiKey::Produce, 9),
    (ApiKey::Fetch, 12),
    (ApiKey::ListOffsets, 7),
    (ApiKey::Metadata, 12),
    (ApiKey::OffsetCommit, 8),
    (ApiKey::OffsetFetch, 8),
    (ApiKey::FindCoordinator, 4),
    (ApiKey::JoinGroup, 9),
    (ApiKey::Heartbeat, 4),
    (ApiKey::LeaveGroup, 5),
    (ApiKey::SyncGroup, 5),
    (ApiKey::ApiVersions, 3),
];

/// A request as the fake broker saw it: enough to answer it.
#[derive(Debug, Clone, Copy)]
pub struct Asked {
    pub api_key: ApiKey,
    pub version: i16,
    pub correlation_id: i32,
    /// How many requests of this API came before on this connection.
    pub nth: usize,
}

/// A test's answers: `Some(frame)` (header and body, no size prefix) replaces the fake broker's
/// own answer to that request; `Some` of an empty frame leaves it unanswered.
pub type Hostile = dyn Fn(&Asked) -> Option<Bytes> + Send + Sync;

pub struct FakeBroker {
    pub port: u16,
}

impl FakeBroker {
    pub async fn start(hostile: impl Fn(&Asked) -> Option<Bytes> + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hostile: Arc<Hostile> = Arc::new(hostile);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, port, hostile.clone()));
            }
        });
        FakeBroker { port }
    }

    pub fn bootstrap(&self) -> Vec<String> {
        vec![format!("127.0.0.1:{}", self.port)]
    }
}

async fn serve(mut stream: TcpStream, port: u16, hostile: Arc<Hostile>) {
    let mut seen = std::collections::HashMap::<i16, usize>::new();
    loop {
        let Ok(size) = stream.read_i32().await else {
            return;
        };
        let mut frame = vec![0; size as usize];
        if stream.read_exact(&mut frame).await.is_err() {
            return;
        }
        let mut header = &frame[..];
        let api_key = ApiKey::try_from(header.get_i16()).unwrap();
        let version = header.get_i16();
        let correlation_id = header.get_i32();
        let nth = seen.entry(api_key as i16).or_default();
        let asked = Asked {
            api_key,
            version,
            correlation_id,
            nth: *nth,
        };
        *nth += 1;
        let answer = match hostile(&asked) {
            // Held for good: the connection goes on reading the next request.
            Some(answer) if answer.is_empty() => continue,
            Some(answer) => answer,
            None => {
                if api_key == ApiKey::Fetch {
                    // Nothing to read: a fetch waits before it answers empty, as a broker does.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                fair_answer(&asked, port)
            }
        };
        let mut out = BytesMut::new();
        out.put_i32(answer.len() as i32);
        out.extend_from_slice(&answer);
        if stream.write_all(&out).await.is_err() {
            return;
        }
    }
}

/// A response frame: the header `M` wants at `version`, then `body`.
pub fn frame<M: Encodable + HeaderVersion>(asked: &Asked, body: &M) -> Bytes {
    let mut out = BytesMut::new();
    ResponseHeader::default()
        .with_correlation_id(asked.correlation_id)
        .encode(&mut out, M::header_version(asked.version))
        .unwrap();
    body.encode(&mut out, asked.version).unwrap();
    out.freeze()
}

/// A response frame with a body written by hand: the header (v1, with an empty tagged-field
/// section, when `flexible`), then `body`.
pub fn raw_frame(asked: &Asked, flexible: bool, body: &[u8]) -> Bytes {
    let mut out = BytesMut::new();
    out.put_i32(asked.correlation_id);
    if flexible {
        out.put_u8(0);
    }
    out.extend_from_slice(body);
    out.freeze()
}

fn str_bytes(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

/// What a well-behaved broker answers.
fn fair_answer(asked: &Asked, port: u16) -> Bytes {
    match asked.api_key {
        ApiKey::ApiVersions => frame(
            asked,
            &ApiVersionsResponse::default().with_api_keys(
                VERSIONS
                    .iter()
                    .map(|&(key, version)| {
                        ApiVersion::default()
                            .with_api_key(key as i16)
                            .with_min_version(version)
                            .with_max_version(version)
                    })
                    .collect(),
            ),
        ),
        ApiKey::Metadata => frame(
            asked,
            &MetadataResponse::default()
                .with_brokers(vec![MetadataResponseBroker::default()
                    .with_node_id(BrokerId(0))
                    .with_host(str_bytes("127.0.0.1"))
                    .with_port(i32::from(port))])
                .with_topics(vec![MetadataResponseTopic::default()
                    .with_name(Some(TopicName(str_bytes(TOPIC))))
                    .with_partitions(vec![MetadataResponsePartition::default()
                        .with_partition_index(0)
                        .with_leader_id(BrokerId(0))])]),
        ),
        ApiKey::FindCoordinator => frame(
            asked,
            &FindCoordinatorResponse::default().with_coordinators(vec![Coordinator::default()
                .with_node_id(BrokerId(0))
                .with_host(str_bytes("127.0.0.1"))
                .with_port(i32::from(port))]),
        ),
        ApiKey::JoinGroup => frame(
            asked,
            &JoinGroupResponse::default()
                .with_generation_id(1)
                .with_protocol_name(Some(str_bytes("range")))
                .with_leader(str_bytes(MEMBER))
                .with_member_id(str_bytes(MEMBER))
                .with_members(vec![JoinGroupResponseMember::default()
                    .with_member_id(str_bytes(MEMBER))
                    .with_metadata(
                        kbench_loadgen::group::subscription(&[TOPIC.into()]).unwrap(),
                    )]),
        ),
        ApiKey::SyncGroup => frame(
            asked,
            &SyncGroupResponse::default().with_assignment(
                kbench_loadgen::group::encode_assignment(&[(TOPIC.into(), vec![0])]).unwrap(),
            ),
        ),
        ApiKey::OffsetFetch => frame(asked, &OffsetFetchResponse::default()),
        ApiKey::ListOffsets => frame(asked, &ListOffsetsResponse::default()),
        ApiKey::Fetch => frame(asked, &FetchResponse::default()),
        ApiKey::Heartbeat => frame(asked, &HeartbeatResponse::default()),
        ApiKey::OffsetCommit => frame(asked, &OffsetCommitResponse::default()),
        ApiKey::LeaveGroup => frame(asked, &LeaveGroupResponse::default()),
        other => panic!("the fake broker does not serve {other:?}"),
    }
}
