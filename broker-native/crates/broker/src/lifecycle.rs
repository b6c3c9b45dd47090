//! Starting and stopping a node: bind the listener, open the handler
//! context, join the cluster (when the node is part of one) before serving,
//! run the background upkeep, and end it all cleanly or as a crash would.

use crate::broker::{Broker, BrokerParts};
use crate::cluster::{ClusterNode, ClusterOptions};
use crate::config::BrokerConfig;
use crate::error::{Error, Result};
use crate::metrics::{Collect, MetricsServer};
use crate::stats::StatsSnapshot;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running broker: its address, stats, and a way to stop it.
pub struct BrokerHandle {
    broker: Arc<Broker>,
    /// This node's part in a bundled cluster; `None` for a lone broker.
    node: Option<Arc<ClusterNode>>,
    shutdown: std::sync::Mutex<Option<oneshot::Sender<()>>>,
    server: tokio::sync::Mutex<Option<JoinHandle<()>>>,
    /// Retention, interval flushes, and a cluster node's upkeep.
    background: Vec<JoinHandle<()>>,
    /// False when the group coordinator is shared with other nodes.
    owns_groups: bool,
    /// `GET /metrics`, when `config.metrics` asks for it.
    metrics: Option<MetricsServer>,
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
    // Bad TLS files or users fail the start before anything is bound.
    let security = Arc::new(crate::security::Listener::open(&config.security)?);
    let listener = TcpListener::bind((config.host.as_str(), config.port)).await?;
    let port = listener.local_addr()?.port();
    let metrics_listener = match &config.metrics {
        Some(addr) => Some(crate::metrics::bind(addr).await?),
        None => None,
    };
    let owns_groups = parts.groups.is_none();
    if let Some(options) = cluster {
        parts.cluster = Some(ClusterNode::new(config.node_id, options)?);
    }
    let node = parts.cluster.clone();
    // Followers fetch over plaintext: a secured node also listens for them
    // on a second, plaintext port, which only the cluster state names.
    let replication = match (&node, config.security.protocol()) {
        (Some(_), protocol) if protocol != "PLAINTEXT" => {
            Some(TcpListener::bind((config.host.as_str(), 0)).await?)
        }
        _ => None,
    };
    let replication_port = match &replication {
        Some(listener) => Some(listener.local_addr()?.port()),
        None => None,
    };
    let broker = Arc::new(Broker::open_with(config, port, parts)?);
    let mut background =
        crate::background::spawn(&broker.log, broker.config.retention_check_interval);
    if let Some(listener) = replication {
        // Ends with the node: halt aborts it with the background tasks.
        background.push(tokio::spawn(crate::server::run(
            listener,
            broker.clone(),
            Arc::new(crate::security::Listener::plaintext()),
            std::future::pending::<()>(),
        )));
    }
    if let Some(node) = node.clone() {
        let b = broker.clone();
        let n = node.clone();
        tokio::task::spawn_blocking(move || -> Result<()> {
            n.register(
                &b.config.host,
                b.port,
                replication_port,
                &b.config.cluster_id,
            )?;
            n.refresh(&b.log)?;
            Ok(())
        })
        .await
        .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))??;
        background.push(crate::cluster::spawn(node, broker.log.clone()));
    }
    let metrics = match metrics_listener {
        Some(listener) => {
            let (b, n) = (broker.clone(), node.clone());
            let collect: Collect = Arc::new(move || {
                let figures = vec![(b.config.node_id, node_stats(&b, n.as_ref()))];
                Box::pin(std::future::ready(figures))
            });
            Some(MetricsServer::serve(listener, collect)?)
        }
        None => None,
    };
    let (tx, rx) = oneshot::channel::<()>();
    let server = tokio::spawn(crate::server::run(
        listener,
        broker.clone(),
        security,
        async move {
            let _ = rx.await;
        },
    ));
    Ok(BrokerHandle {
        broker,
        node,
        shutdown: std::sync::Mutex::new(Some(tx)),
        server: tokio::sync::Mutex::new(Some(server)),
        background,
        owns_groups,
        metrics,
    })
}

/// A node's traffic and storage figures, and its replication's.
fn node_stats(broker: &Broker, node: Option<&Arc<ClusterNode>>) -> StatsSnapshot {
    let mut snapshot = broker.stats();
    if let Some(node) = node {
        node.add_stats(&mut snapshot);
    }
    snapshot
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

    /// Traffic and storage figures, and a cluster node's replication.
    pub fn stats(&self) -> StatsSnapshot {
        node_stats(&self.broker, self.node.as_ref())
    }

    /// Where `GET /metrics` is served, when `config.metrics` asked for it.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().map(MetricsServer::local_addr)
    }

    pub fn broker(&self) -> &Arc<Broker> {
        &self.broker
    }

    /// This node's part in a bundled cluster; `None` for a lone broker.
    pub fn cluster_node(&self) -> Option<&Arc<ClusterNode>> {
        self.node.as_ref()
    }

    /// Stops accepting, closes every connection, waits for them, stops the
    /// group coordinator and flushes the log. Calling it again is a no-op.
    pub async fn stop(&self) -> Result<()> {
        self.close(true).await
    }

    /// Stops the node for good when its data is deleted next (a run's own
    /// broker): like `stop`, but the log is not flushed, as nothing will
    /// read it again. Flushing a run's gigabytes of page cache to a disk
    /// about to free them took seconds. Calling it again is a no-op.
    pub async fn discard(&self) {
        // Without the flush nothing in closing can fail.
        let _ = self.close(false).await;
    }

    /// `stop` (`flush`) or `discard`; the first call does the work.
    pub(crate) async fn close(&self, flush: bool) -> Result<()> {
        if self.halt().await {
            if self.owns_groups {
                self.broker.groups.shutdown();
            }
            let log = &self.broker.log;
            let flushed = crate::blocking::off_worker(|| {
                let flushed = if flush { log.flush() } else { Ok(()) };
                log.halt_journal();
                flushed
            });
            flushed?;
            self.broker.log.close_files();
        }
        Ok(())
    }

    /// Stops the node the way a crash would, short of losing the page
    /// cache: connections and replication end at once, nothing is flushed
    /// and no clean-shutdown mark is left, so the next start recovers.
    pub async fn kill(&self) {
        self.halt().await;
        crate::blocking::off_worker(|| self.broker.log.halt_journal());
        self.broker.log.close_files();
    }

    /// Stops serving and background work; true the first time.
    async fn halt(&self) -> bool {
        if let Some(metrics) = &self.metrics {
            metrics.stop();
        }
        if let Some(tx) = self.shutdown.lock().expect("shutdown lock").take() {
            let _ = tx.send(());
        }
        for task in &self.background {
            task.abort();
        }
        if let Some(node) = &self.node {
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
        match &self.node {
            Some(node) => {
                node.pause.pause_for(ms);
                Ok(())
            }
            None => Err(Error::InvalidOption {
                name: "pause",
                message: "only cluster nodes can be paused in process".into(),
            }),
        }
    }
}
