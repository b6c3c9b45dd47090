//! OffsetCommit (API 8), v2-8.

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::{OffsetCommitRequest, OffsetCommitResponse};

use crate::offsets::{CommittedOffset, PartitionCommit};
use crate::state::{Group, GroupState};
use crate::{lock, GroupCoordinator};

/// Kafka's `offset.metadata.max.bytes` default.
const MAX_METADATA_BYTES: usize = 4096;

/// `known` says whether a partition exists: a commit for one that does not is refused with
/// UNKNOWN_TOPIC_OR_PARTITION, as Kafka refuses it, and is not kept.
pub(crate) fn offset_commit(
    coordinator: &GroupCoordinator,
    req: OffsetCommitRequest,
    _version: i16,
    known: &dyn Fn(&str, i32) -> bool,
) -> OffsetCommitResponse {
    let group_id = req.group_id.0.as_str();
    let generation_id = req.generation_id_or_member_epoch;
    // The group lock is held through the write so a rebalance cannot slip
    // between the generation check and the commit.
    let group = coordinator.group(group_id);
    let guard = group.as_ref().map(|g| lock(g));
    let verdict = match &guard {
        // Simple consumers and admin tools commit without a group.
        None if generation_id < 0 => Ok(()),
        None => Err(ResponseError::IllegalGeneration),
        Some(group) => validate(group, req.member_id.as_str(), generation_id),
    };

    let mut commits = Vec::new();
    let mut topics = Vec::with_capacity(req.topics.len());
    for topic in &req.topics {
        let mut response_topic = OffsetCommitResponseTopic::default();
        response_topic.name = topic.name.clone();
        for partition in &topic.partitions {
            let metadata = partition.committed_metadata.as_ref().map(|m| m.to_string());
            let error = match verdict {
                _ if !known(topic.name.0.as_str(), partition.partition_index) => {
                    Some(ResponseError::UnknownTopicOrPartition)
                }
                Err(error) => Some(error),
                Ok(())
                    if metadata
                        .as_ref()
                        .is_some_and(|m| m.len() > MAX_METADATA_BYTES) =>
                {
                    Some(ResponseError::OffsetMetadataTooLarge)
                }
                Ok(()) => {
                    commits.push(PartitionCommit {
                        topic: topic.name.0.to_string(),
                        partition: partition.partition_index,
                        committed: CommittedOffset {
                            offset: partition.committed_offset,
                            leader_epoch: partition.committed_leader_epoch,
                            metadata,
                        },
                    });
                    None
                }
            };
            let mut response_partition = OffsetCommitResponsePartition::default();
            response_partition.partition_index = partition.partition_index;
            response_partition.error_code = error.map_or(0, |e| e.code());
            response_topic.partitions.push(response_partition);
        }
        topics.push(response_topic);
    }

    // A storage failure fails every partition that was to be written.
    if let Err(error) = coordinator.offsets.commit(group_id, &commits) {
        for partition in topics.iter_mut().flat_map(|t| t.partitions.iter_mut()) {
            if partition.error_code == 0 {
                partition.error_code = error.code();
            }
        }
    }
    drop(guard);

    let mut res = OffsetCommitResponse::default();
    res.topics = topics;
    res
}

