//! Consumer-group membership over the classic group protocol, as Kafka's own consumers speak it:
//! FindCoordinator, JoinGroup (protocol type "consumer", the "range" assignor, subscriptions in
//! the ConsumerProtocolSubscription encoding), SyncGroup (ConsumerProtocolAssignment encoding),
//! Heartbeat, OffsetFetch, OffsetCommit and LeaveGroup. Any Kafka client sees these members as
//! ordinary consumers.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedTopic;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{
    ApiKey, ConsumerProtocolAssignment, ConsumerProtocolSubscription, FindCoordinatorRequest,
    GroupId, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, OffsetCommitRequest,
    OffsetCommitResponse, OffsetFetchRequest, SyncGroupRequest, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, Message, StrBytes};
use kbench_wire::shapes::data;
use kbench_wire::Shape;

use crate::error::{Error, Result};
use crate::metadata::{ApiVersions, ClusterMetadata, MetadataClient};
use kbench_client::SimpleClient;

pub const PROTOCOL_TYPE: &str = "consumer";
pub const ASSIGNOR: &str = "range";
pub const SESSION_TIMEOUT_MS: i32 = 10_000;
pub const REBALANCE_TIMEOUT_MS: i32 = 10_000;
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_millis(500);
pub const COMMIT_INTERVAL: Duration = Duration::from_secs(5);
/// How long joining may keep failing (coordinator moving, loading) before giving up.
const JOIN_PATIENCE: Duration = Duration::from_secs(60);
/// How long a call to the coordinator may go unanswered, by default (`request.timeout.ms`).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// A JoinGroup may wait at the coordinator for the whole rebalance: it is given up only this long
/// past the rebalance timeout, as the Java client does (`JOIN_GROUP_TIMEOUT_LAPSE`).
const JOIN_LAPSE: Duration = Duration::from_secs(5);

const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
const COORDINATOR_NOT_AVAILABLE: i16 = 15;
const NOT_COORDINATOR: i16 = 16;
const ILLEGAL_GENERATION: i16 = 22;
const UNKNOWN_MEMBER_ID: i16 = 25;
const REBALANCE_IN_PROGRESS: i16 = 27;
const MEMBER_ID_REQUIRED: i16 = 79;

/// What a heartbeat or commit error asks of the member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupSignal {
    Fine,
    /// The group is rebalancing or moved on without us: rejoin.
    Rejoin,
    /// The member id is gone: rejoin as a new member.
    RejoinAsNew,
    /// The coordinator moved: find it again, then rejoin.
    FindCoordinator,
    /// Anything else: count it as an error.
    Failed(i16),
}

pub fn signal(code: i16) -> GroupSignal {
    match code {
        0 => GroupSignal::Fine,
        REBALANCE_IN_PROGRESS | ILLEGAL_GENERATION => GroupSignal::Rejoin,
        UNKNOWN_MEMBER_ID => GroupSignal::RejoinAsNew,
        COORDINATOR_LOAD_IN_PROGRESS | COORDINATOR_NOT_AVAILABLE | NOT_COORDINATOR => {
            GroupSignal::FindCoordinator
        }
        code => GroupSignal::Failed(code),
    }
}

/// The worst of an OffsetCommit response's partition error codes (0 when all succeeded).
pub fn commit_code(response: &OffsetCommitResponse) -> i16 {
    response
        .topics
        .iter()
        .flat_map(|t| &t.partitions)
        .map(|p| p.error_code)
        .find(|&c| c != 0)
        .unwrap_or(0)
}

/// A committed or to-be-committed position: (topic, partition, next offset to read).
pub type Position = (String, i32, i64);

/// One member's view of its group: who it is, which generation, and where the coordinator is.
#[derive(Debug)]
pub struct Membership {
    pub group_id: String,
    topics: Vec<String>,
    versions: ApiVersions,
    pub member_id: String,
    pub generation: i32,
    coordinator_addr: Option<String>,
    client: Option<SimpleClient>,
    /// How long a call to the coordinator may go unanswered (a JoinGroup: see [`JOIN_LAPSE`]).
    request_timeout: Duration,
}

impl Membership {
    pub fn new(group_id: String, topics: Vec<String>, versions: ApiVersions) -> Membership {
        Membership {
            group_id,
            topics,
            versions,
            member_id: String::new(),
            generation: -1,
            coordinator_addr: None,
            client: None,
            request_timeout: REQUEST_TIMEOUT,
        }
    }

