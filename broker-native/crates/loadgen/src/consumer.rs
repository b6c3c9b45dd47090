//! The consumer: a member of a consumer group (see `group`), one fetch in flight per leader,
//! counting records and value bytes and measuring end-to-end latency from the send time each value
//! carries, without copying values.
//!
//! Group: it joins `group_id` with the range assignor, starts each assigned partition at the
//! group's committed offset (or, without one, the earliest or latest offset), heartbeats and
//! commits in the background, and on a rebalance commits, rejoins and picks up its new partitions.
//! On stop it commits its positions and leaves the group.
//!
//! Pipelining: as soon as a fetch response arrives its next offsets are read from the batch
//! headers and the next fetch goes out; the records are counted while that fetch is in flight.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::{
    FetchRequest, FetchResponse, HeartbeatRequest, ListOffsetsRequest, OffsetCommitRequest,
    TopicName,
};
use kafka_protocol::protocol::StrBytes;
use tokio::time::Instant;

use kbench_client::{decode_response, Backoff, Connection, Pool, Response, Security};

use crate::batch_reader::{for_each_record, next_offset};
use crate::engine_task::{EngineTask, Shared};
use crate::error::kafka_error;
use crate::error::{Error, Result};
use crate::group::{
    commit_code, signal, GroupSignal, Membership, Position, COMMIT_INTERVAL, HEARTBEAT_INTERVAL,
};
use crate::metadata::{is_retriable, ApiVersions, ClusterMetadata, MetadataClient};
use crate::payload::now_micros;
use crate::stats::{IntervalStats, SharedStats};

const MAX_WAIT_MS: i32 = 250;
/// How long past its max wait a fetch may go unanswered (`request.timeout.ms`, the Java client's
/// default).
const REQUEST_TIMEOUT_MS: i32 = 30_000;
const MIN_BYTES: i32 = 1;
const MAX_BYTES: i32 = 64 << 20;
const PARTITION_MAX_BYTES: i32 = 8 << 20;
const RETRY_BACKOFF: Duration = Duration::from_millis(100);
const OFFSET_OUT_OF_RANGE: i16 = 1;
/// Stamps further than this from the receive time are not send times (a foreign value).
const PLAUSIBLE_STAMP_MICROS: f64 = 86_400e6;
/// Fetches a connection to a leader lets await answers: one, plus those a rebalance left in
/// flight (their answers are dropped).
const FETCH_WINDOW: usize = 4;
/// Heartbeats and commits awaiting the coordinator's answer.
const GROUP_WINDOW: usize = 4;
/// How long the final commit and LeaveGroup may take on stop.
const GOODBYE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartAt {
    Earliest,
    Latest,
}

#[derive(Debug, Clone)]
pub struct ConsumerConfig {
    pub bootstrap: Vec<String>,
    pub topics: Vec<String>,
    /// Where partitions without a committed offset start.
    pub start: StartAt,
    pub group_id: String,
    /// This machine's clock minus the controller's, in µs (0 when one machine does everything):
    /// end-to-end latency is `(now - clock_offset_micros) - stamp`, on the producer's timeline.
    pub clock_offset_micros: f64,
}

/// Kafka consumer properties beyond the scenario's knobs, by their Java names; the defaults are
/// what the engine did before they could be set.
#[derive(Debug, Clone, Default)]
pub struct ConsumerProperties {
    /// `fetch.min.bytes`: bytes a fetch waits for (up to `fetch.max.wait.ms`). Default 1.
    pub fetch_min_bytes: Option<i32>,
    /// `fetch.max.wait.ms`: how long the broker may hold a fetch. Default 250.
    pub fetch_max_wait_ms: Option<i32>,
    /// `fetch.max.bytes`: bytes a fetch response may hold. Default 64 MiB.
    pub fetch_max_bytes: Option<i32>,
    /// `max.partition.fetch.bytes`: bytes per partition in a fetch response. Default 8 MiB.
    pub max_partition_fetch_bytes: Option<i32>,
    /// `enable.auto.commit`: commit positions periodically, on a rebalance and on stop. Default true.
    pub enable_auto_commit: Option<bool>,
    /// `auto.commit.interval.ms`: time between periodic commits. Default 5000.
    pub auto_commit_interval_ms: Option<u32>,
    /// `request.timeout.ms`: how long past its max wait a fetch may go unanswered before the
    /// consumer closes the connection and fetches again. Default 30 s.
    pub request_timeout_ms: Option<i32>,
    /// `security.protocol`, `ssl.*`, `sasl.*`: TLS and SASL for every connection. Default PLAINTEXT.
    pub security: Security,
}

