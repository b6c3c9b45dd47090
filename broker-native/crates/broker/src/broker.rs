//! Broker state shared by every connection, and the start/stop lifecycle.

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
}

impl Broker {
    /// Opens the log and the group coordinator under `config.data_dir`.
    /// Must run inside a tokio runtime.
    pub fn open(config: BrokerConfig, port: u16) -> Result<Broker> {
        if config.segment_bytes == 0 || config.segment_bytes > u32::MAX as u64 {
            return Err(Error::InvalidOption {
                name: "segment_bytes",
                message: "must be between 1 and 4 GiB".into(),
            });
        }
        let log = Log::open(
            &config.data_dir,
            LogConfig {
                segment_bytes: config.segment_bytes,
                fsync: config.fsync,
                ..LogConfig::default()
            },
        )?;
        let producer_ids = ProducerIdAllocator::open(&config.data_dir)?;
        #[cfg(feature = "groups")]
        let groups =
            GroupCoordinator::open(&config.data_dir.join("__groups"), GroupConfig::default())
                .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))?;
        Ok(Broker {
            config,
            port,
            log,
            #[cfg(feature = "groups")]
            groups,
            stats: Stats::default(),
            apis: SupportedApis::new(),
            producer_ids,
        })
    }

    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot(self.log.size_bytes())
    }
}

/// A running broker: its address, stats, and a way to stop it.
pub struct BrokerHandle {
    broker: Arc<Broker>,
    shutdown: std::sync::Mutex<Option<oneshot::Sender<()>>>,
    server: tokio::sync::Mutex<Option<JoinHandle<()>>>,
    retention: JoinHandle<()>,
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

/// Binds the listener, opens storage and starts serving on the current
/// tokio runtime.
pub async fn start(config: BrokerConfig) -> Result<BrokerHandle> {
    std::fs::create_dir_all(&config.data_dir)?;
    let listener = TcpListener::bind((config.host.as_str(), config.port)).await?;
    let port = listener.local_addr()?.port();
    let broker = Arc::new(Broker::open(config, port)?);
    let (tx, rx) = oneshot::channel::<()>();
    let server = tokio::spawn(crate::server::run(listener, broker.clone(), async move {
        let _ = rx.await;
    }));
    let retention = tokio::spawn(enforce_retention(broker.clone()));
    Ok(BrokerHandle {
        broker,
        shutdown: std::sync::Mutex::new(Some(tx)),
        server: tokio::sync::Mutex::new(Some(server)),
        retention,
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
        if let Some(tx) = self.shutdown.lock().expect("shutdown lock").take() {
            let _ = tx.send(());
        }
        self.retention.abort();
        let mut server = self.server.lock().await;
        if let Some(task) = server.take() {
            let _ = task.await;
            #[cfg(feature = "groups")]
            self.broker.groups.shutdown();
            self.broker.log.flush()?;
        }
        Ok(())
    }
}
