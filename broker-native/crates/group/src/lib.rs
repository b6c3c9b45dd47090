//! Classic (pre-KIP-848) consumer-group coordinator for the kbench broker.
//!
//! The broker decodes a request, calls the matching method here with the
//! request's API version and encodes the returned response at that version.
//! Responses only set fields that exist in that version.
//!
//! # State machine (per group, Kafka semantics)
//!
//! ```text
//!            join                    all members rejoined          leader's SyncGroup
//!   Empty ---------> PreparingRebalance ----------------> CompletingRebalance ------> Stable
//!     ^                 ^     (or rebalance timeout:            |                      |
//!     |                 |      laggards evicted)                |                      |
//!     |                 +---- join / leave / expiry ------------+----------------------+
//!     +--- last member gone (generation + 1) ---------------------------------------------
//! ```
//!
//! * PreparingRebalance parks every JoinGroup (a oneshot per member) until all
//!   known members have rejoined, or the largest rebalance timeout passes.
//!   Completion bumps the generation, picks the leader (the old one if still
//!   there, else the first member) and the protocol (the first in the
//!   leader's order that all members support), and answers all joins at
//!   once: the leader gets every member's metadata, followers none.
//! * CompletingRebalance parks SyncGroups until the leader's arrives with the
//!   assignment; then every parked sync gets its own share and the group is
//!   Stable.
//! * Heartbeats reset a member's session timer and tell it to rejoin
//!   (REBALANCE_IN_PROGRESS) while the group prepares a rebalance. A
//!   background task evicts members whose session ran out.
//!
//! Every group sits behind its own `std::sync::Mutex`, never held across an
//! `.await`. Lock order: group map, then one group, then the offset store.

mod describe_groups;
mod heartbeat;
mod join;
mod leave;
mod list_groups;
mod member;
mod offset_commit;
mod offset_fetch;
mod offsets;
mod outcome;
mod state;
mod sync;
#[cfg(test)]
mod test_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{
    ApiKey, DescribeGroupsRequest, DescribeGroupsResponse, HeartbeatRequest, HeartbeatResponse,
    JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, ListGroupsRequest,
    ListGroupsResponse, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
    OffsetFetchResponse, SyncGroupRequest, SyncGroupResponse,
};
use kafka_protocol::protocol::StrBytes;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::offsets::OffsetStore;
use crate::state::Group;

pub use crate::state::GroupState;

