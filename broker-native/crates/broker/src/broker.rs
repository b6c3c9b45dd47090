//! Broker state shared by every connection, and the start/stop lifecycle.

use crate::cluster::{ClusterNode, ClusterOptions, PartitionRole};
use crate::codec::VersionTable;
use crate::config::BrokerConfig;
use crate::error::{Error, Result};
use crate::producer_ids::ProducerIdAllocator;
use crate::stats::{Stats, StatsSnapshot};
use crate::storage::{Log, LogConfig};
use kafka_protocol::messages::ApiKey;
#[cfg(feature = "groups")]
use kbench_group::{GroupConfig, GroupCoordinator};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The APIs this broker implements and the versions of each.
#[derive(Debug, Clone)]
pub struct SupportedApis(Vec<(ApiKey, i16, i16)>);

impl SupportedApis {
    /// Our own handlers plus whatever the group coordinator implements.
    pub fn new() -> SupportedApis {
        let mut apis = vec![
            (ApiKey::Produce, 3, 11),
            (ApiKey::Fetch, 4, 12),
            (ApiKey::ListOffsets, 1, 6),
            (ApiKey::Metadata, 0, 12),
            (ApiKey::FindCoordinator, 0, 4),
            (ApiKey::ApiVersions, 0, 4),
            (ApiKey::CreateTopics, 2, 7),
            (ApiKey::DeleteTopics, 1, 6),
            (ApiKey::CreatePartitions, 0, 3),
            (ApiKey::DescribeConfigs, 1, 4),
            (ApiKey::IncrementalAlterConfigs, 0, 1),
            (ApiKey::AlterConfigs, 0, 2),
            (ApiKey::InitProducerId, 0, 5),
            (ApiKey::DescribeCluster, 0, 2),
        ];
        #[cfg(feature = "groups")]
        for (key, min, max) in GroupCoordinator::supported_versions() {
            if let Ok(key) = ApiKey::try_from(key) {
                apis.push((key, min, max));
            }
        }
        apis.sort_by_key(|(key, _, _)| *key as i16);
        SupportedApis(apis)
    }

    pub fn iter(&self) -> impl Iterator<Item = &(ApiKey, i16, i16)> {
        self.0.iter()
    }
}

impl Default for SupportedApis {
    fn default() -> Self {
        SupportedApis::new()
    }
}

impl VersionTable for SupportedApis {
    fn supports(&self, api_key: ApiKey, version: i16) -> bool {
        self.0
            .iter()
            .any(|(key, min, max)| *key == api_key && (*min..=*max).contains(&version))
    }
}

/// Everything a request handler may touch.
pub struct Broker {
    pub config: BrokerConfig,
    /// The port actually bound (differs from `config.port` when that is 0).
    pub port: u16,
    pub log: Log,
    #[cfg(feature = "groups")]
    pub groups: Arc<GroupCoordinator>,
    pub stats: Stats,
    pub apis: SupportedApis,
    /// Ids for InitProducerId, never reused across restarts.
    pub producer_ids: ProducerIdAllocator,
    /// This node's part in a bundled cluster; `None` for a lone broker.
    pub cluster: Option<Arc<ClusterNode>>,
}

/// What a cluster node brings to `Broker::open_with`.
#[derive(Default)]
pub struct BrokerParts {
    pub cluster: Option<Arc<ClusterNode>>,
    /// A coordinator shared by nodes in one process, so that groups and
    /// their offsets survive any one node's death.
    #[cfg(feature = "groups")]
    pub groups: Option<Arc<GroupCoordinator>>,
}

impl Broker {
    /// Opens the log and the group coordinator under `config.data_dir`.
    /// Must run inside a tokio runtime.
    pub fn open(config: BrokerConfig, port: u16) -> Result<Broker> {
        Broker::open_with(config, port, BrokerParts::default())
    }

