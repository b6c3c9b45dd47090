//! The handler context: what every request handler may touch, shared by
//! every connection of one node. Starting and stopping a node is
//! `lifecycle`'s; topic administration is `admin`'s, behind one trait.

use crate::admin::{ClusterAdmin, SingleNodeAdmin, TopicAdmin};
use crate::apis::SupportedApis;
use crate::cluster::ClusterNode;
use crate::config::BrokerConfig;
use crate::error::{Error, Result};
use crate::pause::Pause;
use crate::producer_ids::ProducerIdAllocator;
use crate::stats::{Stats, StatsSnapshot};
use crate::storage::{Log, LogConfig};
use kbench_group::{GroupConfig, GroupCoordinator};
use std::sync::Arc;

pub struct Broker {
    pub config: BrokerConfig,
    /// The port actually bound (differs from `config.port` when that is 0).
    pub port: u16,
    pub log: Arc<Log>,
    pub groups: Arc<GroupCoordinator>,
    pub stats: Stats,
    pub apis: SupportedApis,
    /// Ids for InitProducerId, never reused across restarts.
    pub producer_ids: ProducerIdAllocator,
    /// Topics, partitions, leadership: this node alone, or its cluster.
    pub admin: Arc<dyn TopicAdmin>,
    /// Fault injection: while paused, the server holds every request.
    pub pause: Arc<Pause>,
}

/// What a cluster node brings to `Broker::open_with`.
#[derive(Default)]
pub struct BrokerParts {
    pub cluster: Option<Arc<ClusterNode>>,
    /// A coordinator shared by nodes in one process, so that groups and
    /// their offsets survive any one node's death.
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
        let log = Arc::new(Log::open(
            &config.data_dir,
            LogConfig {
                segment_bytes: config.segment_bytes,
                fsync: config.fsync,
                max_partitions_per_topic: config.limits.max_partitions_per_topic,
                max_partitions: config.limits.max_partitions,
                ..LogConfig::default()
            },
        )?);
        let producer_ids = ProducerIdAllocator::open(&config.data_dir)?;
        let groups = match parts.groups {
            Some(shared) => shared,
            None => {
                GroupCoordinator::open(&config.data_dir.join("__groups"), GroupConfig::default())
                    .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))?
            }
        };
        // The one place that knows which kind of node this is.
        let (admin, pause, producer_ids): (Arc<dyn TopicAdmin>, _, _) = match parts.cluster {
            None => (
                Arc::new(SingleNodeAdmin::new(
                    log.clone(),
                    config.node_id,
                    config.host.clone(),
                    port,
                )),
                Arc::default(),
                producer_ids,
            ),
            Some(node) => (
                Arc::new(ClusterAdmin::new(node.clone(), log.clone())),
                node.pause.clone(),
                producer_ids.unique_across_nodes(config.node_id),
            ),
        };
        // SaslHandshake and SaslAuthenticate are advertised only by a SASL listener.
        let apis = match config.security.sasl {
            Some(_) => SupportedApis::with_sasl(),
            None => SupportedApis::new(),
        };
        Ok(Broker {
            config,
            port,
            log,
            groups,
            stats: Stats::default(),
            apis,
            producer_ids,
            admin,
            pause,
        })
    }

    /// This node's traffic and storage figures.
    pub fn stats(&self) -> StatsSnapshot {
        let partitions = self.log.partition_count();
        self.stats.snapshot(
            self.log.size_bytes(),
            partitions as u64,
            self.log.storage_stats(),
        )
    }
}