/// How often the background task looks for expired sessions and rebalances.
const TICK: Duration = Duration::from_millis(100);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("GroupCoordinator::open must be called from within a tokio runtime")]
    NoRuntime,
    #[error("kafka error {0:?}")]
    Kafka(ResponseError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The Kafka error code a response should carry for this failure.
    pub fn code(&self) -> i16 {
        match self {
            Self::Io { .. } | Self::NoRuntime => ResponseError::UnknownServerError.code(),
            Self::Kafka(error) => error.code(),
        }
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupConfig {
    /// Lower bound for a member's session timeout (Kafka: `group.min.session.timeout.ms`).
    /// Requested timeouts outside the bounds are clamped, not rejected as
    /// Kafka's INVALID_SESSION_TIMEOUT would.
    pub min_session_timeout_ms: i32,
    /// Upper bound for a member's session timeout (Kafka: `group.max.session.timeout.ms`).
    pub max_session_timeout_ms: i32,
    /// How long the first rebalance of an empty group waits for more members
    /// (Kafka: `group.initial.rebalance.delay.ms`, 3000 there).
    pub initial_rebalance_delay_ms: u64,
}

impl Default for GroupConfig {
    fn default() -> Self {
        Self {
            min_session_timeout_ms: 6000,
            max_session_timeout_ms: 1_800_000,
            initial_rebalance_delay_ms: 0,
        }
    }
}

/// Who sent a JoinGroup (from the request header and the connection), shown
/// by DescribeGroups and used as the prefix of generated member ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientInfo {
    pub client_id: String,
    pub client_host: String,
}

pub struct GroupCoordinator {
    config: GroupConfig,
    groups: Mutex<HashMap<String, Arc<Mutex<Group>>>>,
    offsets: OffsetStore,
    /// Makes generated member ids unique across restarts.
    member_id_prefix: String,
    next_member_id: AtomicU64,
    ticker: Mutex<Option<JoinHandle<()>>>,
}

impl GroupCoordinator {
    /// Creates `dir`, loads the committed offsets stored there and starts the
    /// session-expiry task. Must be called from within a tokio runtime (the
    /// task is spawned on it); returns [`Error::NoRuntime`] otherwise.
    pub fn open(dir: &Path, config: GroupConfig) -> Result<Arc<Self>> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error::NoRuntime)?;
        let offsets = OffsetStore::open(dir)?;
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let coordinator = Arc::new(Self {
            config,
            groups: Mutex::new(HashMap::new()),
            offsets,
            member_id_prefix: format!("{:x}", started as u64),
            next_member_id: AtomicU64::new(0),
            ticker: Mutex::new(None),
        });
        let weak = Arc::downgrade(&coordinator);
        *lock(&coordinator.ticker) = Some(runtime.spawn(run_ticker(weak)));
        Ok(coordinator)
    }

    /// JoinGroup v0-9. Waits while the group prepares a rebalance.
    pub async fn join_group(&self, req: JoinGroupRequest, version: i16) -> JoinGroupResponse {
        join::join_group(self, req, version, ClientInfo::default()).await
    }

    /// [`Self::join_group`] with the client id and host of the connection.
    pub async fn join_group_from(
        &self,
        req: JoinGroupRequest,
        version: i16,
        client: ClientInfo,
    ) -> JoinGroupResponse {
        join::join_group(self, req, version, client).await
    }

    /// SyncGroup v0-5. Followers wait for the leader's assignment.
    pub async fn sync_group(&self, req: SyncGroupRequest, version: i16) -> SyncGroupResponse {
        sync::sync_group(self, req, version).await
    }

    /// Heartbeat v0-4.
    pub fn heartbeat(&self, req: HeartbeatRequest, version: i16) -> HeartbeatResponse {
        heartbeat::heartbeat(self, req, version)
    }

    /// LeaveGroup v0-5 (v3+ carries a batch of members). Never waits; async
    /// only to match the other membership calls.
    pub async fn leave_group(&self, req: LeaveGroupRequest, version: i16) -> LeaveGroupResponse {
        leave::leave_group(self, req, version)
    }

    /// OffsetCommit v2-8 (the versions the codec decodes that use generations), every partition
    /// taken as existing.
    pub fn offset_commit(&self, req: OffsetCommitRequest, version: i16) -> OffsetCommitResponse {
        offset_commit::offset_commit(self, req, version, &|_, _| true)
    }

    /// [`GroupCoordinator::offset_commit`] refusing commits for partitions `known` says do not
    /// exist (UNKNOWN_TOPIC_OR_PARTITION, as Kafka does): the broker passes its topics.
    pub fn offset_commit_known(
        &self,
        req: OffsetCommitRequest,
        version: i16,
        known: &dyn Fn(&str, i32) -> bool,
    ) -> OffsetCommitResponse {
        offset_commit::offset_commit(self, req, version, known)
    }

    /// OffsetFetch v1-8 (v8 fetches several groups at once).
    pub fn offset_fetch(&self, req: OffsetFetchRequest, version: i16) -> OffsetFetchResponse {
        offset_fetch::offset_fetch(self, req, version)
    }

    /// ListGroups v0-5.
    pub fn list_groups(&self, req: ListGroupsRequest, version: i16) -> ListGroupsResponse {
        list_groups::list_groups(self, req, version)
    }

    /// DescribeGroups v0-6.
    pub fn describe_groups(
        &self,
        req: DescribeGroupsRequest,
        version: i16,
    ) -> DescribeGroupsResponse {
        describe_groups::describe_groups(self, req, version)
    }

    /// `(api key, min version, max version)` of every API handled here.
    pub fn supported_versions() -> Vec<(i16, i16, i16)> {
        vec![
            (ApiKey::OffsetCommit as i16, 2, 8),
            (ApiKey::OffsetFetch as i16, 1, 8),
            (ApiKey::JoinGroup as i16, 0, 9),
            (ApiKey::Heartbeat as i16, 0, 4),
            (ApiKey::LeaveGroup as i16, 0, 5),
            (ApiKey::SyncGroup as i16, 0, 5),
            (ApiKey::DescribeGroups as i16, 0, 6),
            (ApiKey::ListGroups as i16, 0, 5),
        ]
    }

    /// Stops the expiry task, answers parked joins and syncs with
    /// NOT_COORDINATOR (clients then look the coordinator up again) and
    /// compacts the offset log.
    pub fn shutdown(&self) {
        if let Some(ticker) = lock(&self.ticker).take() {
            ticker.abort();
        }
        for group in self.all_groups() {
            for member in &mut lock(&group).members {
                member.fail_waiters(ResponseError::NotCoordinator);
            }
        }
        // Every commit already reached the OS; compaction is an optimisation.
        let _ = self.offsets.compact();
    }

    fn group(&self, group_id: &str) -> Option<Arc<Mutex<Group>>> {
        lock(&self.groups).get(group_id).cloned()
    }

    fn group_or_create(&self, group_id: &str) -> Arc<Mutex<Group>> {
        let delay = Duration::from_millis(self.config.initial_rebalance_delay_ms);
        lock(&self.groups)
            .entry(group_id.to_owned())
            .or_insert_with(|| Arc::new(Mutex::new(Group::new(group_id.to_owned(), delay))))
            .clone()
    }

    fn all_groups(&self) -> Vec<Arc<Mutex<Group>>> {
        lock(&self.groups).values().cloned().collect()
    }

    fn new_member_id(&self, client_id: &str) -> String {
        let n = self.next_member_id.fetch_add(1, Ordering::Relaxed);
        let client_id = if client_id.is_empty() {
            "member"
        } else {
            client_id
        };
        format!("{client_id}-{}-{n}", self.member_id_prefix)
    }

    fn session_timeout(&self, requested_ms: i32) -> Duration {
        let min = self.config.min_session_timeout_ms;
        let max = self.config.max_session_timeout_ms.max(min);
        Duration::from_millis(requested_ms.clamp(min, max).max(0) as u64)
    }

    fn expire_sessions(&self, now: Instant) {
        for group in self.all_groups() {
            lock(&group).expire(now);
        }
    }
}

