//! One node's membership in a bundled cluster: it registers and heartbeats
//! in the shared store, applies each new cluster state (creating local
//! partitions, taking leader or follower roles, starting replica
//! fetchers), runs the controller's liveness pass, and shrinks the ISR of
//! the partitions it leads when followers fall behind.

use super::controller;
use super::fetcher::{self, Follow, FollowTarget, Follower};
use super::replica::{IsrProposal, PartitionRole, Role, RoleChange};
use super::state::{ClusterState, Heartbeat, NodeInfo, Stamp, Store};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::pause::Pause;
use crate::stats::{ClusterStats, StatsSnapshot};
use crate::storage::Log;
use crate::topic_config::TopicOverrides;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How a node takes part in a cluster.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// The directory every node of the cluster shares (see `state`).
    pub dir: PathBuf,
    /// A node whose heartbeat is older than this is dead: it leaves every
    /// ISR and its partitions get new leaders.
    pub session_timeout_ms: i64,
    /// A follower not caught up for this long leaves the ISR.
    pub replica_lag_ms: i64,
}

pub const DEFAULT_SESSION_TIMEOUT_MS: i64 = 2000;
pub const DEFAULT_REPLICA_LAG_MS: i64 = 3000;

impl ClusterOptions {
    pub fn new(dir: impl Into<PathBuf>) -> ClusterOptions {
        ClusterOptions {
            dir: dir.into(),
            session_timeout_ms: DEFAULT_SESSION_TIMEOUT_MS,
            replica_lag_ms: DEFAULT_REPLICA_LAG_MS,
        }
    }
}

struct Fetcher {
    targets: watch::Sender<Follow>,
    task: JoinHandle<()>,
}

pub struct ClusterNode {
    pub id: i32,
    pub store: Store,
    pub options: ClusterOptions,
    pub stats: Arc<ClusterStats>,
    /// Fault injection: held by this node's server, fetchers and upkeep.
    pub pause: Arc<Pause>,
    incarnation: u64,
    state: RwLock<Arc<ClusterState>>,
    stamp: Mutex<Option<Stamp>>,
    /// Roles by topic, then partition index.
    roles: RwLock<HashMap<String, Vec<Arc<PartitionRole>>>>,
    alive: RwLock<BTreeSet<i32>>,
    fetchers: Mutex<HashMap<i32, Fetcher>>,
    /// Serialises applying states.
    applying: Mutex<()>,
}

impl std::fmt::Debug for ClusterNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterNode").field("id", &self.id).finish()
    }
}

impl ClusterNode {
    pub fn new(id: i32, options: ClusterOptions) -> Result<Arc<ClusterNode>> {
        let store = Store::open(&options.dir)?;
        Ok(Arc::new(ClusterNode {
            id,
            store,
            options,
            stats: Arc::default(),
            pause: Arc::default(),
            incarnation: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            state: RwLock::new(Arc::new(ClusterState::default())),
            stamp: Mutex::new(None),
            roles: RwLock::new(HashMap::new()),
            alive: RwLock::new(BTreeSet::new()),
            fetchers: Mutex::new(HashMap::new()),
            applying: Mutex::new(()),
        }))
    }

    /// Records this node's address in the cluster state: the client
    /// listener's port, and a plaintext one for replicas if it differs.
    pub fn register(
        &self,
        host: &str,
        port: u16,
        replication_port: Option<u16>,
        cluster_id: &str,
    ) -> Result<()> {
        self.store.modify(|s| {
            if s.cluster_id.is_empty() {
                s.cluster_id = cluster_id.to_string();
            }
            s.nodes.insert(
                self.id,
                NodeInfo {
                    host: host.to_string(),
                    port,
                    replication_port,
                },
            );
            Ok(())
        })?;
        self.heartbeat()?;
        Ok(())
    }

    pub fn state(&self) -> Arc<ClusterState> {
        self.state.read().expect("state lock").clone()
    }

