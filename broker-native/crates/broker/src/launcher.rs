//! N cluster nodes in this process, each with its own port and data
//! directory under one base directory, and the faults a scenario injects:
//! kill, pause and restart a node.

use crate::broker::BrokerParts;
use crate::cluster::controller;
use crate::cluster::node::{ClusterOptions, DEFAULT_REPLICA_LAG_MS, DEFAULT_SESSION_TIMEOUT_MS};
use crate::config::{BrokerConfig, FsyncPolicy, Limits, Security};
use crate::error::{Error, Result};
use crate::lifecycle::{start_with, BrokerHandle};
use crate::metrics::{Collect, MetricsServer};
use crate::pause::Isolation;
use crate::stats::StatsSnapshot;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub nodes: usize,
    pub dir: PathBuf,
    pub host: String,
    /// Node i listens on base_port + i - 1; 0 picks free ports (kept across
    /// restarts).
    pub base_port: u16,
    pub fsync: FsyncPolicy,
    pub session_timeout_ms: i64,
    pub replica_lag_ms: i64,
    pub auto_create_topics: bool,
    /// Each node's limits (connections, frames, partitions).
    pub limits: Limits,
    /// Each node's client listener: TLS and SASL (replicas fetch over a
    /// plaintext listener of their own).
    pub security: Security,
    /// `HOST:PORT` to serve every node's figures on at `GET /metrics`
    /// (one endpoint, a `node` label per node); none: off.
    pub metrics: Option<String>,
}

impl ClusterSpec {
    pub fn new(nodes: usize, dir: impl Into<PathBuf>) -> ClusterSpec {
        ClusterSpec {
            nodes,
            dir: dir.into(),
            host: "127.0.0.1".into(),
            base_port: 0,
            fsync: FsyncPolicy::None,
            session_timeout_ms: DEFAULT_SESSION_TIMEOUT_MS,
            replica_lag_ms: DEFAULT_REPLICA_LAG_MS,
            auto_create_topics: false,
            limits: Limits::default(),
            security: Security::default(),
            metrics: None,
        }
    }

    /// The data directory of node `id`.
    pub fn node_dir(dir: &Path, id: i32) -> PathBuf {
        dir.join(format!("node-{id}"))
    }

    /// The directory the nodes share.
    pub fn shared_dir(dir: &Path) -> PathBuf {
        dir.join("cluster")
    }

    pub fn node_config(&self, id: i32, port: u16) -> BrokerConfig {
        let mut config = BrokerConfig::new(ClusterSpec::node_dir(&self.dir, id));
        config.host = self.host.clone();
        config.port = port;
        config.node_id = id;
        config.fsync = self.fsync;
        config.auto_create_topics = self.auto_create_topics;
        config.limits = self.limits.clone();
        config.security = self.security.clone();
        config
    }

    pub fn cluster_options(&self) -> ClusterOptions {
        ClusterOptions {
            dir: ClusterSpec::shared_dir(&self.dir),
            session_timeout_ms: self.session_timeout_ms,
            replica_lag_ms: self.replica_lag_ms,
        }
    }
}

struct Slot {
    id: i32,
    port: u16,
    handle: Mutex<Option<BrokerHandle>>,
}

pub struct Cluster {
    spec: ClusterSpec,
    slots: Vec<Arc<Slot>>,
    metrics: Option<MetricsServer>,
    groups: std::sync::Arc<kbench_group::GroupCoordinator>,
}

