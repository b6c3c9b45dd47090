//! `startCluster`: N broker nodes in this process with follower replication,
//! and the faults a scenario injects (kill, pause, restart, isolate a node,
//! slow its disk, move leaders back to the preferred replicas).

use crate::{to_js_error, BindingBrokerStats, BrokerLimits, BrokerSecurity};
use kbench_broker_core::launcher::{Cluster, ClusterSpec};
use kbench_broker_core::pause::Isolation;
use kbench_broker_core::FsyncPolicy;
use napi::bindgen_prelude::*;
use napi_derive::napi;

#[napi(object, js_name = "ClusterOptions")]
pub struct BindingClusterOptions {
    /// 1 to 9.
    pub nodes: u32,
    /// Node i keeps its data in `<dataDir>/node-i`; the nodes share
    /// `<dataDir>/cluster`.
    pub data_dir: String,
    /// Node i listens on basePort + i - 1; 0 or absent picks free ports.
    pub base_port: Option<u32>,
    /// `none` (default), `batch`, or `interval:<ms>`.
    pub fsync: Option<String>,
    /// A node silent this long is dead (default 2000).
    pub session_timeout_ms: Option<u32>,
    /// A follower behind this long leaves the ISR (default 3000).
    pub replica_lag_ms: Option<u32>,
    /// Create unknown topics on Metadata requests; defaults to false.
    pub auto_create_topics: Option<bool>,
    /// Each node's limits.
    pub limits: Option<BrokerLimits>,
    /// Each node's client listener (replicas fetch over a plaintext port of their own).
    pub security: Option<BrokerSecurity>,
    /// `HOST:PORT` to serve every node's figures on at `GET /metrics` (Prometheus text, a
    /// `node` label each; port 0 picks one); absent: off.
    pub metrics: Option<String>,
}

#[napi(object, js_name = "ClusterNodeInfo")]
pub struct BindingNodeInfo {
    pub id: i32,
    pub host: String,
    pub port: u32,
    pub running: bool,
}

#[napi(object, js_name = "ClusterNodeStats")]
pub struct BindingNodeStats {
    pub node_id: i32,
    /// Its counters since it started.
    // By its JS name: napi would print the Rust one, which index.d.ts lacks.
    #[napi(ts_type = "BrokerStats")]
    pub stats: BindingBrokerStats,
}

#[napi(js_name = "ClusterHandle")]
pub struct BindingClusterHandle {
    inner: Cluster,
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}

#[napi]
pub async fn start_cluster(options: BindingClusterOptions) -> Result<BindingClusterHandle> {
    let mut spec = ClusterSpec::new(options.nodes as usize, options.data_dir);
    if let Some(port) = options.base_port {
        spec.base_port =
            u16::try_from(port).map_err(|_| invalid(format!("basePort {port} is out of range")))?;
    }
    if let Some(fsync) = options.fsync {
        spec.fsync = FsyncPolicy::parse(&fsync).map_err(|e| invalid(format!("fsync: {e}")))?;
    }
    if let Some(ms) = options.session_timeout_ms {
        spec.session_timeout_ms = i64::from(ms);
    }
    if let Some(ms) = options.replica_lag_ms {
        spec.replica_lag_ms = i64::from(ms);
    }
    spec.limits = BrokerLimits::resolve(options.limits)?;
    spec.security = BrokerSecurity::resolve(options.security)?;
    spec.auto_create_topics = options.auto_create_topics.unwrap_or(false);
    spec.metrics = options.metrics;
    let inner = Cluster::start(spec).await.map_err(to_js_error)?;
    Ok(BindingClusterHandle { inner })
}

#[napi]
impl BindingClusterHandle {
    /// `host:port` of every node, comma-separated.
    #[napi(getter)]
    pub fn bootstrap(&self) -> String {
        self.inner.bootstrap()
    }

    /// `host:port` of `GET /metrics`, when the `metrics` option asked for it.
    #[napi(getter)]
    pub fn metrics_address(&self) -> Option<String> {
        self.inner.metrics_addr().map(|a| a.to_string())
    }