/// The properties with every default filled in.
#[derive(Debug, Clone, Copy)]
struct Fetching {
    min_bytes: i32,
    max_wait_ms: i32,
    max_bytes: i32,
    partition_max_bytes: i32,
    auto_commit: bool,
    commit_interval: Duration,
    request_timeout_ms: i32,
}

impl Fetching {
    fn from(p: &ConsumerProperties) -> Result<Fetching> {
        let out = Fetching {
            min_bytes: p.fetch_min_bytes.unwrap_or(MIN_BYTES),
            max_wait_ms: p.fetch_max_wait_ms.unwrap_or(MAX_WAIT_MS),
            max_bytes: p.fetch_max_bytes.unwrap_or(MAX_BYTES),
            partition_max_bytes: p.max_partition_fetch_bytes.unwrap_or(PARTITION_MAX_BYTES),
            auto_commit: p.enable_auto_commit.unwrap_or(true),
            commit_interval: p
                .auto_commit_interval_ms
                .map_or(COMMIT_INTERVAL, |ms| Duration::from_millis(u64::from(ms))),
            request_timeout_ms: p.request_timeout_ms.unwrap_or(REQUEST_TIMEOUT_MS),
        };
        if out.min_bytes < 0 || out.max_wait_ms < 0 {
            return Err(Error::Config(
                "fetch.min.bytes and fetch.max.wait.ms must not be negative".into(),
            ));
        }
        if out.max_bytes <= 0
            || out.partition_max_bytes <= 0
            || out.commit_interval.is_zero()
            || out.request_timeout_ms <= 0
        {
            return Err(Error::Config(
                "fetch.max.bytes, max.partition.fetch.bytes, auto.commit.interval.ms and request.timeout.ms must be positive"
                    .into(),
            ));
        }
        Ok(out)
    }

    fn effective(&self, start: StartAt) -> Vec<(&'static str, String)> {
        let reset = match start {
            StartAt::Earliest => "earliest",
            StartAt::Latest => "latest",
        };
        vec![
            ("auto.offset.reset", reset.to_string()),
            ("fetch.min.bytes", self.min_bytes.to_string()),
            ("fetch.max.wait.ms", self.max_wait_ms.to_string()),
            ("fetch.max.bytes", self.max_bytes.to_string()),
            (
                "max.partition.fetch.bytes",
                self.partition_max_bytes.to_string(),
            ),
            ("enable.auto.commit", self.auto_commit.to_string()),
            (
                "auto.commit.interval.ms",
                self.commit_interval.as_millis().to_string(),
            ),
            ("request.timeout.ms", self.request_timeout_ms.to_string()),
        ]
    }
}

/// A running consumer.
#[derive(Debug)]
pub struct Consumer {
    task: EngineTask,
    assignment: Arc<Mutex<Vec<(String, i32)>>>,
    effective: Vec<(&'static str, String)>,
}

impl Consumer {
    /// Resolves once the consumer has joined its group, received its partitions and knows where
    /// to start reading them, so records produced afterwards are seen.
    pub async fn start(config: ConsumerConfig) -> Result<Consumer> {
        Self::start_with(config, ConsumerProperties::default()).await
    }