    /// `request.timeout.ms`: how long a call to the coordinator may go unanswered before the
    /// connection is closed and the coordinator found again.
    pub fn set_request_timeout(&mut self, timeout: Duration) {
        self.request_timeout = timeout;
    }

    /// How long a call of API `key` may go unanswered.
    fn patience(&self, key: i16) -> Duration {
        if key == ApiKey::JoinGroup as i16 {
            let rebalance = Duration::from_millis(REBALANCE_TIMEOUT_MS as u64) + JOIN_LAPSE;
            rebalance.max(self.request_timeout)
        } else {
            self.request_timeout
        }
    }

    pub fn versions(&self) -> &ApiVersions {
        &self.versions
    }

    /// host:port of the coordinator, once found.
    pub fn coordinator_addr(&self) -> Option<&str> {
        self.coordinator_addr.as_deref()
    }

    /// Forgets the coordinator so the next call looks it up again.
    pub fn lose_coordinator(&mut self) {
        self.coordinator_addr = None;
        self.client = None;
    }

    /// Forgets the member id so the next join is as a new member.
    pub fn forget_member(&mut self) {
        self.member_id.clear();
        self.generation = -1;
    }

    async fn coordinator(&mut self, metadata: &mut MetadataClient) -> Result<&mut SimpleClient> {
        if self.client.is_none() {
            let addr = find_coordinator(metadata, &self.group_id).await?;
            self.client = Some(crate::connect::simple(&addr, metadata.security()).await?);
            self.coordinator_addr = Some(addr);
        }
        Ok(self.client.as_mut().expect("connected above"))
    }

    /// One call to the coordinator; connection failures forget it (found again next time), and
    /// so does a call unanswered for too long (a coordinator that holds requests, or a connection
    /// that died without a word, must not hold the member for good).
    async fn call<R>(&mut self, metadata: &mut MetadataClient, request: &R) -> Result<R::Response>
    where
        R: kafka_protocol::protocol::Request + Message,
    {
        let version = self.versions.pick::<R>()?;
        let patience = self.patience(R::KEY);
        let client = self.coordinator(metadata).await?;
        let result = match tokio::time::timeout(patience, client.call(version, request)).await {
            Ok(answered) => answered.map_err(Error::from),
            Err(_) => Err(Error::TimedOut(format!(
                "{}: no answer from the group coordinator {} within {} ms{}: connection closed, finding the coordinator again",
                api_name(R::KEY),
                self.coordinator_addr.as_deref().unwrap_or("?"),
                patience.as_millis(),
                if R::KEY == ApiKey::JoinGroup as i16 {
                    " (the rebalance timeout and 5 s)"
                } else {
                    " (request.timeout.ms)"
                },
            ))),
        };
        if result
            .as_ref()
            .is_err_and(|e| e.is_connection_lost() || matches!(e, Error::TimedOut(_)))
        {
            self.lose_coordinator();
        }
        result
    }