    /// Nodes whose heartbeats are fresh right now (read from the store, and
    /// remembered for `alive_nodes`).
    pub fn live_nodes_now(&self) -> BTreeSet<i32> {
        let now = now_ms();
        let alive: BTreeSet<i32> = self
            .store
            .heartbeats()
            .into_iter()
            .filter(|(id, hb)| *id == self.id || now - hb.at_ms <= self.options.session_timeout_ms)
            .map(|(id, _)| id)
            .collect();
        *self.alive.write().expect("alive lock") = alive.clone();
        alive
    }

    /// Nodes whose heartbeats are fresh, as of the last check.
    pub fn alive_nodes(&self) -> BTreeSet<i32> {
        self.alive.read().expect("alive lock").clone()
    }

    pub fn role(&self, topic: &str, partition: i32) -> Option<Arc<PartitionRole>> {
        let roles = self.roles.read().expect("roles lock");
        usize::try_from(partition)
            .ok()
            .and_then(|p| roles.get(topic)?.get(p).cloned())
    }

    /// Every partition this node leads right now.
    pub fn leader_roles(&self) -> Vec<Arc<PartitionRole>> {
        self.roles
            .read()
            .expect("roles lock")
            .values()
            .flatten()
            .filter(|r| r.role().0 == Role::Leader)
            .cloned()
            .collect()
    }

    pub fn under_replicated(&self) -> u64 {
        self.roles
            .read()
            .expect("roles lock")
            .values()
            .flatten()
            .filter(|r| {
                let (role, _) = r.role();
                role == Role::Leader && r.isr_len() < self.replica_count(r)
            })
            .count() as u64
    }

    fn replica_count(&self, role: &PartitionRole) -> usize {
        self.state()
            .partition(&role.topic, role.index)
            .map_or(0, |p| p.replicas.len())
    }

    /// Adds this node's replication figures to its broker stats.
    pub fn add_stats(&self, snapshot: &mut StatsSnapshot) {
        snapshot.under_replicated = self.under_replicated();
        snapshot.isr_shrinks = self.stats.isr_shrinks.load(Ordering::Relaxed);
        snapshot.isr_expands = self.stats.isr_expands.load(Ordering::Relaxed);
        snapshot.leader_elections = self.stats.leader_elections.load(Ordering::Relaxed);
        snapshot.replicated_bytes = self.stats.replicated_bytes.load(Ordering::Relaxed);
    }

    fn heartbeat(&self) -> Result<()> {
        let applied = self.state().version;
        self.store.write_heartbeat(
            self.id,
            &Heartbeat {
                at_ms: now_ms(),
                applied,
                incarnation: self.incarnation,
            },
        )
    }

    /// Re-reads the cluster state if the file changed, and applies it.
    pub fn refresh(self: &Arc<Self>, log: &Log) -> Result<bool> {
        let stamp = self.store.stamp();
        if stamp.is_some() && *self.stamp.lock().expect("stamp lock") == stamp {
            return Ok(false);
        }
        let state = self.store.read()?;
        *self.stamp.lock().expect("stamp lock") = stamp;
        let applied = self.state().version;
        if applied > 0 && state.version <= applied {
            return Ok(false);
        }
        self.apply(log, Arc::new(state))?;
        Ok(true)
    }