    /// Like `start`, with Kafka consumer properties beyond the knobs.
    pub async fn start_with(
        config: ConsumerConfig,
        properties: ConsumerProperties,
    ) -> Result<Consumer> {
        let fetching = Fetching::from(&properties)?;
        if config.group_id.is_empty() {
            return Err(Error::Config("groupId is empty".into()));
        }
        if config.topics.is_empty() {
            return Err(Error::Config("no topics".into()));
        }
        if !config.clock_offset_micros.is_finite() {
            return Err(Error::Config(
                "clockOffsetMicros must be a finite number".into(),
            ));
        }
        let mut metadata =
            MetadataClient::connect_with(&config.bootstrap, &properties.security).await?;
        metadata.set_request_timeout(Duration::from_millis(fetching.request_timeout_ms as u64));
        let cluster = metadata
            .fetch(&config.topics, Duration::from_secs(10))
            .await?;
        let versions = metadata.versions().clone();
        let fetch_version = versions.pick::<FetchRequest>()?;
        let mut group = Membership::new(
            config.group_id.clone(),
            config.topics.clone(),
            versions.clone(),
        );
        group.set_request_timeout(Duration::from_millis(fetching.request_timeout_ms as u64));
        let assigned =
            join_and_position(&mut group, &mut metadata, &cluster, &versions, config.start).await?;
        let assignment = Arc::new(Mutex::new(names(&cluster, &assigned)));
        let shared = Arc::new(Shared::default());
        let now = Instant::now();
        let effective = fetching.effective(config.start);
        let engine = Engine {
            fetching_with: fetching,
            topic_names: cluster
                .topics
                .iter()
                .map(|t| TopicName(StrBytes::from_string(t.name.clone())))
                .collect(),
            config,
            shared: shared.clone(),
            metadata,
            cluster,
            versions,
            fetch_version,
            assigned,
            connections: Pool::new(crate::connect::options(FETCH_WINDOW, &properties.security)),
            fetching: HashMap::new(),
            refresh_needed: false,
            reset: vec![],
            retry_at: None,
            group,
            // A failed connect to the coordinator makes the member find it again: no back-off.
            coordinator: Pool::new(
                crate::connect::options(GROUP_WINDOW, &properties.security)
                    .with_backoff(Backoff::constant(Duration::ZERO)),
            ),
            group_calls: HashMap::new(),
            next_heartbeat: now + HEARTBEAT_INTERVAL,
            next_commit: now + fetching.commit_interval,
            rejoin: None,
            assignment: assignment.clone(),
        };
        Ok(Consumer {
            task: EngineTask::spawn(shared, engine.run()),
            assignment,
            effective,
        })
    }

