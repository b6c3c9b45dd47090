//! OffsetFetch (API 9), v1-8. v8 fetches several groups in one request.

use std::collections::BTreeMap;

use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::{GroupId, OffsetFetchRequest, OffsetFetchResponse, TopicName};

use crate::offsets::CommittedOffset;
use crate::{str_bytes, GroupCoordinator};

/// `None` asks for every partition the group committed.
type Wanted = Option<Vec<(String, Vec<i32>)>>;

/// Per topic, per partition: what is committed, if anything.
type Fetched = BTreeMap<String, Vec<(i32, Option<CommittedOffset>)>>;

pub(crate) fn offset_fetch(
    coordinator: &GroupCoordinator,
    req: OffsetFetchRequest,
    version: i16,
) -> OffsetFetchResponse {
    let mut res = OffsetFetchResponse::default();
    if version >= 8 {
        // A group asked for twice is answered once (see `fetch`).
        let mut seen = std::collections::HashSet::new();
        res.groups = req
            .groups
            .iter()
            .filter(|group| seen.insert(group.group_id.clone()))
            .map(|group| {
                let wanted = group.topics.as_ref().map(|topics| {
                    topics
                        .iter()
                        .map(|t| (t.name.0.to_string(), t.partition_indexes.clone()))
                        .collect()
                });
                let mut response_group = OffsetFetchResponseGroup::default();
                response_group.group_id = group.group_id.clone();
                response_group.topics = fetch(coordinator, &group.group_id, wanted)
                    .into_iter()
                    .map(|(topic, partitions)| {
                        let mut t = OffsetFetchResponseTopics::default();
                        t.name = TopicName(str_bytes(topic));
                        t.partitions = partitions.into_iter().map(v8_partition).collect();
                        t
                    })
                    .collect();
                response_group
            })
            .collect();
    } else {
        let wanted = req.topics.as_ref().map(|topics| {
            topics
                .iter()
                .map(|t| (t.name.0.to_string(), t.partition_indexes.clone()))
                .collect()
        });
        res.topics = fetch(coordinator, &req.group_id, wanted)
            .into_iter()
            .map(|(topic, partitions)| {
                let mut t = OffsetFetchResponseTopic::default();
                t.name = TopicName(str_bytes(topic));
                t.partitions = partitions
                    .into_iter()
                    .map(|(index, committed)| v1_partition(index, committed, version))
                    .collect();
                t
            })
            .collect();
    }
    res
}

/// Unknown groups and partitions read as offset -1, as in Kafka.
fn fetch(coordinator: &GroupCoordinator, group_id: &GroupId, wanted: Wanted) -> Fetched {
    let group_id = group_id.0.as_str();
    let mut fetched = Fetched::new();
    match wanted {
        Some(topics) => {
            // A partition asked for twice is answered once: each answer carries up to 4 KB of
            // metadata, so a few bytes an entry must not buy a copy each (a 64 KB request got a
            // 66 MB answer).
            let mut asked = std::collections::HashSet::new();
            for (topic, partitions) in topics {
                let entry = fetched.entry(topic.clone()).or_default();
                for partition in partitions {
                    if !asked.insert((topic.clone(), partition)) {
                        continue;
                    }
                    let committed = coordinator.offsets.fetch(group_id, &topic, partition);
                    entry.push((partition, committed));
                }
            }
        }
        None => {
            for commit in coordinator.offsets.fetch_all(group_id) {
                fetched
                    .entry(commit.topic)
                    .or_default()
                    .push((commit.partition, Some(commit.committed)));
            }
        }
    }
    fetched
}

fn v1_partition(
    index: i32,
    committed: Option<CommittedOffset>,
    version: i16,
) -> OffsetFetchResponsePartition {
    let mut p = OffsetFetchResponsePartition::default();
    p.partition_index = index;
    p.committed_offset = -1;
    if let Some(committed) = committed {
        p.committed_offset = committed.offset;
        p.metadata = committed.metadata.map(str_bytes);
        if version >= 5 {
            p.committed_leader_epoch = committed.leader_epoch;
        }
    }
    p
}