    /// Makes the local log and roles match `state`.
    pub fn apply(self: &Arc<Self>, log: &Log, state: Arc<ClusterState>) -> Result<()> {
        let _applying = self.applying.lock().expect("apply lock");
        let now = now_ms();
        let mut roles: HashMap<String, Vec<Arc<PartitionRole>>> = HashMap::new();
        let previous = self.roles.read().expect("roles lock").clone();
        for (name, topic) in &state.topics {
            let local = match log.topic(name) {
                Some(t) if t.id == topic.id => t,
                existing => {
                    if existing.is_some() {
                        log.delete_topic(name)?;
                    }
                    log.create_topic_with_id(name, topic.id, topic.partitions.len() as i32)?;
                    log.topic(name).ok_or_else(|| {
                        Error::Io(std::io::Error::other(format!("topic {name} vanished")))
                    })?
                }
            };
            if local.partitions.len() < topic.partitions.len() {
                log.create_partitions(name, topic.partitions.len() as i32, false)?;
            }
            let overrides: TopicOverrides = topic
                .configs
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if *local.overrides.read().expect("overrides lock") != overrides {
                log.set_topic_overrides(name, overrides, false)?;
            }
            let local = log.topic(name).expect("topic just ensured");
            let mut list = Vec::with_capacity(topic.partitions.len());
            for (index, p) in topic.partitions.iter().enumerate() {
                let role = previous
                    .get(name)
                    .and_then(|v| v.get(index))
                    .filter(|r| Arc::ptr_eq(&r.partition, &local.partitions[index]))
                    .cloned()
                    .unwrap_or_else(|| {
                        Arc::new(PartitionRole::new(
                            name,
                            index as i32,
                            local.partitions[index].clone(),
                            self.id,
                        ))
                    });
                match role.apply(p, state.version, now) {
                    RoleChange::BecameLeader => {
                        self.stats.leader_elections.fetch_add(1, Ordering::Relaxed);
                        tracing::info!(node = self.id, topic = %name, partition = index, epoch = p.leader_epoch, "leading");
                    }
                    RoleChange::BecameFollower { leader } => {
                        tracing::debug!(node = self.id, topic = %name, partition = index, leader, "following");
                    }
                    _ => {}
                }
                list.push(role);
            }
            roles.insert(name.clone(), list);
        }
        for topic in log.topics() {
            if !state.topics.contains_key(&topic.name) {
                log.delete_topic(&topic.name)?;
            }
        }
        *self.roles.write().expect("roles lock") = roles;
        *self.state.write().expect("state lock") = state;
        self.update_fetchers();
        Ok(())
    }

    /// Hands each replica fetcher the partitions it follows now.
    fn update_fetchers(self: &Arc<Self>) {
        let mut by_leader: HashMap<i32, Vec<FollowTarget>> = HashMap::new();
        let state = self.state();
        for role in self.roles.read().expect("roles lock").values().flatten() {
            if let (Role::Follower { leader }, epoch) = role.role() {
                by_leader.entry(leader).or_default().push(FollowTarget {
                    role: role.clone(),
                    epoch,
                });
            }
        }
        let mut fetchers = self.fetchers.lock().expect("fetchers lock");
        fetchers.retain(|leader, f| {
            if by_leader.contains_key(leader) {
                true
            } else {
                f.task.abort();
                false
            }
        });
        for (leader, targets) in by_leader {
            let follow = Follow {
                address: state.nodes.get(&leader).map(NodeInfo::for_replication),
                targets,
            };
            match fetchers.get(&leader) {
                Some(f) => {
                    f.targets.send_replace(follow);
                }
                None => {
                    let (tx, rx) = watch::channel(follow);
                    let me = Follower {
                        id: self.id,
                        pause: self.pause.clone(),
                        stats: self.stats.clone(),
                    };
                    let task = tokio::spawn(fetcher::run(me, leader, rx));
                    fetchers.insert(leader, Fetcher { targets: tx, task });
                }
            }
        }
    }

    /// Stops every replica fetcher (the node is going away).
    pub fn stop_fetchers(&self) {
        for (_, f) in self.fetchers.lock().expect("fetchers lock").drain() {
            f.task.abort();
        }
    }

    /// The controller's liveness pass, if heartbeats show that leaders or
    /// ISRs must change and no other node holds the lock.
    fn check_liveness(&self) -> Result<()> {
        let alive = self.live_nodes_now();
        let mut probe = (*self.state()).clone();
        if controller::handle_liveness(&mut probe, &alive) == 0 && probe == *self.state() {
            return Ok(());
        }
        if let Some((elections, _)) = self
            .store
            .try_modify(|s| Ok(controller::handle_liveness(s, &alive)))?
        {
            if elections > 0 {
                tracing::info!(node = self.id, elections, alive = ?alive, "moved leaders off dead nodes");
            }
        }
        Ok(())
    }