    #[napi]
    pub async fn nodes(&self) -> Result<Vec<BindingNodeInfo>> {
        let mut out = Vec::new();
        for (id, host, port) in self.inner.nodes() {
            out.push(BindingNodeInfo {
                id,
                host,
                port: u32::from(port),
                running: self.inner.is_running(id).await.map_err(to_js_error)?,
            });
        }
        Ok(out)
    }

    /// Stops node `id` at once, as a crash would (its page cache survives).
    #[napi]
    pub async fn kill(&self, id: i32) -> Result<()> {
        self.inner.kill(id).await.map_err(to_js_error)
    }

    /// Node `id` stops serving, replicating and heart-beating for `ms`.
    #[napi]
    pub async fn pause(&self, id: i32, ms: u32) -> Result<()> {
        self.inner
            .pause(id, i64::from(ms))
            .await
            .map_err(to_js_error)
    }

    /// Starts node `id` again on its port and data (killing it first if it
    /// is running).
    #[napi]
    pub async fn restart(&self, id: i32) -> Result<()> {
        self.inner.restart(id).await.map_err(to_js_error)
    }

    /// Cuts node `id` off from its `peers` (replication both ways, heartbeats
    /// and cluster state; clients still reach it) or its `clients` (every
    /// connection but its peers' dropped) for `ms`, or until `heal`.
    #[napi]
    pub async fn isolate(&self, id: i32, from: String, ms: Option<u32>) -> Result<()> {
        let from = match from.as_str() {
            "peers" => Isolation::Peers,
            "clients" => Isolation::Clients,
            other => {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!("isolate from must be peers or clients (got {other:?})"),
                ))
            }
        };
        self.inner
            .isolate(id, from, ms.map(i64::from))
            .await
            .map_err(to_js_error)
    }

    /// Ends node `id`'s isolation and slow disk.
    #[napi]
    pub async fn heal(&self, id: i32) -> Result<()> {
        self.inner.heal(id).await.map_err(to_js_error)
    }

    /// Adds `delayMicros` to each fdatasync of node `id` for `ms`, or until
    /// `heal`.
    #[napi]
    pub async fn slow_disk(&self, id: i32, delay_micros: u32, ms: Option<u32>) -> Result<()> {
        self.inner
            .slow_disk(
                id,
                std::time::Duration::from_micros(u64::from(delay_micros)),
                ms.map(i64::from),
            )
            .await
            .map_err(to_js_error)
    }

    /// Moves leadership back to the preferred replicas; how many partitions moved.
    #[napi]
    pub async fn preferred_leaders(&self) -> Result<u32> {
        self.inner
            .preferred_leaders()
            .await
            .map(|n| n as u32)
            .map_err(to_js_error)
    }

    /// Partitions with node `id` among their replicas but not in their ISR
    /// (null when no node runs).
    #[napi]
    pub async fn out_of_sync(&self, id: i32) -> Option<u32> {
        self.inner.out_of_sync(id).await
    }

    /// The node leading `topic`-`partition`, or null while none does.
    #[napi]
    pub async fn leader_of(&self, topic: String, partition: i32) -> Option<i32> {
        self.inner.leader_of(&topic, partition).await
    }

    /// Counters of every running node.
    #[napi]
    pub async fn stats(&self) -> Vec<BindingNodeStats> {
        self.inner
            .stats()
            .await
            .into_iter()
            .map(|(node_id, s)| BindingNodeStats {
                node_id,
                stats: s.into(),
            })
            .collect()
    }

    /// Stops every node cleanly. Idempotent.
    #[napi]
    pub async fn stop(&self) -> Result<()> {
        self.inner.stop().await.map_err(to_js_error)
    }

    /// Stops every node without flushing its log, for a cluster whose data
    /// directory is deleted next (a run's own cluster). Idempotent.
    #[napi]
    pub async fn discard(&self) {
        self.inner.discard().await
    }
}
