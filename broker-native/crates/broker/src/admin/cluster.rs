//! Topic administration on a cluster node: each change is made to the
//! shared cluster state (the controller's job) and awaited until every live
//! node has applied it, so a client's next request to any node sees it.
//! Names, counts and configs are validated as on a lone broker. Config
//! changes are the exception: written to the shared state and applied here
//! at once, without waiting for the other nodes. Leadership, placement and
//! the advertised nodes are read from the cluster state this node applied.

use super::{AdminFuture, Leadership, NewTopic, Placement, TopicAdmin};
use crate::cluster::controller::{assign_replicas, new_partition};
use crate::cluster::state::{ClusterState, PartitionState, TopicState};
use crate::cluster::{ClusterNode, PartitionRole};
use crate::error::{Error, Result};
use crate::storage::log::{check_growth, check_partition_limits};
use crate::storage::topic::{validate_topic_name, TopicMeta};
use crate::storage::{Log, Topic};
use crate::topic_config::{validate_all, TopicOverrides};
use kafka_protocol::ResponseError;
use std::sync::Arc;
use uuid::Uuid;

pub struct ClusterAdmin {
    node: Arc<ClusterNode>,
    /// This node's log, which each change is applied to.
    log: Arc<Log>,
}

impl ClusterAdmin {
    pub fn new(node: Arc<ClusterNode>, log: Arc<Log>) -> ClusterAdmin {
        ClusterAdmin { node, log }
    }

    /// Whether Metadata lists node `id` among the brokers: this node, and
    /// the nodes whose heartbeats are fresh as of the last check.
    fn listed(&self) -> impl Fn(i32) -> bool {
        let (alive, me) = (self.node.alive_nodes(), self.node.id);
        move |id| id == me || alive.contains(&id)
    }
}

/// A partition as Metadata reports it, given which nodes it lists. A leader
/// it does not list (its heartbeat stopped, and the controller has not yet
/// moved its partitions) is reported as none, LEADER_NOT_AVAILABLE, as
/// Kafka reports a leader with no live endpoint: a client told of a leader
/// it has no address for has nowhere to send, and may wait for good.
fn placement(p: &PartitionState, listed: &impl Fn(i32) -> bool) -> Placement {
    Placement {
        leader: if p.leader >= 0 && listed(p.leader) {
            p.leader
        } else {
            -1
        },
        leader_epoch: p.leader_epoch,
        replicas: p.replicas.clone(),
        isr: p.isr.clone(),
        offline: p.replicas.iter().copied().filter(|r| !listed(*r)).collect(),
    }
}

fn unknown_topic(name: &str) -> Error {
    Error::kafka(
        ResponseError::UnknownTopicOrPartition,
        format!("topic '{name}' does not exist"),
    )
}