    /// Writes an ISR change for a partition this node leads, if its epoch
    /// still holds in the store.
    pub fn write_isr(&self, role: &PartitionRole, proposal: &IsrProposal) {
        let outcome = self.store.modify(|s| {
            let Some(p) = s.partition_mut(&role.topic, role.index) else {
                return Ok(false);
            };
            if p.leader != self.id || p.leader_epoch != proposal.epoch {
                return Ok(false);
            }
            p.isr = proposal.isr.clone();
            Ok(true)
        });
        match outcome {
            Ok((true, state)) => {
                let grew = proposal.isr.len() > role.isr_len();
                let counter = if grew {
                    &self.stats.isr_expands
                } else {
                    &self.stats.isr_shrinks
                };
                counter.fetch_add(1, Ordering::Relaxed);
                tracing::info!(node = self.id, topic = %role.topic, partition = role.index, isr = ?proposal.isr, "ISR changed");
                role.isr_written(proposal, Some(state.version));
            }
            Ok((false, _)) => role.isr_written(proposal, None),
            Err(e) => {
                tracing::warn!(error = %e, "could not write an ISR change");
                role.isr_written(proposal, None);
            }
        }
    }

    /// Shrinks the ISR of led partitions whose followers fell behind.
    fn check_isr(&self) {
        let now = now_ms();
        for role in self.leader_roles() {
            if let Some(proposal) = role.propose_shrink(now, self.options.replica_lag_ms) {
                self.write_isr(&role, &proposal);
            }
        }
    }

    /// Waits until every live node has applied `version` (or `timeout`).
    pub async fn wait_applied(self: &Arc<Self>, log: &Log, version: u64, timeout: Duration) {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let _ = self.refresh(log);
            let now = now_ms();
            let behind = self.store.heartbeats().into_iter().any(|(id, hb)| {
                now - hb.at_ms <= self.options.session_timeout_ms
                    && hb.applied < version
                    && id != self.id
            }) || self.state().version < version;
            if !behind || tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// A cluster-wide change made through the store, then applied here and
    /// awaited on every live node, so the client's next request to any node
    /// sees it.
    pub async fn change<T>(
        self: &Arc<Self>,
        log: &Log,
        change: impl FnOnce(&mut ClusterState, &BTreeSet<i32>) -> Result<T>,
    ) -> Result<T> {
        let alive = self.live_nodes_now();
        let (value, state) = self.store.modify(|s| change(s, &alive))?;
        self.wait_applied(log, state.version, Duration::from_secs(5))
            .await;
        Ok(value)
    }

    /// The node id that coordinates consumer groups: the lowest live node.
    pub fn coordinator(&self) -> i32 {
        self.alive_nodes().into_iter().next().unwrap_or(self.id)
    }
}

/// Runs the node's background work until aborted: state refresh (every
/// 10 ms), heartbeat (100 ms), liveness and ISR checks (100 ms).
pub fn spawn(node: Arc<ClusterNode>, log: Arc<Log>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut last_beat = 0;
        loop {
            // Paused, or cut off from its peers: no heartbeat, state or ISR writes.
            node.pause.wait_peers().await;
            let log = log.clone();
            let n = node.clone();
            let beat = now_ms() - last_beat >= 100;
            if beat {
                last_beat = now_ms();
            }
            let outcome = tokio::task::spawn_blocking(move || -> Result<()> {
                n.refresh(&log)?;
                if beat {
                    n.heartbeat()?;
                    n.check_liveness()?;
                    n.check_isr();
                }
                Ok(())
            })
            .await;
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(node = node.id, error = %e, "cluster upkeep failed"),
                Err(e) if e.is_cancelled() => return,
                Err(e) => tracing::warn!(node = node.id, error = %e, "cluster upkeep panicked"),
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
}