    /// `open`, as a node of a cluster.
    pub fn open_with(config: BrokerConfig, port: u16, parts: BrokerParts) -> Result<Broker> {
        if config.segment_bytes == 0 || config.segment_bytes > u32::MAX as u64 {
            return Err(Error::InvalidOption {
                name: "segment_bytes",
                message: "must be between 1 and 4 GiB".into(),
            });
        }
        config.limits.check()?;
        let log = Log::open(
            &config.data_dir,
            LogConfig {
                segment_bytes: config.segment_bytes,
                fsync: config.fsync,
                max_partitions_per_topic: config.limits.max_partitions_per_topic,
                max_partitions: config.limits.max_partitions,
                ..LogConfig::default()
            },
        )?;
        let producer_ids = ProducerIdAllocator::open(&config.data_dir)?;
        #[cfg(feature = "groups")]
        let groups = match parts.groups {
            Some(shared) => shared,
            None => {
                GroupCoordinator::open(&config.data_dir.join("__groups"), GroupConfig::default())
                    .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))?
            }
        };
        Ok(Broker {
            config,
            port,
            log,
            #[cfg(feature = "groups")]
            groups,
            stats: Stats::default(),
            apis: SupportedApis::new(),
            producer_ids,
            cluster: parts.cluster,
        })
    }

    pub fn stats(&self) -> StatsSnapshot {
        let mut snapshot = self
            .stats
            .snapshot(self.log.size_bytes(), self.log.storage_stats());
        if let Some(node) = &self.cluster {
            use std::sync::atomic::Ordering::Relaxed;
            snapshot.under_replicated = node.under_replicated();
            snapshot.isr_shrinks = node.stats.isr_shrinks.load(Relaxed);
            snapshot.isr_expands = node.stats.isr_expands.load(Relaxed);
            snapshot.leader_elections = node.stats.leader_elections.load(Relaxed);
            snapshot.replicated_bytes = node.stats.replicated_bytes.load(Relaxed);
        }
        snapshot
    }

    /// Replaces a topic's config overrides (already validated): on this
    /// node, or on every node of the cluster through its shared state.
    pub fn set_topic_overrides(
        &self,
        name: &str,
        overrides: crate::topic_config::TopicOverrides,
        validate_only: bool,
    ) -> Result<()> {
        match &self.cluster {
            None => self.log.set_topic_overrides(name, overrides, validate_only),
            Some(node) => {
                if !node.state().topics.contains_key(name) {
                    return Err(Error::kafka(
                        kafka_protocol::ResponseError::UnknownTopicOrPartition,
                        format!("topic '{name}' does not exist"),
                    ));
                }
                if validate_only {
                    return Ok(());
                }
                node.store.modify(|s| {
                    if let Some(t) = s.topics.get_mut(name) {
                        t.configs = overrides.clone().into_iter().collect();
                    }
                    Ok(())
                })?;
                // Applied here at once; the other nodes follow within their
                // next refresh.
                self.log.set_topic_overrides(name, overrides, false)
            }
        }
    }

    /// The brokers a client is told about: every live node of the cluster,
    /// or this node alone.
    pub fn advertised_nodes(&self) -> Vec<(i32, String, u16)> {
        match &self.cluster {
            None => vec![(self.config.node_id, self.config.host.clone(), self.port)],
            Some(node) => {
                let alive = node.alive_nodes();
                node.state()
                    .nodes
                    .iter()
                    .filter(|(id, _)| alive.contains(id) || **id == self.config.node_id)
                    .map(|(id, n)| (*id, n.host.clone(), n.port))
                    .collect()
            }
        }
    }

    /// On a cluster node, this node's leadership of a partition (checked
    /// against a client's `current_leader_epoch` when it sent one): the role
    /// and the epoch, or the error to answer with. `Ok(None)` on a lone
    /// broker, which leads everything it has.
    pub fn leadership(
        &self,
        topic: &str,
        partition: i32,
        epoch: Option<i32>,
    ) -> std::result::Result<Option<(Arc<PartitionRole>, i32)>, kafka_protocol::ResponseError> {
        let Some(node) = &self.cluster else {
            return Ok(None);
        };
        let role = node
            .role(topic, partition)
            .ok_or(kafka_protocol::ResponseError::UnknownTopicOrPartition)?;
        let epoch = role.check_leader(epoch)?;
        Ok(Some((role, epoch)))
    }

    /// The node named as controller (and group coordinator).
    pub fn controller_id(&self) -> i32 {
        match &self.cluster {
            None => self.config.node_id,
            Some(node) => node.coordinator(),
        }
    }
}

/// A running broker: its address, stats, and a way to stop it.
pub struct BrokerHandle {
    broker: Arc<Broker>,
    shutdown: std::sync::Mutex<Option<oneshot::Sender<()>>>,
    server: tokio::sync::Mutex<Option<JoinHandle<()>>>,
    /// Retention, and a cluster node's upkeep.
    background: Vec<JoinHandle<()>>,
    /// False when the group coordinator is shared with other nodes.
    owns_groups: bool,
}

/// Runs a retention pass every `retention_check_interval` (file deletion
/// on the blocking pool) until aborted.
async fn enforce_retention(broker: Arc<Broker>) {
    let mut every = tokio::time::interval(broker.config.retention_check_interval);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    every.tick().await;
    loop {
        every.tick().await;
        let pass = broker.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            pass.log.retention_pass(crate::storage::segment::now_ms())
        })
        .await;
        match outcome {
            Ok(Ok(0)) => {}
            Ok(Ok(deleted)) => tracing::info!(deleted, "retention deleted segments"),
            Ok(Err(e)) => tracing::warn!(error = %e, "retention pass failed"),
            Err(e) => tracing::warn!(error = %e, "retention pass panicked"),
        }
    }
}