    /// The Kafka consumer properties this consumer runs with, by their Java names, defaults included.
    pub fn effective_properties(&self) -> &[(&'static str, String)] {
        &self.effective
    }

    pub fn take_interval(&self) -> IntervalStats {
        self.task.take_interval()
    }

    pub fn last_error(&self) -> Option<String> {
        self.task.last_error()
    }

    /// The partitions this member reads now, as (topic, partition), sorted; empty while it
    /// rejoins its group.
    pub fn assignment(&self) -> Vec<(String, i32)> {
        self.assignment
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Commits, leaves the group and closes the connections. Idempotent.
    pub async fn stop(&self) {
        self.task.stop().await;
    }
}

#[derive(Debug, Clone)]
struct Assigned {
    topic: usize,
    partition: i32,
    leader: i32,
    offset: i64,
}

fn names(cluster: &ClusterMetadata, assigned: &[Assigned]) -> Vec<(String, i32)> {
    let mut out: Vec<(String, i32)> = assigned
        .iter()
        .map(|a| (cluster.topics[a.topic].name.clone(), a.partition))
        .collect();
    out.sort();
    out
}

/// Joins the group and positions each assigned partition: at the group's committed offset, or
/// at the earliest or latest offset when it has none.
async fn join_and_position(
    group: &mut Membership,
    metadata: &mut MetadataClient,
    cluster: &ClusterMetadata,
    versions: &ApiVersions,
    start: StartAt,
) -> Result<Vec<Assigned>> {
    let partitions = group.join(metadata, cluster).await?;
    let committed = group.committed(metadata, &partitions).await?;
    let mut assigned = vec![];
    let mut unpositioned = vec![];
    for (name, partition) in partitions {
        // Partitions of topics we were not asked to read (another member's subscription) are
        // not read.
        let Some(topic) = cluster.topics.iter().position(|t| t.name == name) else {
            continue;
        };
        let Some(&leader) = cluster.topics[topic].leaders.get(partition as usize) else {
            continue;
        };
        let offset = committed.get(&(name, partition)).copied();
        if offset.is_none() {
            unpositioned.push(assigned.len());
        }
        assigned.push(Assigned {
            topic,
            partition,
            leader,
            offset: offset.unwrap_or(0),
        });
    }
    if !unpositioned.is_empty() {
        let timestamp = match start {
            StartAt::Earliest => -2,
            StartAt::Latest => -1,
        };
        list_offsets(
            cluster,
            versions,
            &mut assigned,
            &unpositioned,
            timestamp,
            metadata.security(),
        )
        .await?;
    }
    Ok(assigned)
}
/// Sets the offsets of `which` to the offset at `timestamp` (-2 earliest, -1 latest), asking
/// each partition's leader.
async fn list_offsets(
    cluster: &ClusterMetadata,
    versions: &ApiVersions,
    assigned: &mut [Assigned],
    which: &[usize],
    timestamp: i64,
    security: &Security,
) -> Result<()> {
    let version = versions.pick::<ListOffsetsRequest>()?;
    let mut by_leader: HashMap<i32, Vec<usize>> = HashMap::new();
    for &i in which {
        by_leader.entry(assigned[i].leader).or_default().push(i);
    }
    for (leader, slots) in by_leader {
        let addr = cluster
            .leader_addr(leader)
            .ok_or_else(|| Error::Protocol(format!("no address for node {leader}")))?;
        let mut client = crate::connect::simple(addr, security).await?;
        let mut topics: Vec<ListOffsetsTopic> = vec![];
        for &i in &slots {
            let a = &assigned[i];
            let name = TopicName(StrBytes::from_string(cluster.topics[a.topic].name.clone()));
            let partition = ListOffsetsPartition::default()
                .with_partition_index(a.partition)
                .with_timestamp(timestamp);
            match topics.iter_mut().find(|t| t.name == name) {
                Some(t) => t.partitions.push(partition),
                None => topics.push(
                    ListOffsetsTopic::default()
                        .with_name(name)
                        .with_partitions(vec![partition]),
                ),
            }
        }
        let request = ListOffsetsRequest::default().with_topics(topics);
        let response = client.call(version, &request).await?;
        for topic in &response.topics {
            for p in &topic.partitions {
                if p.error_code != 0 {
                    return Err(Error::Kafka {
                        api: "ListOffsets",
                        code: p.error_code,
                    });
                }
                for &i in &slots {
                    let a = &mut assigned[i];
                    if cluster.topics[a.topic].name == topic.name.as_str()
                        && a.partition == p.partition_index
                    {
                        a.offset = p.offset;
                    }
                }
            }
        }
    }
    Ok(())
}

/// A heartbeat or commit awaiting the coordinator's answer, with the version it was sent at.
#[derive(Debug, Clone, Copy)]
enum GroupCall {
    Heartbeat(i16),
    Commit(i16),
}

/// A fetch awaiting its answer.
#[derive(Debug)]
struct InFlightFetch {
    connection: u64,
    correlation_id: i32,
    /// The assigned slots it asked for.
    slots: Vec<usize>,
    /// Unanswered past this, it is given up (its max wait plus `request.timeout.ms`).
    due: Instant,
}

struct Engine {
    config: ConsumerConfig,
    /// Fetch sizes and waits, and offset commits.
    fetching_with: Fetching,
    shared: Arc<Shared>,
    metadata: MetadataClient,
    cluster: ClusterMetadata,
    versions: ApiVersions,
    fetch_version: i16,
    topic_names: Vec<TopicName>,
    assigned: Vec<Assigned>,
    /// A pipelined connection per leader, for fetches.
    connections: Pool,
    /// The fetch in flight per node.
    fetching: HashMap<i32, InFlightFetch>,
    refresh_needed: bool,
    /// Slots whose offset fell out of range, reset to the earliest offset.
    reset: Vec<usize>,
    retry_at: Option<Instant>,
    group: Membership,
    /// Pipelined connection to the coordinator for heartbeats and periodic commits (apart from
    /// the fetches, so that a fetch waiting on the broker never holds a heartbeat back).
    coordinator: Pool,
    /// Heartbeats and commits sent on it and not yet answered, each with when it is given up.
    group_calls: HashMap<i32, (GroupCall, Instant)>,
    next_heartbeat: Instant,
    next_commit: Instant,
    /// Set when the group asked us to rejoin.
    rejoin: Option<GroupSignal>,
    assignment: Arc<Mutex<Vec<(String, i32)>>>,
}

impl Engine {
    fn stats(&self) -> &SharedStats {
        &self.shared.stats
    }

    async fn run(mut self) {
        while !self.shared.stopping.load(Ordering::Acquire) {
            let now = Instant::now();
            if self.retry_at.is_none_or(|t| now >= t) {
                self.retry_at = None;
                if let Some(why) = self.rejoin {
                    self.rebalance(why).await;
                    continue;
                }
                self.recover().await;
                let mut leaders: Vec<i32> = self.assigned.iter().map(|a| a.leader).collect();
                leaders.sort_unstable();
                leaders.dedup();
                for node in leaders {
                    if !self.fetching.contains_key(&node) {
                        self.send_fetch(node).await;
                    }
                }
            }
            let now = Instant::now();
            self.expire_fetches(now);
            self.expire_group_calls(now);
            if now >= self.next_heartbeat {
                self.next_heartbeat = now + HEARTBEAT_INTERVAL;
                let request = self.group.heartbeat_request();
                self.send_group(GroupCall::Heartbeat, &request).await;
            }
            if self.fetching_with.auto_commit && now >= self.next_commit {
                self.next_commit = now + self.fetching_with.commit_interval;
                let positions = self.positions();
                if !positions.is_empty() {
                    let request = self.group.commit_request(&positions);
                    self.send_group(GroupCall::Commit, &request).await;
                }
            }
            let retry_at = self.retry_at;
            let group_at = Some(if self.fetching_with.auto_commit {
                self.next_heartbeat.min(self.next_commit)
            } else {
                self.next_heartbeat
            });
            tokio::select! {
                biased;
                _ = self.shared.stop.notified() => {}
                response = self.connections.recv() => self.on_response(response).await,
                response = self.coordinator.recv() => self.on_group_response(response),
                _ = sleep_until(retry_at) => {}
                _ = sleep_until(group_at) => {}
            }
        }
        self.connections.clear();
        self.coordinator.clear();
        self.goodbye().await;
    }

    /// On stop: commits where this member got to, then leaves the group.
    async fn goodbye(&mut self) {
        if self.fetching_with.auto_commit && self.rejoin != Some(GroupSignal::RejoinAsNew) {
            let positions = self.positions();
            let commit = self.group.commit(&mut self.metadata, &positions);
            match tokio::time::timeout(GOODBYE_TIMEOUT, commit).await {
                Ok(Ok(0)) => {}
                Ok(Ok(code)) => self
                    .stats()
                    .error(format!("final offset commit: {}", kafka_error(code))),
                Ok(Err(e)) => self.stats().error(format!("final offset commit: {e}")),
                Err(_) => self.stats().error("final offset commit timed out"),
            }
        }
        let leave = self.group.leave(&mut self.metadata);
        match tokio::time::timeout(GOODBYE_TIMEOUT, leave).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => self.stats().error(format!("leaving the group: {e}")),
            Err(_) => self.stats().error("leaving the group timed out"),
        }
    }

    /// The next offset to read of each assigned partition.
    fn positions(&self) -> Vec<Position> {
        self.assigned
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.reset.contains(i))
            .map(|(_, a)| {
                (
                    self.cluster.topics[a.topic].name.clone(),
                    a.partition,
                    a.offset,
                )
            })
            .collect()
    }