/// Creates `name` with `partitions` partitions of `replication_factor`
/// replicas (-1: the cluster's default, 1) spread over the live nodes.
async fn create_topic(
    node: &Arc<ClusterNode>,
    log: &Log,
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
            log.limits(),
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
    let limits = log.limits();
    let check_limits = |s: &ClusterState| {
        check_partition_limits(limits, partitions, total_partitions(s), partitions as usize)
    };
    let id = Uuid::new_v4();
    node.change(log, |s, _| {
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

async fn delete_topic(node: &Arc<ClusterNode>, log: &Log, name: &str) -> Result<Uuid> {
    node.change(log, |s, _| {
        s.topics
            .remove(name)
            .map(|t| t.id)
            .ok_or_else(|| unknown_topic(name))
    })
    .await
}

async fn delete_topic_by_id(node: &Arc<ClusterNode>, log: &Log, id: Uuid) -> Result<String> {
    node.change(log, |s, _| {
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
async fn create_partitions(
    node: &Arc<ClusterNode>,
    log: &Log,
    name: &str,
    count: i32,
    validate_only: bool,
) -> Result<()> {
    let limits = log.limits();
    let check = |s: &ClusterState| {
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
    node.change(log, |s, alive| {
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
fn total_partitions(state: &ClusterState) -> usize {
    state.topics.values().map(|t| t.partitions.len()).sum()
}

impl TopicAdmin for ClusterAdmin {
    fn create_topic<'a>(
        &'a self,
        topic: NewTopic<'a>,
        validate_only: bool,
    ) -> AdminFuture<'a, (TopicMeta, i16)> {
        Box::pin(async move {
            let overrides = validate_all(topic.configs.iter().copied())?;
            create_topic(
                &self.node,
                &self.log,
                topic.name,
                topic.partitions,
                topic.replication_factor,
                overrides,
                validate_only,
            )
            .await
        })
    }

    fn delete_topic<'a>(&'a self, name: &'a str) -> AdminFuture<'a, Uuid> {
        Box::pin(delete_topic(&self.node, &self.log, name))
    }

    fn delete_topic_by_id(&self, id: Uuid) -> AdminFuture<'_, String> {
        Box::pin(delete_topic_by_id(&self.node, &self.log, id))
    }

    fn create_partitions<'a>(
        &'a self,
        name: &'a str,
        count: i32,
        validate_only: bool,
    ) -> AdminFuture<'a, ()> {
        Box::pin(create_partitions(
            &self.node,
            &self.log,
            name,
            count,
            validate_only,
        ))
    }

    fn set_topic_overrides(
        &self,
        name: &str,
        overrides: TopicOverrides,
        validate_only: bool,
    ) -> Result<()> {
        if !self.node.state().topics.contains_key(name) {
            return Err(unknown_topic(name));
        }
        if validate_only {
            return Ok(());
        }
        self.node.store.modify(|s| {
            if let Some(t) = s.topics.get_mut(name) {
                t.configs = overrides.clone().into_iter().collect();
            }
            Ok(())
        })?;
        // Applied here at once; the other nodes follow within their next
        // refresh.
        self.log.set_topic_overrides(name, overrides, false)
    }

    /// Every live node of the cluster, and this one.
    fn advertised_nodes(&self) -> Vec<(i32, String, u16)> {
        let listed = self.listed();
        self.node
            .state()
            .nodes
            .iter()
            .filter(|(id, _)| listed(**id))
            .map(|(id, n)| (*id, n.host.clone(), n.port))
            .collect()
    }

    fn controller_id(&self) -> i32 {
        self.node.coordinator()
    }

    fn placement(&self, topic: &Topic) -> Option<Vec<Placement>> {
        let state = self.node.state();
        let listed = self.listed();
        let t = state.topics.get(&topic.name)?;
        Some(t.partitions.iter().map(|p| placement(p, &listed)).collect())
    }

    fn leadership(
        &self,
        topic: &str,
        partition: i32,
        epoch: Option<i32>,
    ) -> std::result::Result<Leadership, ResponseError> {
        let role = self
            .node
            .role(topic, partition)
            .ok_or(ResponseError::UnknownTopicOrPartition)?;
        let epoch = role.check_leader(epoch)?;
        Ok(Some((role, epoch)))
    }

    fn serves_followers(&self) -> bool {
        true
    }

    fn follower_fetched(
        &self,
        role: &Arc<PartitionRole>,
        follower: i32,
        fetch_offset: i64,
        durable: i64,
        now_ms: i64,
    ) {
        let Some(proposal) = role.on_follower_fetch(follower, fetch_offset, durable, now_ms) else {
            return;
        };
        let (node, role) = (self.node.clone(), role.clone());
        tokio::task::spawn_blocking(move || node.write_isr(&role, &proposal));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leader_metadata_does_not_list_is_reported_as_none() {
        let p = new_partition(vec![1, 2, 3]);
        let all = placement(&p, &|_| true);
        assert_eq!((all.leader, all.offline), (1, vec![]));
        // Node 1's heartbeat stopped; the controller has not moved its
        // partitions yet.
        let gone = placement(&p, &|id| id != 1);
        assert_eq!(gone.leader, -1);
        assert_eq!(gone.leader_epoch, 0);
        assert_eq!(gone.offline, vec![1]);
        assert_eq!(gone.isr, vec![1, 2, 3]);
        // An offline partition stays without a leader.
        let mut offline = p.clone();
        offline.leader = -1;
        assert_eq!(placement(&offline, &|_| true).leader, -1);
    }
}