    /// Joins (or rejoins) the group and returns this member's partitions, as (topic, partition).
    /// The leader computes everyone's assignment with the range assignor.
    pub async fn join(
        &mut self,
        metadata: &mut MetadataClient,
        cluster: &ClusterMetadata,
    ) -> Result<Vec<(String, i32)>> {
        let deadline = tokio::time::Instant::now() + JOIN_PATIENCE;
        let mut last = String::from("none");
        while tokio::time::Instant::now() < deadline {
            let code = match self.join_once(metadata, cluster).await {
                Ok(Ok(assignment)) => return Ok(assignment),
                Ok(Err(code)) => code,
                Err(e) if e.is_connection_lost() || matches!(e, Error::TimedOut(_)) => {
                    self.lose_coordinator();
                    last = e.to_string();
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            last = crate::error::kafka_error(code);
            match signal(code) {
                GroupSignal::Rejoin | GroupSignal::Fine => {}
                GroupSignal::RejoinAsNew => self.forget_member(),
                GroupSignal::FindCoordinator => {
                    self.lose_coordinator();
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                GroupSignal::Failed(MEMBER_ID_REQUIRED) => {} // member id set by join_once
                GroupSignal::Failed(code) => {
                    return Err(Error::Kafka {
                        api: "JoinGroup",
                        code,
                    })
                }
            }
        }
        Err(Error::Protocol(format!(
            "group {}: could not join within {JOIN_PATIENCE:?} (last: {last})",
            self.group_id
        )))
    }

    /// One JoinGroup + SyncGroup round; Ok(Err(code)) for a Kafka error to act on.
    async fn join_once(
        &mut self,
        metadata: &mut MetadataClient,
        cluster: &ClusterMetadata,
    ) -> Result<std::result::Result<Vec<(String, i32)>, i16>> {
        let request = JoinGroupRequest::default()
            .with_group_id(GroupId(str_bytes(&self.group_id)))
            .with_session_timeout_ms(SESSION_TIMEOUT_MS)
            .with_rebalance_timeout_ms(REBALANCE_TIMEOUT_MS)
            .with_member_id(str_bytes(&self.member_id))
            .with_protocol_type(StrBytes::from_static_str(PROTOCOL_TYPE))
            .with_protocols(vec![JoinGroupRequestProtocol::default()
                .with_name(StrBytes::from_static_str(ASSIGNOR))
                .with_metadata(subscription(&self.topics)?)]);
        let joined = self.call(metadata, &request).await?;
        if joined.error_code == MEMBER_ID_REQUIRED {
            // Kafka >= 2.2 hands out the member id first and expects the same join with it.
            self.member_id = joined.member_id.to_string();
            return Ok(Err(MEMBER_ID_REQUIRED));
        }
        if joined.error_code != 0 {
            return Ok(Err(joined.error_code));
        }
        self.member_id = joined.member_id.to_string();
        self.generation = joined.generation_id;
        let assignments = if joined.leader == joined.member_id && !joined.skip_assignment {
            let mut subscriptions = vec![];
            for m in &joined.members {
                subscriptions.push((m.member_id.to_string(), subscribed_topics(&m.metadata)?));
            }
            let counts: HashMap<&str, i32> = cluster
                .topics
                .iter()
                .map(|t| (t.name.as_str(), t.leaders.len() as i32))
                .collect();
            let plan = range_assign(&subscriptions, &counts);
            let mut out = vec![];
            for (member, partitions) in plan {
                out.push(
                    SyncGroupRequestAssignment::default()
                        .with_member_id(str_bytes(&member))
                        .with_assignment(encode_assignment(&partitions)?),
                );
            }
            out
        } else {
            vec![]
        };
        let protocol_name = joined
            .protocol_name
            .clone()
            .unwrap_or_else(|| StrBytes::from_static_str(ASSIGNOR));
        let request = SyncGroupRequest::default()
            .with_group_id(GroupId(str_bytes(&self.group_id)))
            .with_generation_id(self.generation)
            .with_member_id(str_bytes(&self.member_id))
            .with_protocol_type(Some(StrBytes::from_static_str(PROTOCOL_TYPE)))
            .with_protocol_name(Some(protocol_name))
            .with_assignments(assignments);
        let synced = self.call(metadata, &request).await?;
        if synced.error_code != 0 {
            return Ok(Err(synced.error_code));
        }
        Ok(Ok(decode_assignment(&synced.assignment)?))
    }

    /// Committed offsets of `partitions` (those without one are left out).
    pub async fn committed(
        &mut self,
        metadata: &mut MetadataClient,
        partitions: &[(String, i32)],
    ) -> Result<HashMap<(String, i32), i64>> {
        let version = self.versions.pick::<OffsetFetchRequest>()?;
        let request = offset_fetch_request(&self.group_id, partitions, version);
        let response = self.call(metadata, &request).await?;
        let mut out = HashMap::new();
        let mut add = |topic: &str, partition: i32, offset: i64, code: i16| -> Result<()> {
            if code != 0 {
                return Err(Error::Kafka {
                    api: "OffsetFetch",
                    code,
                });
            }
            if offset >= 0 {
                out.insert((topic.to_string(), partition), offset);
            }
            Ok(())
        };
        if version >= 8 {
            for group in &response.groups {
                if group.error_code != 0 {
                    return Err(Error::Kafka {
                        api: "OffsetFetch",
                        code: group.error_code,
                    });
                }
                for t in &group.topics {
                    for p in &t.partitions {
                        add(
                            t.name.as_str(),
                            p.partition_index,
                            p.committed_offset,
                            p.error_code,
                        )?;
                    }
                }
            }
        } else {
            if response.error_code != 0 {
                return Err(Error::Kafka {
                    api: "OffsetFetch",
                    code: response.error_code,
                });
            }
            for t in &response.topics {
                for p in &t.partitions {
                    add(
                        t.name.as_str(),
                        p.partition_index,
                        p.committed_offset,
                        p.error_code,
                    )?;
                }
            }
        }
        Ok(out)
    }

    pub fn commit_request(&self, positions: &[Position]) -> OffsetCommitRequest {
        let mut topics: Vec<OffsetCommitRequestTopic> = vec![];
        for (topic, partition, offset) in positions {
            let p = OffsetCommitRequestPartition::default()
                .with_partition_index(*partition)
                .with_committed_offset(*offset);
            match topics.iter_mut().find(|t| t.name.as_str() == topic) {
                Some(t) => t.partitions.push(p),
                None => topics.push(
                    OffsetCommitRequestTopic::default()
                        .with_name(TopicName(str_bytes(topic)))
                        .with_partitions(vec![p]),
                ),
            }
        }
        OffsetCommitRequest::default()
            .with_group_id(GroupId(str_bytes(&self.group_id)))
            .with_generation_id_or_member_epoch(self.generation)
            .with_member_id(str_bytes(&self.member_id))
            .with_retention_time_ms(-1)
            .with_topics(topics)
    }

    /// Commits and waits for the answer; returns the first error code (0 when all went in).
    pub async fn commit(
        &mut self,
        metadata: &mut MetadataClient,
        positions: &[Position],
    ) -> Result<i16> {
        if positions.is_empty() {
            return Ok(0);
        }
        let request = self.commit_request(positions);
        Ok(commit_code(&self.call(metadata, &request).await?))
    }

    pub fn heartbeat_request(&self) -> HeartbeatRequest {
        HeartbeatRequest::default()
            .with_group_id(GroupId(str_bytes(&self.group_id)))
            .with_generation_id(self.generation)
            .with_member_id(str_bytes(&self.member_id))
    }

    /// Leaves the group so the others rebalance at once rather than after the session timeout.
    pub async fn leave(&mut self, metadata: &mut MetadataClient) -> Result<()> {
        if self.member_id.is_empty() {
            return Ok(());
        }
        let version = self.versions.pick::<LeaveGroupRequest>()?;
        let mut request =
            LeaveGroupRequest::default().with_group_id(GroupId(str_bytes(&self.group_id)));
        if version >= 3 {
            request.members =
                vec![MemberIdentity::default().with_member_id(str_bytes(&self.member_id))];
        } else {
            request.member_id = str_bytes(&self.member_id);
        }
        let response = self.call(metadata, &request).await?;
        self.forget_member();
        if response.error_code != 0 {
            return Err(Error::Kafka {
                api: "LeaveGroup",
                code: response.error_code,
            });
        }
        Ok(())
    }
}

/// The coordinator of `group`, as host:port.
pub async fn find_coordinator(metadata: &mut MetadataClient, group: &str) -> Result<String> {
    let version = metadata.versions().pick::<FindCoordinatorRequest>()?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut request = FindCoordinatorRequest::default().with_key_type(0);
        if version >= 4 {
            request.coordinator_keys = vec![str_bytes(group)];
        } else {
            request.key = str_bytes(group);
        }
        let response = metadata.call(&request).await?;
        let (code, host, port) = match response.coordinators.first() {
            Some(c) if version >= 4 => (c.error_code, c.host.to_string(), c.port),
            _ => (
                response.error_code,
                response.host.to_string(),
                response.port,
            ),
        };
        match code {
            0 => return Ok(format!("{host}:{port}")),
            COORDINATOR_LOAD_IN_PROGRESS | COORDINATOR_NOT_AVAILABLE | NOT_COORDINATOR
                if tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            code => {
                return Err(Error::Kafka {
                    api: "FindCoordinator",
                    code,
                })
            }
        }
    }
}

/// The committed offsets of `group` for `topics`' partitions (as any client would read them).
pub async fn committed_offsets(
    bootstrap: &[String],
    group: &str,
    topics: &[String],
) -> Result<Vec<Position>> {
    let mut metadata = MetadataClient::connect(bootstrap).await?;
    let cluster = metadata.fetch(topics, Duration::from_secs(10)).await?;
    let partitions: Vec<(String, i32)> = cluster
        .topics
        .iter()
        .flat_map(|t| (0..t.leaders.len() as i32).map(move |p| (t.name.clone(), p)))
        .collect();
    let mut member = Membership::new(
        group.to_string(),
        topics.to_vec(),
        metadata.versions().clone(),
    );
    let committed = member.committed(&mut metadata, &partitions).await?;
    let mut out: Vec<Position> = committed.into_iter().map(|((t, p), o)| (t, p, o)).collect();
    out.sort();
    Ok(out)
}

fn offset_fetch_request(
    group: &str,
    partitions: &[(String, i32)],
    version: i16,
) -> OffsetFetchRequest {
    let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (t, p) in partitions {
        by_topic.entry(t.as_str()).or_default().push(*p);
    }
    if version >= 8 {
        let topics = by_topic
            .into_iter()
            .map(|(t, ps)| {
                OffsetFetchRequestTopics::default()
                    .with_name(TopicName(str_bytes(t)))
                    .with_partition_indexes(ps)
            })
            .collect();
        OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
            .with_group_id(GroupId(str_bytes(group)))
            .with_member_epoch(-1)
            .with_topics(Some(topics))])
    } else {
        let topics = by_topic
            .into_iter()
            .map(|(t, ps)| {
                OffsetFetchRequestTopic::default()
                    .with_name(TopicName(str_bytes(t)))
                    .with_partition_indexes(ps)
            })
            .collect();
        OffsetFetchRequest::default()
            .with_group_id(GroupId(str_bytes(group)))
            .with_topics(Some(topics))
    }
}

