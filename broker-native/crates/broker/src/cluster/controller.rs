//! The controller's decisions, as pure functions over `ClusterState`:
//! where new partitions' replicas go, and what happens to leaders and ISRs
//! when nodes die or come back. Any node may run them, under the store's
//! lock (see `state`).

use super::state::{ClusterState, PartitionState};
use std::collections::BTreeSet;

/// Replica lists for `count` new partitions over the `alive` nodes (sorted),
/// spreading leaders round robin starting at `start`: partition p gets
/// nodes[(start + p) % n], then the next rf - 1 nodes.
pub fn assign_replicas(alive: &[i32], count: usize, rf: usize, start: usize) -> Vec<Vec<i32>> {
    let n = alive.len();
    (0..count)
        .map(|p| (0..rf).map(|j| alive[(start + p + j) % n]).collect())
        .collect()
}

/// A new partition: the first replica leads, every replica is in sync.
pub fn new_partition(replicas: Vec<i32>) -> PartitionState {
    PartitionState {
        leader: replicas[0],
        leader_epoch: 0,
        isr: replicas.clone(),
        replicas,
    }
}

/// One controller pass: dead nodes leave every ISR (never emptying one),
/// partitions led by a dead node move to the first live in-sync replica
/// (in replica order) with a new leader epoch, and an offline partition
/// comes back when one of its last in-sync replicas is alive again.
/// Returns how many partitions changed leader.
pub fn handle_liveness(state: &mut ClusterState, alive: &BTreeSet<i32>) -> usize {
    let mut elections = 0;
    for topic in state.topics.values_mut() {
        for p in topic.partitions.iter_mut() {
            let live_isr: Vec<i32> = p
                .isr
                .iter()
                .copied()
                .filter(|r| alive.contains(r))
                .collect();
            if p.leader >= 0 && alive.contains(&p.leader) {
                if !live_isr.is_empty() && live_isr.len() != p.isr.len() {
                    p.isr = live_isr;
                }
                continue;
            }
            // The leader is dead (or there is none).
            let next = p.replicas.iter().copied().find(|r| live_isr.contains(r));
            match next {
                Some(leader) => {
                    p.leader = leader;
                    p.leader_epoch += 1;
                    p.isr = live_isr;
                    elections += 1;
                }
                None if p.leader >= 0 => {
                    // No in-sync replica left: offline, keeping the ISR so
                    // that one of its members can lead when it returns.
                    p.leader = -1;
                    p.leader_epoch += 1;
                    elections += 1;
                }
                None => {}
            }
        }
    }
    elections
}

/// Moves leadership back to each partition's preferred replica (the first
/// in its replica list, as Kafka's preferred leader election does) where
/// that replica is alive, in sync and not leading. Returns how many
/// partitions changed leader.
pub fn elect_preferred(state: &mut ClusterState, alive: &BTreeSet<i32>) -> usize {
    let mut elections = 0;
    for topic in state.topics.values_mut() {
        for p in topic.partitions.iter_mut() {
            let Some(&preferred) = p.replicas.first() else {
                continue;
            };
            if p.leader != preferred && alive.contains(&preferred) && p.isr.contains(&preferred) {
                p.leader = preferred;
                p.leader_epoch += 1;
                elections += 1;
            }
        }
    }
    elections
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::state::TopicState;

    fn state_with(partitions: Vec<PartitionState>) -> ClusterState {
        let mut s = ClusterState::default();
        s.topics.insert(
            "t".into(),
            TopicState {
                id: uuid::Uuid::nil(),
                configs: Default::default(),
                partitions,
            },
        );
        s
    }

    fn alive(ids: &[i32]) -> BTreeSet<i32> {
        ids.iter().copied().collect()
    }

    #[test]
    fn replicas_spread_leaders_round_robin() {
        let r = assign_replicas(&[1, 2, 3], 4, 2, 0);
        assert_eq!(r, vec![vec![1, 2], vec![2, 3], vec![3, 1], vec![1, 2]]);
        let r = assign_replicas(&[1, 2, 3], 1, 3, 1);
        assert_eq!(r, vec![vec![2, 3, 1]]);
    }

    #[test]
    fn dead_leader_moves_to_the_first_live_in_sync_replica() {
        let mut s = state_with(vec![new_partition(vec![1, 2, 3])]);
        s.partition_mut("t", 0).unwrap().isr = vec![1, 3];
        assert_eq!(handle_liveness(&mut s, &alive(&[2, 3])), 1);
        let p = s.partition("t", 0).unwrap();
        // 2 is alive but not in sync, so 3 leads.
        assert_eq!((p.leader, p.leader_epoch, p.isr.clone()), (3, 1, vec![3]));
    }

    #[test]
    fn dead_followers_leave_the_isr() {
        let mut s = state_with(vec![new_partition(vec![1, 2, 3])]);
        assert_eq!(handle_liveness(&mut s, &alive(&[1, 3])), 0);
        let p = s.partition("t", 0).unwrap();
        assert_eq!(
            (p.leader, p.leader_epoch, p.isr.clone()),
            (1, 0, vec![1, 3])
        );
    }

    #[test]
    fn partition_goes_offline_and_returns_with_its_last_in_sync_replica() {
        let mut s = state_with(vec![new_partition(vec![1, 2])]);
        s.partition_mut("t", 0).unwrap().isr = vec![1];
        handle_liveness(&mut s, &alive(&[2]));
        let p = s.partition("t", 0).unwrap().clone();
        assert_eq!((p.leader, p.leader_epoch, p.isr), (-1, 1, vec![1]));
        // Nothing changes while only the out-of-sync replica is alive.
        assert_eq!(handle_liveness(&mut s, &alive(&[2])), 0);
        handle_liveness(&mut s, &alive(&[1, 2]));
        let p = s.partition("t", 0).unwrap();
        assert_eq!((p.leader, p.leader_epoch, p.isr.clone()), (1, 2, vec![1]));
    }

    #[test]
    fn preferred_election_needs_the_preferred_replica_alive_and_in_sync() {
        let mut s = state_with(vec![
            new_partition(vec![1, 2, 3]),
            new_partition(vec![2, 3, 1]),
            new_partition(vec![3, 1, 2]),
        ]);
        for i in 0..3 {
            let p = s.partition_mut("t", i).unwrap();
            p.leader = p.replicas[1];
        }
        s.partition_mut("t", 2).unwrap().isr = vec![1, 2];
        assert_eq!(elect_preferred(&mut s, &alive(&[1, 3])), 1);
        let leaders: Vec<(i32, i32)> = (0..3)
            .map(|i| {
                s.partition("t", i)
                    .map(|p| (p.leader, p.leader_epoch))
                    .unwrap()
            })
            .collect();
        // 2 is dead and 3 out of sync: only partition 0 moves back.
        assert_eq!(leaders, vec![(1, 1), (3, 0), (1, 0)]);
        assert_eq!(elect_preferred(&mut s, &alive(&[1, 3])), 0);
    }
}