    fn publish_assignment(&self) {
        *self.assignment.lock().unwrap_or_else(|e| e.into_inner()) =
            names(&self.cluster, &self.assigned);
    }

    /// Gives up the partitions (committing where it got to), rejoins and takes the new ones.
    async fn rebalance(&mut self, why: GroupSignal) {
        // Fetches in flight are for the old assignment: their responses are ignored.
        self.fetching.clear();
        self.coordinator.clear();
        self.group_calls.clear();
        match why {
            GroupSignal::RejoinAsNew => self.group.forget_member(),
            _ => {
                // Without auto commit the partitions go back uncommitted, as a Java consumer's would.
                let positions = self.positions();
                let commit = if self.fetching_with.auto_commit {
                    Some(self.group.commit(&mut self.metadata, &positions).await)
                } else {
                    None
                };
                match commit {
                    Some(Ok(code)) => {
                        if let GroupSignal::Failed(code) = signal(code) {
                            self.stats()
                                .error(format!("offset commit: {}", kafka_error(code)));
                        }
                    }
                    Some(Err(e)) => self.stats().error(format!("offset commit: {e}")),
                    None => {}
                }
                if why == GroupSignal::FindCoordinator {
                    self.group.lose_coordinator();
                }
            }
        }
        self.assigned.clear();
        self.reset.clear();
        self.publish_assignment();
        let shared = self.shared.clone();
        let joined = tokio::select! {
            joined = join_and_position(
                &mut self.group,
                &mut self.metadata,
                &self.cluster,
                &self.versions,
                self.config.start,
            ) => joined,
            _ = shared.stop.notified() => return,
        };
        match joined {
            Ok(assigned) => {
                self.assigned = assigned;
                self.rejoin = None;
                self.publish_assignment();
                let now = Instant::now();
                self.next_heartbeat = now + HEARTBEAT_INTERVAL;
                self.next_commit = now + self.fetching_with.commit_interval;
            }
            Err(e) => {
                self.stats().error(format!("rejoining group: {e}"));
                self.group.lose_coordinator();
                self.retry_at = Some(Instant::now() + RETRY_BACKOFF);
            }
        }
    }