/// The version of the consumer protocol's embedded messages we write: v0, which every client
/// reads (later versions only add fields at the end).
const EMBEDDED_VERSION: i16 = 0;

/// ConsumerProtocolSubscription: a version, then the topics (no user data).
pub fn subscription(topics: &[String]) -> Result<Bytes> {
    let message = ConsumerProtocolSubscription::default()
        .with_topics(topics.iter().map(|t| str_bytes(t)).collect());
    encode_embedded(&message)
}

/// The topics of a member's ConsumerProtocolSubscription, whatever version it was written in.
pub fn subscribed_topics(metadata: &Bytes) -> Result<Vec<String>> {
    let message: ConsumerProtocolSubscription =
        decode_embedded(metadata, &data::CONSUMER_PROTOCOL_SUBSCRIPTION)?;
    Ok(message.topics.iter().map(|t| t.to_string()).collect())
}

/// ConsumerProtocolAssignment of (topic, partitions).
pub fn encode_assignment(partitions: &[(String, Vec<i32>)]) -> Result<Bytes> {
    let message = ConsumerProtocolAssignment::default().with_assigned_partitions(
        partitions
            .iter()
            .map(|(t, ps)| {
                AssignedTopic::default()
                    .with_topic(TopicName(str_bytes(t)))
                    .with_partitions(ps.clone())
            })
            .collect(),
    );
    encode_embedded(&message)
}