/// Fsyncs the partitions whose `interval:<ms>` policy (broker-wide, or a
/// topic's flush.ms) is due, on the blocking pool, until aborted.
async fn flush_on_interval(broker: Arc<Broker>) {
    let mut every = tokio::time::interval(broker.log.flush_check_interval());
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        if !broker.log.flush_due() {
            continue;
        }
        let pass = broker.clone();
        match tokio::task::spawn_blocking(move || pass.log.flush_dirty()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "interval flush failed"),
            Err(e) => tracing::warn!(error = %e, "interval flush panicked"),
        }
    }
}

/// Binds the listener, opens storage and starts serving on the current
/// tokio runtime.
pub async fn start(config: BrokerConfig) -> Result<BrokerHandle> {
    start_with(config, None, BrokerParts::default()).await
}

/// `start`, as node `config.node_id` of the cluster whose shared directory
/// `cluster` names: the node registers, applies the cluster state (so its
/// partitions exist and roles are taken) before it serves, then keeps up.
pub async fn start_with(
    config: BrokerConfig,
    cluster: Option<ClusterOptions>,
    mut parts: BrokerParts,
) -> Result<BrokerHandle> {
    std::fs::create_dir_all(&config.data_dir)?;
    let listener = TcpListener::bind((config.host.as_str(), config.port)).await?;
    let port = listener.local_addr()?.port();
    #[cfg(feature = "groups")]
    let owns_groups = parts.groups.is_none();
    #[cfg(not(feature = "groups"))]
    let owns_groups = true;
    if let Some(options) = cluster {
        parts.cluster = Some(ClusterNode::new(config.node_id, options)?);
    }
    let broker = Arc::new(Broker::open_with(config, port, parts)?);
    let mut background = vec![
        tokio::spawn(enforce_retention(broker.clone())),
        tokio::spawn(flush_on_interval(broker.clone())),
    ];
    if let Some(node) = broker.cluster.clone() {
        let b = broker.clone();
        let n = node.clone();
        tokio::task::spawn_blocking(move || -> Result<()> {
            n.register(&b.config.host, b.port, &b.config.cluster_id)?;
            n.refresh(&b)?;
            Ok(())
        })
        .await
        .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))??;
        background.push(crate::cluster::spawn(node, broker.clone()));
    }
    let (tx, rx) = oneshot::channel::<()>();
    let server = tokio::spawn(crate::server::run(listener, broker.clone(), async move {
        let _ = rx.await;
    }));
    Ok(BrokerHandle {
        broker,
        shutdown: std::sync::Mutex::new(Some(tx)),
        server: tokio::sync::Mutex::new(Some(server)),
        background,
        owns_groups,
    })
}

impl BrokerHandle {
    pub fn port(&self) -> u16 {
        self.broker.port
    }

    pub fn host(&self) -> &str {
        &self.broker.config.host
    }

    pub fn node_id(&self) -> i32 {
        self.broker.config.node_id
    }

    pub fn stats(&self) -> StatsSnapshot {
        self.broker.stats()
    }

    pub fn broker(&self) -> &Arc<Broker> {
        &self.broker
    }

    /// Stops accepting, closes every connection, waits for them, stops the
    /// group coordinator and flushes the log. Calling it again is a no-op.
    pub async fn stop(&self) -> Result<()> {
        if self.halt().await {
            #[cfg(feature = "groups")]
            if self.owns_groups {
                self.broker.groups.shutdown();
            }
            self.broker.log.flush()?;
            self.broker.log.close_files();
        }
        Ok(())
    }

    /// Stops the node the way a crash would, short of losing the page
    /// cache: connections and replication end at once, nothing is flushed
    /// and no clean-shutdown mark is left, so the next start recovers.
    pub async fn kill(&self) {
        self.halt().await;
        self.broker.log.close_files();
    }

    /// Stops serving and background work; true the first time.
    async fn halt(&self) -> bool {
        if let Some(tx) = self.shutdown.lock().expect("shutdown lock").take() {
            let _ = tx.send(());
        }
        for task in &self.background {
            task.abort();
        }
        if let Some(node) = &self.broker.cluster {
            node.stop_fetchers();
        }
        let mut server = self.server.lock().await;
        match server.take() {
            Some(task) => {
                let _ = task.await;
                true
            }
            None => false,
        }
    }

    /// Stops serving and replicating for `ms` (fault injection): requests
    /// wait, heartbeats stop, so a long enough pause moves leadership.
    pub fn pause_for(&self, ms: i64) -> Result<()> {
        match &self.broker.cluster {
            Some(node) => {
                node.pause_for(ms);
                Ok(())
            }
            None => Err(Error::InvalidOption {
                name: "pause",
                message: "only cluster nodes can be paused in process".into(),
            }),
        }
    }
}