    /// Sends a heartbeat or commit to the coordinator without waiting for the answer.
    async fn send_group<R>(&mut self, call: fn(i16) -> GroupCall, request: &R)
    where
        R: kafka_protocol::protocol::Request + kafka_protocol::protocol::Message,
    {
        if self.rejoin.is_some() || self.group_calls.len() >= 4 {
            return;
        }
        let version = match self.versions.pick::<R>() {
            Ok(v) => v,
            Err(e) => {
                self.stats().error(e.to_string());
                return;
            }
        };
        let Some(addr) = self.group.coordinator_addr() else {
            self.rejoin = Some(GroupSignal::FindCoordinator);
            return;
        };
        let connection = match self.coordinator.connect(addr).await {
            Ok(c) => c,
            Err(e) => {
                self.shared.stats.error(format!("group coordinator: {e}"));
                self.rejoin = Some(GroupSignal::FindCoordinator);
                return;
            }
        };
        match connection.send(version, request, true).await {
            Ok((correlation_id, _)) => {
                let due = Instant::now()
                    + Duration::from_millis(self.fetching_with.request_timeout_ms as u64);
                self.group_calls
                    .insert(correlation_id, (call(version), due));
            }
            Err(e) => {
                self.stats().error(format!("group coordinator: {e}"));
                self.coordinator.clear();
                self.group_calls.clear();
            }
        }
    }

    fn on_group_response(&mut self, response: Response) {
        let frame = match response.frame {
            Ok(frame) => frame,
            Err(e) => {
                self.stats().error(format!("group coordinator: {e}"));
                self.coordinator.clear();
                self.group_calls.clear();
                return;
            }
        };
        let Some((call, _)) = self.group_calls.remove(&response.correlation_id) else {
            return;
        };
        let (api, code) = match call {
            GroupCall::Heartbeat(v) => (
                "heartbeat",
                decode_response::<HeartbeatRequest>(frame, v).map(|r| r.error_code),
            ),
            GroupCall::Commit(v) => (
                "offset commit",
                decode_response::<OffsetCommitRequest>(frame, v).map(|r| commit_code(&r)),
            ),
        };
        match code.map(signal) {
            Ok(GroupSignal::Fine) => {}
            Ok(GroupSignal::Failed(code)) => {
                self.stats().error(format!("{api}: {}", kafka_error(code)))
            }
            Ok(why) => {
                if self.rejoin.is_none() {
                    self.rejoin = Some(why);
                    self.retry_at = None;
                }
            }
            Err(e) => self.stats().error(format!("{api}: {e}")),
        }
    }

    /// Metadata refresh and offset resets that earlier errors asked for.
    async fn recover(&mut self) {
        if self.refresh_needed {
            match self
                .metadata
                .fetch(&self.config.topics, Duration::ZERO)
                .await
            {
                Ok(cluster) => {
                    for a in &mut self.assigned {
                        if let Some(&l) = cluster.topics[a.topic].leaders.get(a.partition as usize)
                        {
                            a.leader = l;
                        }
                    }
                    self.cluster.brokers = cluster.brokers;
                    self.refresh_needed = false;
                }
                Err(e) => {
                    self.stats().error(format!("metadata refresh: {e}"));
                    self.retry_at = Some(Instant::now() + RETRY_BACKOFF);
                    return;
                }
            }
        }
        if !self.reset.is_empty() {
            let which = std::mem::take(&mut self.reset);
            let result = list_offsets(
                &self.cluster,
                &self.versions,
                &mut self.assigned,
                &which,
                -2,
                self.metadata.security(),
            )
            .await;
            if let Err(e) = result {
                self.stats().error(format!("offset reset: {e}"));
                self.reset = which;
                self.refresh_needed = true;
                self.retry_at = Some(Instant::now() + RETRY_BACKOFF);
            }
        }
    }

