//! Topic administration in a cluster: each change is made to the shared
//! cluster state (the controller's job) and awaited until every live node
//! has applied it, so a client's next request to any node sees it. The
//! handlers validate names, counts and configs exactly as on a lone broker.
//! (Config changes go through `Broker::set_topic_overrides`, which writes the
//! shared state without waiting for the other nodes.)

use super::controller::{assign_replicas, new_partition};
use super::node::ClusterNode;
use super::state::TopicState;
use crate::broker::Broker;
use crate::error::{Error, Result};
use crate::storage::log::{check_growth, check_partition_limits};
use crate::storage::topic::{validate_topic_name, TopicMeta};
use crate::topic_config::TopicOverrides;
use kafka_protocol::ResponseError;
use std::sync::Arc;
use uuid::Uuid;

fn unknown_topic(name: &str) -> Error {
    Error::kafka(
        ResponseError::UnknownTopicOrPartition,
        format!("topic '{name}' does not exist"),
    )
}

/// Creates `name` with `partitions` partitions of `replication_factor`
/// replicas (-1: the cluster's default, 1) spread over the live nodes.
pub async fn create_topic(
    node: &Arc<ClusterNode>,
    broker: &Broker,
    name: &str,
    partitions: i32,
    replication_factor: i16,
    overrides: TopicOverrides,
    validate_only: bool,
) -> Result<(TopicMeta, i16)> {
    validate_topic_name(name)?;
    if partitions < 1 {
        return Err(Error::kafka(
            ResponseError::InvalidPartitions,
            format!("number of partitions {partitions} is below 1"),
        ));
    }
    let rf = if replication_factor == -1 {
        1
    } else {
        replication_factor
    };
    let alive: Vec<i32> = node.live_nodes_now().into_iter().collect();
    if rf < 1 || rf as usize > alive.len() {
        return Err(Error::kafka(
            ResponseError::InvalidReplicationFactor,
            format!(
                "replication factor {rf} must be between 1 and the {} live broker(s)",
                alive.len()
            ),
        ));
    }
    let exists = || {
        Error::kafka(
            ResponseError::TopicAlreadyExists,
            format!("topic '{name}' already exists"),
        )
    };
    if validate_only {
        let state = node.state();
        if state.topics.contains_key(name) {
            return Err(exists());
        }
        check_partition_limits(
            broker.log.limits(),
            partitions,
            total_partitions(&state),
            partitions as usize,
        )?;
        return Ok((
            TopicMeta {
                id: Uuid::nil(),
                partitions,
            },
            rf,
        ));
    }
    // Every node holds every partition's log, so the cluster as a whole
    // keeps to one node's limits.
    let limits = broker.log.limits();
    let check_limits = |s: &super::state::ClusterState| {
        check_partition_limits(limits, partitions, total_partitions(s), partitions as usize)
    };
    let id = Uuid::new_v4();
    node.change(broker, |s, _| {
        if s.topics.contains_key(name) {
            return Err(exists());
        }
        check_limits(s)?;
        let start = s.topics.len() % alive.len();
        let partitions = assign_replicas(&alive, partitions as usize, rf as usize, start)
            .into_iter()
            .map(new_partition)
            .collect();
        s.topics.insert(
            name.to_string(),
            TopicState {
                id,
                configs: overrides.into_iter().collect(),
                partitions,
            },
        );
        Ok(())
    })
    .await?;
    Ok((TopicMeta { id, partitions }, rf))
}

pub async fn delete_topic(node: &Arc<ClusterNode>, broker: &Broker, name: &str) -> Result<Uuid> {
    node.change(broker, |s, _| {
        s.topics
            .remove(name)
            .map(|t| t.id)
            .ok_or_else(|| unknown_topic(name))
    })
    .await
}

pub async fn delete_topic_by_id(
    node: &Arc<ClusterNode>,
    broker: &Broker,
    id: Uuid,
) -> Result<String> {
    node.change(broker, |s, _| {
        let name = s
            .topics
            .iter()
            .find(|(_, t)| t.id == id)
            .map(|(n, _)| n.clone())
            .ok_or_else(|| {
                Error::kafka(
                    ResponseError::UnknownTopicId,
                    format!("no topic with id {id}"),
                )
            })?;
        s.topics.remove(&name);
        Ok(name)
    })
    .await
}

/// Grows `name` to `count` partitions, with the replication factor of its
/// first partition.
pub async fn create_partitions(
    node: &Arc<ClusterNode>,
    broker: &Broker,
    name: &str,
    count: i32,
    validate_only: bool,
) -> Result<()> {
    let limits = broker.log.limits();
    let check = |s: &super::state::ClusterState| {
        let t = s.topics.get(name).ok_or_else(|| unknown_topic(name))?;
        let current = t.partitions.len() as i32;
        check_growth(current, count)?;
        check_partition_limits(
            limits,
            count,
            total_partitions(s),
            (count - current) as usize,
        )
    };
    if validate_only {
        return check(&node.state());
    }
    node.change(broker, |s, alive| {
        let alive: Vec<i32> = alive.iter().copied().collect();
        check(s)?;
        let t = s.topics.get_mut(name).ok_or_else(|| unknown_topic(name))?;
        let rf = t.partitions[0].replicas.len();
        if rf > alive.len() {
            return Err(Error::kafka(
                ResponseError::InvalidReplicationFactor,
                format!(
                    "replication factor {rf} is above the {} live broker(s)",
                    alive.len()
                ),
            ));
        }
        let current = t.partitions.len();
        let more = assign_replicas(&alive, count as usize - current, rf, current % alive.len());
        t.partitions.extend(more.into_iter().map(new_partition));
        Ok(())
    })
    .await
}

/// Partitions of every topic in the cluster.
fn total_partitions(state: &super::state::ClusterState) -> usize {
    state.topics.values().map(|t| t.partitions.len()).sum()
}