/// Kafka's `validateOffsetCommit` followed by the CompletingRebalance check.
fn validate(group: &Group, member_id: &str, generation_id: i32) -> Result<(), ResponseError> {
    if group.state == GroupState::Dead {
        return Err(ResponseError::CoordinatorNotAvailable);
    }
    if generation_id < 0 && member_id.is_empty() {
        // An admin commit only goes to a group nobody is consuming in.
        return if group.state == GroupState::Empty {
            Ok(())
        } else {
            Err(ResponseError::UnknownMemberId)
        };
    }
    if !group.has_member(member_id) {
        return Err(ResponseError::UnknownMemberId);
    }
    if generation_id != group.generation_id {
        return Err(ResponseError::IllegalGeneration);
    }
    if group.state == GroupState::CompletingRebalance {
        return Err(ResponseError::RebalanceInProgress);
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::str_bytes;
    use crate::test_support::*;
    use kafka_protocol::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    use kafka_protocol::messages::GroupId;
    use kafka_protocol::messages::TopicName;

    const RANGE: &[(&str, &[u8])] = &[("range", b"meta")];

    pub fn commit_request(
        group: &str,
        member_id: &str,
        generation_id: i32,
        offsets: &[(&str, i32, i64)],
    ) -> OffsetCommitRequest {
        let mut req = OffsetCommitRequest::default();
        req.group_id = GroupId(str_bytes(group));
        req.member_id = str_bytes(member_id);
        req.generation_id_or_member_epoch = generation_id;
        for (topic, partition, offset) in offsets {
            let mut p = OffsetCommitRequestPartition::default();
            p.partition_index = *partition;
            p.committed_offset = *offset;
            p.committed_leader_epoch = 4;
            p.committed_metadata = Some(str_bytes("meta"));
            let mut t = OffsetCommitRequestTopic::default();
            t.name = TopicName(str_bytes(*topic));
            t.partitions.push(p);
            req.topics.push(t);
        }
        req
    }

    fn errors(res: &OffsetCommitResponse) -> Vec<i16> {
        res.topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| p.error_code))
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn admin_commit_to_unknown_group_is_stored() {
        let dir = TempDir::new("commit-admin");
        let c = open(&dir);
        let res = c.offset_commit(commit_request("g", "", -1, &[("t", 0, 10)]), 8);
        assert_eq!(errors(&res), vec![0]);
        assert_eq!(c.offsets.fetch("g", "t", 0).unwrap().offset, 10);
    }

    #[tokio::test(start_paused = true)]
    async fn a_commit_for_a_partition_that_does_not_exist_is_refused_and_not_kept() {
        let dir = TempDir::new("commit-unknown");
        let c = open(&dir);
        let known = |topic: &str, partition: i32| topic == "t" && partition == 0;
        let req = commit_request("g", "", -1, &[("t", 0, 10), ("t", 1, 11), ("nope", 0, 12)]);
        let res = c.offset_commit_known(req, 8, &known);
        let unknown = ResponseError::UnknownTopicOrPartition.code();
        assert_eq!(errors(&res), vec![0, unknown, unknown]);
        assert_eq!(c.offsets.fetch("g", "t", 0).unwrap().offset, 10);
        assert!(c.offsets.fetch("g", "t", 1).is_none());
        assert!(c.offsets.fetch("g", "nope", 0).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn member_commit_with_current_generation_is_stored() {
        let dir = TempDir::new("commit-member");
        let c = open(&dir);
        let joined = join_new(&c, "g", RANGE).await;
        let id = joined.member_id.as_str();
        c.sync_group(sync_request("g", id, 1, &[]), 3).await;
        let res = c.offset_commit(commit_request("g", id, 1, &[("t", 0, 5)]), 2);
        assert_eq!(errors(&res), vec![0]);
    }

    #[tokio::test(start_paused = true)]
    async fn commit_with_wrong_generation_is_illegal_generation() {
        let dir = TempDir::new("commit-generation");
        let c = open(&dir);
        let joined = join_new(&c, "g", RANGE).await;
        let id = joined.member_id.as_str();
        c.sync_group(sync_request("g", id, 1, &[]), 3).await;
        let res = c.offset_commit(commit_request("g", id, 9, &[("t", 0, 5)]), 8);
        assert_eq!(errors(&res), vec![ResponseError::IllegalGeneration.code()]);
        assert!(c.offsets.fetch("g", "t", 0).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn admin_commit_to_active_group_is_unknown_member_id() {
        let dir = TempDir::new("commit-active");
        let c = open(&dir);
        join_new(&c, "g", RANGE).await;
        let res = c.offset_commit(commit_request("g", "", -1, &[("t", 0, 5)]), 8);
        assert_eq!(errors(&res), vec![ResponseError::UnknownMemberId.code()]);
    }

    #[tokio::test(start_paused = true)]
    async fn oversized_metadata_is_rejected_per_partition() {
        let dir = TempDir::new("commit-metadata");
        let c = open(&dir);
        let mut req = commit_request("g", "", -1, &[("t", 0, 5), ("t", 1, 6)]);
        req.topics[0].partitions[0].committed_metadata = Some(str_bytes("x".repeat(5000)));
        let res = c.offset_commit(req, 8);
        assert_eq!(
            errors(&res),
            vec![ResponseError::OffsetMetadataTooLarge.code(), 0]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn responses_round_trip_at_every_version() {
        let dir = TempDir::new("commit-codec");
        let c = open(&dir);
        for version in 2..=8 {
            let res = c.offset_commit(commit_request("g", "", -1, &[("t", 0, 1)]), version);
            assert_eq!(round_trip(&res, version), res);
        }
    }
}