    async fn send_fetch(&mut self, node: i32) {
        let slots: Vec<usize> = (0..self.assigned.len())
            .filter(|&i| self.assigned[i].leader == node && !self.reset.contains(&i))
            .collect();
        if slots.is_empty() {
            return;
        }
        let mut topics: Vec<FetchTopic> = vec![];
        for &i in &slots {
            let a = &self.assigned[i];
            let partition = FetchPartition::default()
                .with_partition(a.partition)
                .with_fetch_offset(a.offset)
                .with_partition_max_bytes(self.fetching_with.partition_max_bytes);
            let name = &self.topic_names[a.topic];
            match topics.iter_mut().find(|t| &t.topic == name) {
                Some(t) => t.partitions.push(partition),
                None => topics.push(
                    FetchTopic::default()
                        .with_topic(name.clone())
                        .with_topic_id(self.cluster.topics[a.topic].id)
                        .with_partitions(vec![partition]),
                ),
            }
        }
        let request = FetchRequest::default()
            .with_max_wait_ms(self.fetching_with.max_wait_ms)
            .with_min_bytes(self.fetching_with.min_bytes)
            .with_max_bytes(self.fetching_with.max_bytes)
            .with_topics(topics);
        let version = self.fetch_version;
        let Some(connection) = self.connection(node).await else {
            return;
        };
        if !connection.has_room() {
            return; // fetches for an old assignment are still out; sent again once they are in
        }
        let id = connection.id();
        match connection.send(version, &request, true).await {
            Ok((correlation_id, wire)) => {
                self.stats().add_wire_bytes(wire as u64);
                let patience = self.fetching_with.max_wait_ms as u64
                    + self.fetching_with.request_timeout_ms as u64;
                self.fetching.insert(
                    node,
                    InFlightFetch {
                        connection: id,
                        correlation_id,
                        slots,
                        due: Instant::now() + Duration::from_millis(patience),
                    },
                );
            }
            Err(e) => {
                self.stats().error(e.to_string());
                self.connection_lost(id);
            }
        }
    }

    async fn connection(&mut self, node: i32) -> Option<&mut Connection> {
        let addr = self.cluster.leader_addr(node)?;
        if self.connections.get(addr).is_none() {
            if let Err(e) = self.connections.connect(addr).await {
                self.shared.stats.error(e.to_string());
                self.refresh_needed = true;
                self.retry_at = Some(Instant::now() + RETRY_BACKOFF);
                return None;
            }
        }
        self.connections.get(addr)
    }

    /// Gives up on the fetches unanswered past their max wait plus `request.timeout.ms`, as the
    /// Java client does: their connection is closed and the partitions are fetched again. Without
    /// it a broker that holds requests (a paused node) or a connection that died without a word
    /// would stop this consumer for good. The loop wakes at least every heartbeat interval.
    fn expire_fetches(&mut self, now: Instant) {
        let expired: Vec<u64> = self
            .fetching
            .values()
            .filter(|f| now >= f.due)
            .map(|f| f.connection)
            .collect();
        for connection in expired {
            self.stats().error(format!(
                "fetch: no answer within fetch.max.wait.ms + request.timeout.ms ({} ms): connection closed, fetching again",
                i64::from(self.fetching_with.max_wait_ms)
                    + i64::from(self.fetching_with.request_timeout_ms)
            ));
            self.connection_lost(connection);
        }
    }

    /// Gives up on a heartbeat or commit unanswered past `request.timeout.ms`, as the Java client
    /// does: the coordinator connection is closed and the coordinator found again (the member
    /// rejoins). Before, a coordinator that held them left the member fetching partitions the
    /// group may have given to others, and it never noticed. The loop wakes at least every
    /// heartbeat interval.
    fn expire_group_calls(&mut self, now: Instant) {
        let Some(call) = self
            .group_calls
            .values()
            .find(|(_, due)| now >= *due)
            .map(|(call, _)| *call)
        else {
            return;
        };
        let api = match call {
            GroupCall::Heartbeat(_) => "heartbeat",
            GroupCall::Commit(_) => "offset commit",
        };
        self.stats().error(format!(
            "{api}: no answer from the group coordinator within request.timeout.ms ({} ms): connection closed, finding the coordinator again",
            self.fetching_with.request_timeout_ms
        ));
        self.coordinator.clear();
        self.group_calls.clear();
        if self.rejoin.is_none() {
            self.rejoin = Some(GroupSignal::FindCoordinator);
            self.retry_at = None;
        }
    }