fn v8_partition(
    (index, committed): (i32, Option<CommittedOffset>),
) -> OffsetFetchResponsePartitions {
    let mut p = OffsetFetchResponsePartitions::default();
    p.partition_index = index;
    p.committed_offset = -1;
    if let Some(committed) = committed {
        p.committed_offset = committed.offset;
        p.committed_leader_epoch = committed.leader_epoch;
        p.metadata = committed.metadata.map(str_bytes);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offset_commit::tests::commit_request;
    use crate::test_support::*;
    use kafka_protocol::messages::offset_fetch_request::{
        OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
    };

    fn fetch_request(group: &str, topics: Option<&[(&str, &[i32])]>) -> OffsetFetchRequest {
        let mut req = OffsetFetchRequest::default();
        req.group_id = GroupId(str_bytes(group));
        req.topics = topics.map(|topics| {
            topics
                .iter()
                .map(|(name, partitions)| {
                    let mut t = OffsetFetchRequestTopic::default();
                    t.name = TopicName(str_bytes(*name));
                    t.partition_indexes = partitions.to_vec();
                    t
                })
                .collect()
        });
        req
    }

    /// A group and the partitions wanted per topic (`None`: all committed).
    type GroupTopics<'a> = (&'a str, Option<&'a [(&'a str, &'a [i32])]>);

    fn fetch_request_v8(groups: &[GroupTopics]) -> OffsetFetchRequest {
        let mut req = OffsetFetchRequest::default();
        req.topics = None;
        req.groups = groups
            .iter()
            .map(|(group, topics)| {
                let mut g = OffsetFetchRequestGroup::default();
                g.group_id = GroupId(str_bytes(*group));
                g.topics = topics.map(|topics| {
                    topics
                        .iter()
                        .map(|(name, partitions)| {
                            let mut t = OffsetFetchRequestTopics::default();
                            t.name = TopicName(str_bytes(*name));
                            t.partition_indexes = partitions.to_vec();
                            t
                        })
                        .collect()
                });
                g
            })
            .collect();
        req
    }

    fn offsets(res: &OffsetFetchResponse) -> Vec<(String, i32, i64)> {
        res.topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.name.0.to_string(), p.partition_index, p.committed_offset))
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn committed_offsets_are_fetched_back() {
        let dir = TempDir::new("fetch-round-trip");
        let c = open(&dir);
        c.offset_commit(
            commit_request("g", "", -1, &[("t", 0, 10), ("t", 1, 11)]),
            8,
        );
        let res = c.offset_fetch(fetch_request("g", Some(&[("t", &[0, 1])])), 5);
        assert_eq!(
            offsets(&res),
            vec![("t".into(), 0, 10), ("t".into(), 1, 11)]
        );
        let partition = &res.topics[0].partitions[0];
        assert_eq!(partition.committed_leader_epoch, 4);
        assert_eq!(partition.metadata.as_deref(), Some("meta"));
    }

    #[tokio::test(start_paused = true)]
    async fn unknown_group_and_partition_fetch_minus_one() {
        let dir = TempDir::new("fetch-unknown");
        let c = open(&dir);
        c.offset_commit(commit_request("g", "", -1, &[("t", 0, 10)]), 8);
        let res = c.offset_fetch(fetch_request("nope", Some(&[("t", &[0])])), 1);
        assert_eq!(offsets(&res), vec![("t".into(), 0, -1)]);
        let res = c.offset_fetch(fetch_request("g", Some(&[("t", &[3])])), 3);
        assert_eq!(offsets(&res), vec![("t".into(), 3, -1)]);
        assert_eq!(res.error_code, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_partition_or_group_asked_for_many_times_is_answered_once() {
        let dir = TempDir::new("fetch-repeated");
        let c = open(&dir);
        c.offset_commit(commit_request("g", "", -1, &[("t", 0, 10)]), 8);
        let many: Vec<i32> = vec![0; 16_000];
        let res = c.offset_fetch(fetch_request("g", Some(&[("t", &many), ("t", &[0, 1])])), 5);
        assert_eq!(
            offsets(&res),
            vec![("t".into(), 0, 10), ("t".into(), 1, -1)]
        );
        let groups = vec![("g", None); 1000];
        let res = c.offset_fetch(fetch_request_v8(&groups), 8);
        assert_eq!(res.groups.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn null_topics_fetch_everything_committed() {
        let dir = TempDir::new("fetch-all");
        let c = open(&dir);
        c.offset_commit(commit_request("g", "", -1, &[("b", 0, 2), ("a", 1, 1)]), 8);
        let res = c.offset_fetch(fetch_request("g", None), 2);
        assert_eq!(offsets(&res), vec![("a".into(), 1, 1), ("b".into(), 0, 2)]);
    }

    #[tokio::test(start_paused = true)]
    async fn v8_fetches_several_groups() {
        let dir = TempDir::new("fetch-v8");
        let c = open(&dir);
        c.offset_commit(commit_request("g1", "", -1, &[("t", 0, 1)]), 8);
        c.offset_commit(commit_request("g2", "", -1, &[("t", 0, 2)]), 8);
        let req = fetch_request_v8(&[("g1", None), ("g2", Some(&[("t", &[0, 1])]))]);
        let res = c.offset_fetch(req, 8);
        assert!(res.topics.is_empty());
        let per_group: Vec<Vec<i64>> = res
            .groups
            .iter()
            .map(|g| {
                g.topics
                    .iter()
                    .flat_map(|t| t.partitions.iter().map(|p| p.committed_offset))
                    .collect()
            })
            .collect();
        assert_eq!(per_group, vec![vec![1], vec![2, -1]]);
    }

    #[tokio::test(start_paused = true)]
    async fn offsets_survive_drop_and_reopen() {
        let dir = TempDir::new("fetch-reopen");
        {
            let c = open(&dir);
            c.offset_commit(commit_request("g", "", -1, &[("t", 0, 42)]), 8);
        }
        let c = open(&dir);
        let res = c.offset_fetch(fetch_request("g", Some(&[("t", &[0])])), 6);
        assert_eq!(offsets(&res), vec![("t".into(), 0, 42)]);
    }

    #[tokio::test(start_paused = true)]
    async fn offsets_survive_shutdown_and_reopen() {
        let dir = TempDir::new("fetch-shutdown");
        {
            let c = open(&dir);
            c.offset_commit(commit_request("g", "", -1, &[("t", 0, 7)]), 8);
            c.shutdown();
        }
        let c = open(&dir);
        let res = c.offset_fetch(fetch_request("g", None), 7);
        assert_eq!(offsets(&res), vec![("t".into(), 0, 7)]);
    }

    #[tokio::test(start_paused = true)]
    async fn torn_offsets_file_tail_is_ignored() {
        use std::io::Write;
        let dir = TempDir::new("fetch-torn");
        {
            let c = open(&dir);
            c.offset_commit(commit_request("g", "", -1, &[("t", 0, 3)]), 8);
        }
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join("offsets.log"))
            .unwrap();
        log.write_all(b"c\tg\tt\t0\t9").unwrap();
        drop(log);
        let c = open(&dir);
        let res = c.offset_fetch(fetch_request("g", None), 7);
        assert_eq!(offsets(&res), vec![("t".into(), 0, 3)]);
    }

    #[tokio::test(start_paused = true)]
    async fn responses_round_trip_at_every_version() {
        let dir = TempDir::new("fetch-codec");
        let c = open(&dir);
        c.offset_commit(commit_request("g", "", -1, &[("t", 0, 1)]), 8);
        for version in 1..=7 {
            let res = c.offset_fetch(fetch_request("g", Some(&[("t", &[0, 1])])), version);
            assert_eq!(round_trip(&res, version), res);
        }
        let res = c.offset_fetch(fetch_request_v8(&[("g", None)]), 8);
        assert_eq!(round_trip(&res, 8), res);
    }
}