impl Cluster {
    /// Starts every node and waits until each sees all the others alive.
    pub async fn start(spec: ClusterSpec) -> Result<Cluster> {
        if !(1..=9).contains(&spec.nodes) {
            return Err(Error::InvalidOption {
                name: "nodes",
                message: format!("must be between 1 and 9 (got {})", spec.nodes),
            });
        }
        std::fs::create_dir_all(&spec.dir)?;
        let groups = kbench_group::GroupCoordinator::open(
            &spec.dir.join("__groups"),
            kbench_group::GroupConfig::default(),
        )
        .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))?;
        // Bound first: a taken address fails the start before any node runs.
        let metrics_listener = match &spec.metrics {
            Some(addr) => Some(crate::metrics::bind(addr).await?),
            None => None,
        };
        let mut cluster = Cluster {
            slots: Vec::new(),
            metrics: None,
            groups,
            spec,
        };
        for i in 0..cluster.spec.nodes {
            let id = i as i32 + 1;
            let port = match cluster.spec.base_port {
                0 => 0,
                base => base + i as u16,
            };
            let handle = cluster.launch(id, port).await?;
            cluster.slots.push(Arc::new(Slot {
                id,
                port: handle.port(),
                handle: Mutex::new(Some(handle)),
            }));
        }
        cluster.wait_all_alive(Duration::from_secs(10)).await?;
        if let Some(listener) = metrics_listener {
            let slots = cluster.slots.clone();
            let collect: Collect = Arc::new(move || {
                let slots = slots.clone();
                Box::pin(async move { stats_of(&slots).await })
            });
            cluster.metrics = Some(MetricsServer::serve(listener, collect)?);
        }
        Ok(cluster)
    }

    async fn launch(&self, id: i32, port: u16) -> Result<BrokerHandle> {
        let parts = BrokerParts {
            groups: Some(self.groups.clone()),
            ..BrokerParts::default()
        };
        start_with(
            self.spec.node_config(id, port),
            Some(self.spec.cluster_options()),
            parts,
        )
        .await
    }

    async fn wait_all_alive(&self, timeout: Duration) -> Result<()> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let mut all = true;
            for slot in &self.slots {
                if let Some(h) = slot.handle.lock().await.as_ref() {
                    let node = h.cluster_node().expect("cluster node");
                    all &= node.alive_nodes().len() >= self.slots.len();
                }
            }
            if all {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::Io(std::io::Error::other(
                    "cluster nodes did not see each other within 10 s",
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub fn spec(&self) -> &ClusterSpec {
        &self.spec
    }

    /// (node id, host, port) of every node, running or not.
    pub fn nodes(&self) -> Vec<(i32, String, u16)> {
        self.slots
            .iter()
            .map(|s| (s.id, self.spec.host.clone(), s.port))
            .collect()
    }

    pub fn bootstrap(&self) -> String {
        self.slots
            .iter()
            .map(|s| format!("{}:{}", self.spec.host, s.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn slot(&self, id: i32) -> Result<&Slot> {
        self.slots
            .iter()
            .find(|s| s.id == id)
            .map(|s| &**s)
            .ok_or_else(|| Error::InvalidOption {
                name: "node",
                message: format!("no node {id} (nodes are 1..={})", self.slots.len()),
            })
    }

    pub async fn is_running(&self, id: i32) -> Result<bool> {
        Ok(self.slot(id)?.handle.lock().await.is_some())
    }

    /// Kills node `id` (see `BrokerHandle::kill`); a no-op if it is down.
    pub async fn kill(&self, id: i32) -> Result<()> {
        let handle = self.slot(id)?.handle.lock().await.take();
        if let Some(h) = handle {
            h.kill().await;
        }
        Ok(())
    }

    /// Starts node `id` again on its port and data directory (killing it
    /// first if it is running).
    pub async fn restart(&self, id: i32) -> Result<()> {
        let slot = self.slot(id)?;
        let mut handle = slot.handle.lock().await;
        if let Some(h) = handle.take() {
            h.kill().await;
        }
        *handle = Some(self.launch(id, slot.port).await?);
        Ok(())
    }

    pub async fn pause(&self, id: i32, ms: i64) -> Result<()> {
        match self.slot(id)?.handle.lock().await.as_ref() {
            Some(h) => h.pause_for(ms),
            None => Err(Error::InvalidOption {
                name: "node",
                message: format!("node {id} is not running"),
            }),
        }
    }

    /// Cuts node `id` off from its peers or its clients for `ms` (None:
    /// until `heal`); see `pause::Pause::isolate`.
    pub async fn isolate(&self, id: i32, from: Isolation, ms: Option<i64>) -> Result<()> {
        self.running_node(id, |h| {
            h.cluster_node()
                .map(|n| n.pause.isolate(from, ms))
                .is_some()
        })
        .await
    }

    /// Ends node `id`'s isolation and slow disk.
    pub async fn heal(&self, id: i32) -> Result<()> {
        self.running_node(id, |h| {
            h.broker()
                .log
                .storage_stats()
                .slow_down(Duration::ZERO, None);
            h.cluster_node().map(|n| n.pause.heal()).is_some()
        })
        .await
    }

    /// Adds `delay` to each fdatasync of node `id` for `ms` (None: until
    /// `heal`).
    pub async fn slow_disk(&self, id: i32, delay: Duration, ms: Option<i64>) -> Result<()> {
        self.running_node(id, |h| {
            h.broker().log.storage_stats().slow_down(delay, ms);
            true
        })
        .await
    }

    async fn running_node(&self, id: i32, act: impl FnOnce(&BrokerHandle) -> bool) -> Result<()> {
        let acted = match self.slot(id)?.handle.lock().await.as_ref() {
            Some(h) => act(h),
            None => false,
        };
        if acted {
            Ok(())
        } else {
            Err(Error::InvalidOption {
                name: "node",
                message: format!("node {id} is not running"),
            })
        }
    }

    /// Moves leadership back to the preferred replicas (see
    /// `controller::elect_preferred`); returns how many partitions moved.
    pub async fn preferred_leaders(&self) -> Result<usize> {
        for slot in &self.slots {
            if let Some(node) = slot
                .handle
                .lock()
                .await
                .as_ref()
                .and_then(|h| h.cluster_node().cloned())
            {
                let alive = node.live_nodes_now();
                let (moved, _) = node
                    .store
                    .modify(|s| Ok(controller::elect_preferred(s, &alive)))?;
                return Ok(moved);
            }
        }
        Err(Error::InvalidOption {
            name: "node",
            message: "no node is running".into(),
        })
    }

    /// Partitions that have node `id` among their replicas but not in
    /// their ISR, as the cluster state says (None: no node runs).
    pub async fn out_of_sync(&self, id: i32) -> Option<u32> {
        for slot in &self.slots {
            if let Some(h) = slot.handle.lock().await.as_ref() {
                let state = h.cluster_node()?.store.read().ok()?;
                let count = state
                    .topics
                    .values()
                    .flat_map(|t| t.partitions.iter())
                    .filter(|p| p.replicas.contains(&id) && !p.isr.contains(&id))
                    .count();
                return Some(count as u32);
            }
        }
        None
    }

    /// The node that leads `topic`-`partition`, as the cluster state says.
    pub async fn leader_of(&self, topic: &str, partition: i32) -> Option<i32> {
        for slot in &self.slots {
            if let Some(h) = slot.handle.lock().await.as_ref() {
                let node = h.cluster_node()?;
                let state = node.store.read().ok()?;
                return state
                    .partition(topic, partition)
                    .map(|p| p.leader)
                    .filter(|l| *l >= 0);
            }
        }
        None
    }

    /// Stats of every running node, by id.
    pub async fn stats(&self) -> Vec<(i32, StatsSnapshot)> {
        stats_of(&self.slots).await
    }

    /// Where `GET /metrics` is served, when `spec.metrics` asked for it.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().map(MetricsServer::local_addr)
    }

    /// Stops every node without flushing its log, for a cluster whose data
    /// is deleted next (see `BrokerHandle::discard`).
    pub async fn discard(&self) {
        // Without the flush nothing in closing can fail.
        let _ = self.close(false).await;
    }

    /// Stops every node cleanly.
    pub async fn stop(&self) -> Result<()> {
        self.close(true).await
    }

    async fn close(&self, flush: bool) -> Result<()> {
        if let Some(metrics) = &self.metrics {
            metrics.stop();
        }
        for slot in &self.slots {
            if let Some(h) = slot.handle.lock().await.take() {
                h.close(flush).await?;
            }
        }
        self.groups.shutdown();
        Ok(())
    }
}

async fn stats_of(slots: &[Arc<Slot>]) -> Vec<(i32, StatsSnapshot)> {
    let mut out = Vec::new();
    for slot in slots {
        if let Some(h) = slot.handle.lock().await.as_ref() {
            out.push((slot.id, h.stats()));
        }
    }
    out
}