    /// Closes connection `id` (if the pool has not already) and forgets the fetch it carried.
    fn connection_lost(&mut self, id: u64) {
        self.connections.remove(id);
        self.fetching.retain(|_, f| f.connection != id);
        self.refresh_needed = true;
        self.retry_at = Some(Instant::now() + RETRY_BACKOFF);
    }

    /// A fetch's answer from the pool (matched to its request there), or why a connection died.
    async fn on_response(&mut self, response: Response) {
        let frame = match response.frame {
            Ok(frame) => frame,
            Err(e) => {
                self.stats().error(e.to_string());
                self.connection_lost(response.connection);
                return;
            }
        };
        // An answer to a fetch for an old assignment is dropped.
        let current = self.fetching.iter().find(|(_, f)| {
            f.connection == response.connection && f.correlation_id == response.correlation_id
        });
        let Some(node) = current.map(|(&node, _)| node) else {
            return;
        };
        let wire = frame.len() as u64 + 4;
        let slots = self.fetching.remove(&node).expect("found above").slots;
        let fetched = match decode_response::<FetchRequest>(frame, self.fetch_version) {
            Ok(r) => r,
            Err(e) => {
                self.stats().error(e.to_string());
                self.connection_lost(response.connection);
                return;
            }
        };
        self.stats().add_wire_bytes(wire);
        let to_count = self.advance(&fetched, &slots);
        if !self.refresh_needed
            && self.reset.is_empty()
            && !self.shared.stopping.load(Ordering::Acquire)
        {
            self.send_fetch(node).await;
        }
        self.count(&to_count);
    }

    /// Moves each partition's offset past what was fetched; returns (records, fetch offset).
    fn advance(&mut self, response: &FetchResponse, slots: &[usize]) -> Vec<(Bytes, i64)> {
        let mut to_count = vec![];
        if response.error_code != 0 {
            self.stats()
                .error(format!("fetch: {}", kafka_error(response.error_code)));
            self.refresh_needed = true;
            return to_count;
        }
        for topic in &response.responses {
            let t = self.cluster.topics.iter().position(|m| {
                m.name == topic.topic.as_str() || (!m.id.is_nil() && m.id == topic.topic_id)
            });
            let Some(t) = t else { continue };
            for p in &topic.partitions {
                let Some(&slot) = slots.iter().find(|&&i| {
                    self.assigned[i].topic == t && self.assigned[i].partition == p.partition_index
                }) else {
                    continue;
                };
                match p.error_code {
                    0 => {
                        let Some(records) = p.records.as_ref().filter(|r| !r.is_empty()) else {
                            continue;
                        };
                        let from = self.assigned[slot].offset;
                        self.assigned[slot].offset = next_offset(records, from);
                        to_count.push((records.clone(), from));
                    }
                    OFFSET_OUT_OF_RANGE => {
                        self.stats()
                            .error("fetch: offset out of range, resetting to earliest");
                        self.reset.push(slot);
                    }
                    code => {
                        self.stats().error(format!("fetch: {}", kafka_error(code)));
                        if is_retriable(code) {
                            self.refresh_needed = true;
                        }
                    }
                }
            }
        }
        if self.refresh_needed || !self.reset.is_empty() {
            self.retry_at = Some(Instant::now());
        }
        to_count
    }

    fn count(&self, fetched: &[(Bytes, i64)]) {
        if fetched.is_empty() {
            return;
        }
        let now = now_micros() - self.config.clock_offset_micros;
        let mut errors = vec![];
        self.stats().add_measured(|h| {
            let (mut records, mut value_bytes) = (0u64, 0u64);
            for (bytes, from) in fetched {
                let result = for_each_record(bytes, *from, |r| {
                    records += 1;
                    value_bytes += r.value_len as u64;
                    if let Some(stamp) =
                        r.stamp.filter(|s| (now - s).abs() < PLAUSIBLE_STAMP_MICROS)
                    {
                        h.record(now - stamp);
                    }
                });
                if let Err(e) = result {
                    errors.push(e);
                }
            }
            (records, value_bytes)
        });
        for e in errors {
            self.stats().error(e.to_string());
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