impl Drop for GroupCoordinator {
    fn drop(&mut self) {
        if let Some(ticker) = lock(&self.ticker).take() {
            ticker.abort();
        }
    }
}

async fn run_ticker(coordinator: Weak<GroupCoordinator>) {
    let mut interval = tokio::time::interval(TICK);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        interval.tick().await;
        let Some(coordinator) = coordinator.upgrade() else {
            return;
        };
        coordinator.expire_sessions(Instant::now());
    }
}

/// Locks a mutex, recovering from poisoning: the state is kept consistent by
/// each method, so a panic elsewhere must not take the whole broker down.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn str_bytes(text: impl Into<String>) -> StrBytes {
    StrBytes::from_string(text.into())
}

/// Kafka's error code for an optional error.
pub(crate) fn error_code(error: Option<ResponseError>) -> i16 {
    error.map_or(0, |e| e.code())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use bytes::Bytes;

    const RANGE: &[(&str, &[u8])] = &[("range", b"meta")];

    /// A consumer's membership loop: join (answering MEMBER_ID_REQUIRED),
    /// sync (the leader hands each member its own id), heartbeat, and
    /// rejoin whenever the group rebalances.
    async fn consumer(c: Arc<GroupCoordinator>) {
        let mut member_id = String::new();
        loop {
            let joined = c.join_group(join_request("g", &member_id, RANGE), 5).await;
            member_id = joined.member_id.to_string();
            if joined.error_code != 0 {
                continue;
            }
            let assignments: Vec<(String, Bytes)> = joined
                .members
                .iter()
                .map(|m| {
                    (
                        m.member_id.to_string(),
                        Bytes::from(m.member_id.to_string()),
                    )
                })
                .collect();
            let assignments: Vec<(&str, &[u8])> = assignments
                .iter()
                .map(|(id, a)| (id.as_str(), a.as_ref()))
                .collect();
            let synced = c
                .sync_group(
                    sync_request("g", &member_id, joined.generation_id, &assignments),
                    5,
                )
                .await;
            if synced.error_code != 0 {
                continue;
            }
            assert_eq!(synced.assignment, Bytes::from(member_id.clone()));
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let beat = c.heartbeat(heartbeat_request("g", &member_id, joined.generation_id), 4);
                if beat.error_code != 0 {
                    break;
                }
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn five_consumers_converge_on_one_stable_generation() {
        let dir = TempDir::new("converge");
        let c = open(&dir);
        let consumers: Vec<_> = (0..5).map(|_| tokio::spawn(consumer(c.clone()))).collect();
        let mut converged = false;
        for _ in 0..120 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let mut req = DescribeGroupsRequest::default();
            req.groups = vec![kafka_protocol::messages::GroupId(str_bytes("g"))];
            let group = c.describe_groups(req, 5).groups.remove(0);
            converged = group.group_state.as_str() == "Stable"
                && group.members.len() == 5
                && group
                    .members
                    .iter()
                    .all(|m| !m.member_assignment.is_empty());
            if converged {
                break;
            }
        }
        for consumer in consumers {
            consumer.abort();
        }
        assert!(converged);
    }

    #[test]
    fn open_outside_a_runtime_is_no_runtime() {
        let dir = TempDir::new("no-runtime");
        let result = GroupCoordinator::open(dir.path(), GroupConfig::default());
        assert!(matches!(result, Err(Error::NoRuntime)));
    }

    #[test]
    fn supported_versions_cover_every_group_api_once() {
        let mut keys: Vec<i16> = GroupCoordinator::supported_versions()
            .iter()
            .map(|(key, _, _)| *key)
            .collect();
        keys.sort();
        assert_eq!(keys, vec![8, 9, 11, 12, 13, 14, 15, 16]);
    }
}