/// The (topic, partition) pairs of a ConsumerProtocolAssignment; empty bytes assign nothing.
pub fn decode_assignment(bytes: &Bytes) -> Result<Vec<(String, i32)>> {
    if bytes.is_empty() {
        return Ok(vec![]);
    }
    let message: ConsumerProtocolAssignment =
        decode_embedded(bytes, &data::CONSUMER_PROTOCOL_ASSIGNMENT)?;
    let mut out = vec![];
    for t in &message.assigned_partitions {
        for &p in &t.partitions {
            out.push((t.topic.to_string(), p));
        }
    }
    out.sort();
    Ok(out)
}

fn encode_embedded<M: Encodable>(message: &M) -> Result<Bytes> {
    let mut buf = BytesMut::new();
    buf.put_i16(EMBEDDED_VERSION);
    message
        .encode(&mut buf, EMBEDDED_VERSION)
        .map_err(Error::protocol)?;
    Ok(buf.freeze())
}

/// Decodes a consumer protocol message another member wrote (`shape` is its wire shape), once
/// walked: its counts are as hostile as any from the network.
fn decode_embedded<M: Decodable + Message>(bytes: &Bytes, shape: &Shape) -> Result<M> {
    let mut buf = bytes.clone();
    if buf.remaining() < 2 {
        return Err(Error::protocol("consumer protocol message too short"));
    }
    // A newer version than we know starts with the fields we know: read it as our latest.
    let version = buf.get_i16().clamp(M::VERSIONS.min, M::VERSIONS.max);
    kbench_wire::walk(shape, version, &buf).map_err(Error::protocol)?;
    M::decode(&mut buf, version).map_err(Error::protocol)
}

