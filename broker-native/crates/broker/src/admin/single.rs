//! Topic administration on a lone broker: every change goes straight to
//! this node's log, which leads and holds every partition it has.

use super::{AdminFuture, Leadership, NewTopic, Placement, TopicAdmin};
use crate::blocking::off_worker;
use crate::cluster::PartitionRole;
use crate::error::{Error, Result};
use crate::storage::topic::TopicMeta;
use crate::storage::{Log, Topic};
use crate::topic_config::{validate_all, TopicOverrides};
use kafka_protocol::ResponseError;
use std::sync::Arc;
use uuid::Uuid;

pub struct SingleNodeAdmin {
    log: Arc<Log>,
    node_id: i32,
    host: String,
    /// The port actually bound.
    port: u16,
}

impl SingleNodeAdmin {
    pub fn new(log: Arc<Log>, node_id: i32, host: String, port: u16) -> SingleNodeAdmin {
        SingleNodeAdmin {
            log,
            node_id,
            host,
            port,
        }
    }
}

impl TopicAdmin for SingleNodeAdmin {
    fn create_topic<'a>(
        &'a self,
        topic: NewTopic<'a>,
        validate_only: bool,
    ) -> AdminFuture<'a, (TopicMeta, i16)> {
        Box::pin(async move {
            let rf = topic.replication_factor;
            if rf != -1 && rf != 1 {
                return Err(Error::kafka(
                    ResponseError::InvalidReplicationFactor,
                    format!("replication factor {rf} is larger than the 1 available broker"),
                ));
            }
            let overrides = validate_all(topic.configs.iter().copied())?;
            let meta = off_worker(|| {
                self.log.create_topic_with_configs(
                    topic.name,
                    topic.partitions,
                    overrides,
                    validate_only,
                )
            })?;
            Ok((meta, 1))
        })
    }

    fn delete_topic<'a>(&'a self, name: &'a str) -> AdminFuture<'a, Uuid> {
        Box::pin(async move { self.log.delete_topic(name) })
    }

    fn delete_topic_by_id(&self, id: Uuid) -> AdminFuture<'_, String> {
        Box::pin(async move { self.log.delete_topic_by_id(id) })
    }

    fn create_partitions<'a>(
        &'a self,
        name: &'a str,
        count: i32,
        validate_only: bool,
    ) -> AdminFuture<'a, ()> {
        Box::pin(
            async move { off_worker(|| self.log.create_partitions(name, count, validate_only)) },
        )
    }

    fn set_topic_overrides(
        &self,
        name: &str,
        overrides: TopicOverrides,
        validate_only: bool,
    ) -> Result<()> {
        self.log.set_topic_overrides(name, overrides, validate_only)
    }

    fn advertised_nodes(&self) -> Vec<(i32, String, u16)> {
        vec![(self.node_id, self.host.clone(), self.port)]
    }

    fn controller_id(&self) -> i32 {
        self.node_id
    }

    fn placement(&self, topic: &Topic) -> Option<Vec<Placement>> {
        let me = vec![self.node_id];
        let placement = Placement {
            leader: self.node_id,
            leader_epoch: 0,
            replicas: me.clone(),
            isr: me,
            offline: Vec::new(),
        };
        Some(vec![placement; topic.partitions.len()])
    }

    fn leadership(
        &self,
        _topic: &str,
        _partition: i32,
        _epoch: Option<i32>,
    ) -> std::result::Result<Leadership, ResponseError> {
        Ok(None)
    }

    fn serves_followers(&self) -> bool {
        false
    }

    /// Never called: a lone broker hands out no partition roles.
    fn follower_fetched(&self, _: &Arc<PartitionRole>, _: i32, _: i64, _: i64, _: i64) {}
}