/// Kafka's range assignor: per topic, members subscribed to it in member-id order each take a
/// contiguous range of partitions, the first `partitions % members` one more than the rest.
/// Topics whose partition count is unknown here are not assigned.
pub fn range_assign(
    subscriptions: &[(String, Vec<String>)],
    partition_counts: &HashMap<&str, i32>,
) -> BTreeMap<String, Vec<(String, Vec<i32>)>> {
    let mut plan: BTreeMap<String, Vec<(String, Vec<i32>)>> = subscriptions
        .iter()
        .map(|(m, _)| (m.clone(), vec![]))
        .collect();
    let mut by_topic: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (member, topics) in subscriptions {
        for t in topics {
            by_topic
                .entry(t.as_str())
                .or_default()
                .push(member.as_str());
        }
    }
    for (topic, mut members) in by_topic {
        let Some(&count) = partition_counts.get(topic) else {
            continue;
        };
        members.sort_unstable();
        members.dedup();
        let n = members.len() as i32;
        let (each, extra) = (count / n, count % n);
        for (i, member) in members.into_iter().enumerate() {
            let i = i as i32;
            let start = each * i + i.min(extra);
            let len = each + i32::from(i < extra);
            if len > 0 {
                plan.get_mut(member)
                    .expect("every subscriber has a plan")
                    .push((topic.to_string(), (start..start + len).collect()));
            }
        }
    }
    plan
}

fn str_bytes(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_assignor_splits_like_kafka() {
        let subs = vec![
            ("b".to_string(), vec!["t".to_string(), "u".to_string()]),
            ("a".to_string(), vec!["t".to_string(), "u".to_string()]),
        ];
        let counts: HashMap<&str, i32> = [("t", 3), ("u", 2)].into_iter().collect();
        let plan = range_assign(&subs, &counts);
        assert_eq!(
            plan["a"],
            vec![("t".to_string(), vec![0, 1]), ("u".to_string(), vec![0])]
        );
        assert_eq!(
            plan["b"],
            vec![("t".to_string(), vec![2]), ("u".to_string(), vec![1])]
        );
    }

    #[test]
    fn more_members_than_partitions_leaves_some_idle() {
        let subs: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|m| (m.to_string(), vec!["t".to_string()]))
            .collect();
        let counts: HashMap<&str, i32> = [("t", 2)].into_iter().collect();
        let plan = range_assign(&subs, &counts);
        assert_eq!(plan["a"], vec![("t".to_string(), vec![0])]);
        assert_eq!(plan["b"], vec![("t".to_string(), vec![1])]);
        assert!(plan["c"].is_empty());
    }

    #[test]
    fn embedded_messages_round_trip_in_the_standard_layout() {
        let sub = subscription(&["a".into(), "bc".into()]).unwrap();
        // version 0, 2 topics, "a", "bc", null user data
        assert_eq!(
            &sub[..],
            &[0, 0, 0, 0, 0, 2, 0, 1, b'a', 0, 2, b'b', b'c', 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(subscribed_topics(&sub).unwrap(), vec!["a", "bc"]);
        let assignment = encode_assignment(&[("t".into(), vec![1, 2])]).unwrap();
        assert_eq!(
            decode_assignment(&assignment).unwrap(),
            vec![("t".to_string(), 1), ("t".to_string(), 2)]
        );
        assert!(decode_assignment(&Bytes::new()).unwrap().is_empty());
    }
}

/// An API's name as the protocol guide writes it (`JoinGroup`), from its key.
fn api_name(key: i16) -> String {
    ApiKey::try_from(key).map_or_else(|_| format!("API {key}"), |k| format!("{k:?}"))
}
