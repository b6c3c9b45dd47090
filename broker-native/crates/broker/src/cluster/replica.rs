//! This node's role for one partition (leader, follower or neither), and on
//! the leader, what it knows of its followers: their log end offsets, when
//! each was last caught up, the in-sync replicas and the high watermark.

use super::state::PartitionState;
use crate::storage::Partition;
use kafka_protocol::ResponseError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Leader,
    Follower {
        leader: i32,
    },
    /// Not a replica, or a replica of a partition with no leader.
    None,
}

#[derive(Debug, Clone, Copy)]
struct FollowerState {
    /// The follower's log end offset (its last fetch offset); -1 unknown.
    leo: i64,
    /// When the follower last fetched, and the leader's LEO at that time.
    last_fetch_ms: i64,
    leo_at_last_fetch: i64,
    /// The last time the follower had everything the leader had.
    caught_up_ms: i64,
    /// Offsets below this are on the follower's disk (its report under
    /// fsync `batch`, else its log end); -1 unknown.
    durable: i64,
}

#[derive(Debug)]
struct RoleState {
    role: Role,
    epoch: i32,
    replicas: Vec<i32>,
    isr: Vec<i32>,
    /// The cluster-state version the ISR came from, so that an older state
    /// applied late never undoes a newer ISR change.
    isr_version: u64,
    /// The leader's LEO when it took this epoch.
    epoch_start: i64,
    followers: HashMap<i32, FollowerState>,
    /// An ISR change is being written; do not propose another.
    isr_change_pending: bool,
}

/// What applying new cluster state did to this node's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleChange {
    Unchanged,
    BecameLeader,
    BecameFollower { leader: i32 },
    Stopped,
}

#[derive(Debug)]
pub struct PartitionRole {
    pub topic: String,
    pub index: i32,
    pub partition: Arc<Partition>,
    me: i32,
    state: Mutex<RoleState>,
    /// Bumped on every role or epoch change; acks=all waiters watch it.
    generation: watch::Sender<u64>,
}

/// An ISR change for the leader to write to the cluster state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IsrProposal {
    pub epoch: i32,
    pub isr: Vec<i32>,
}

impl PartitionRole {
    pub fn new(topic: &str, index: i32, partition: Arc<Partition>, me: i32) -> PartitionRole {
        partition.set_replicated(true);
        PartitionRole {
            topic: topic.to_string(),
            index,
            partition,
            me,
            state: Mutex::new(RoleState {
                role: Role::None,
                epoch: -1,
                replicas: Vec::new(),
                isr: Vec::new(),
                isr_version: 0,
                epoch_start: 0,
                followers: HashMap::new(),
                isr_change_pending: false,
            }),
            generation: watch::Sender::new(0),
        }
    }

    pub fn role(&self) -> (Role, i32) {
        let s = self.lock();
        (s.role, s.epoch)
    }

    pub fn isr(&self) -> Vec<i32> {
        self.lock().isr.clone()
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RoleState> {
        self.state.lock().expect("role lock")
    }

    /// Adopts the partition's state from cluster metadata `version`.
    pub fn apply(&self, p: &PartitionState, version: u64, now_ms: i64) -> RoleChange {
        let mut s = self.lock();
        let role = if p.leader == self.me {
            Role::Leader
        } else if p.replicas.contains(&self.me) && p.leader >= 0 {
            Role::Follower { leader: p.leader }
        } else {
            Role::None
        };
        s.replicas = p.replicas.clone();
        if role == s.role && p.leader_epoch == s.epoch {
            if version >= s.isr_version {
                s.isr = p.isr.clone();
                s.isr_version = version;
                if s.role == Role::Leader {
                    self.advance_high_watermark(&s);
                }
            }
            return RoleChange::Unchanged;
        }
        s.role = role;
        s.epoch = p.leader_epoch;
        s.isr = p.isr.clone();
        s.isr_version = version;
        s.isr_change_pending = false;
        s.followers.clear();
        let change = match role {
            Role::Leader => {
                self.partition.set_leader_epoch(p.leader_epoch);
                s.epoch_start = self.partition.log_end_offset();
                // Followers in sync get the benefit of the doubt until they
                // have had time to fetch.
                for r in p.replicas.iter().filter(|r| **r != self.me) {
                    s.followers.insert(
                        *r,
                        FollowerState {
                            leo: -1,
                            last_fetch_ms: now_ms,
                            leo_at_last_fetch: -1,
                            caught_up_ms: now_ms,
                            durable: -1,
                        },
                    );
                }
                self.advance_high_watermark(&s);
                RoleChange::BecameLeader
            }
            Role::Follower { leader } => RoleChange::BecameFollower { leader },
            Role::None => RoleChange::Stopped,
        };
        self.generation.send_modify(|g| *g += 1);
        change
    }

    /// Ok when this node leads the partition (at `epoch`, if one is given:
    /// Kafka's current_leader_epoch check).
    pub fn check_leader(&self, epoch: Option<i32>) -> Result<i32, ResponseError> {
        let s = self.lock();
        if s.role != Role::Leader {
            return Err(ResponseError::NotLeaderOrFollower);
        }
        match epoch {
            Some(e) if e >= 0 && e < s.epoch => Err(ResponseError::FencedLeaderEpoch),
            Some(e) if e > s.epoch => Err(ResponseError::UnknownLeaderEpoch),
            _ => Ok(s.epoch),
        }
    }

    pub fn isr_len(&self) -> usize {
        self.lock().isr.len()
    }

    /// After an append on the leader: with no other in-sync replica the
    /// high watermark follows the log end at once.
    pub fn after_leader_append(&self) {
        let s = self.lock();
        if s.role == Role::Leader {
            self.advance_high_watermark(&s);
        }
    }

    /// A follower fetched from `fetch_offset` with offsets below `durable`
    /// on its disk: record its position, move the high watermark, and
    /// propose adding it to the ISR once it has caught up.
    pub fn on_follower_fetch(
        &self,
        follower: i32,
        fetch_offset: i64,
        durable: i64,
        now_ms: i64,
    ) -> Option<IsrProposal> {
        let mut s = self.lock();
        if s.role != Role::Leader {
            return None;
        }
        let leo = self.partition.log_end_offset();
        let f = s.followers.entry(follower).or_insert(FollowerState {
            leo: -1,
            last_fetch_ms: now_ms,
            leo_at_last_fetch: -1,
            caught_up_ms: 0,
            durable: -1,
        });
        if fetch_offset >= leo {
            f.caught_up_ms = now_ms;
        } else if f.leo_at_last_fetch >= 0 && fetch_offset >= f.leo_at_last_fetch {
            f.caught_up_ms = f.last_fetch_ms;
        }
        f.leo = fetch_offset;
        // Reported over the wire: never past what it fetched from, never
        // below 0 (a negative report must hold the high watermark, not take
        // the follower out of its computation).
        f.durable = durable.clamp(0, fetch_offset.max(0));
        f.last_fetch_ms = now_ms;
        f.leo_at_last_fetch = leo;
        self.advance_high_watermark(&s);
        let hw = self.partition.high_watermark();
        if !s.isr.contains(&follower)
            && !s.isr_change_pending
            && s.replicas.contains(&follower)
            && fetch_offset >= hw
            && fetch_offset >= s.epoch_start
        {
            let mut isr = s.isr.clone();
            isr.push(follower);
            s.isr_change_pending = true;
            return Some(IsrProposal {
                epoch: s.epoch,
                isr,
            });
        }
        None
    }

    /// On the leader: an ISR without the followers that have not caught up
    /// for `lag_ms`, if there are any.
    pub fn propose_shrink(&self, now_ms: i64, lag_ms: i64) -> Option<IsrProposal> {
        let mut s = self.lock();
        if s.role != Role::Leader || s.isr_change_pending {
            return None;
        }
        let keep: Vec<i32> = s
            .isr
            .iter()
            .copied()
            .filter(|r| {
                *r == self.me
                    || s.followers
                        .get(r)
                        .is_some_and(|f| now_ms - f.caught_up_ms <= lag_ms)
            })
            .collect();
        if keep.len() == s.isr.len() {
            return None;
        }
        s.isr_change_pending = true;
        Some(IsrProposal {
            epoch: s.epoch,
            isr: keep,
        })
    }

    /// The outcome of writing a proposal: adopt the ISR if it was written
    /// (at cluster-state `version`) and this epoch still holds.
    pub fn isr_written(&self, proposal: &IsrProposal, version: Option<u64>) {
        let mut s = self.lock();
        s.isr_change_pending = false;
        if let Some(version) = version {
            if s.epoch == proposal.epoch && version >= s.isr_version {
                s.isr = proposal.isr.clone();
                s.isr_version = version;
                self.advance_high_watermark(&s);
            }
        }
    }

    /// HW = the smallest log end offset among the in-sync replicas; under
    /// fsync `batch` the smallest durable offset (the leader's own
    /// included), so acks=all answers only what every in-sync replica has
    /// on disk.
    fn advance_high_watermark(&self, s: &RoleState) {
        let mut hw = self.partition.durable_end();
        for r in s.isr.iter().filter(|r| **r != self.me) {
            match s.followers.get(r) {
                Some(f) if f.leo >= 0 && f.durable >= 0 => hw = hw.min(f.durable),
                _ => return,
            }
        }
        if hw > self.partition.high_watermark() {
            self.partition.set_high_watermark(hw);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::controller::new_partition;
    use crate::storage::batch::test_support::batch;
    use crate::storage::{Log, LogConfig};

    fn leader_of(replicas: Vec<i32>) -> (tempfile::TempDir, PartitionRole) {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        log.create_topic("t", 1, false).unwrap();
        let role = PartitionRole::new("t", 0, log.partition("t", 0).unwrap(), 1);
        assert_eq!(
            role.apply(&new_partition(replicas), 1, 0),
            RoleChange::BecameLeader
        );
        (dir, role)
    }

    #[test]
    fn high_watermark_waits_for_every_in_sync_follower() {
        let (_dir, role) = leader_of(vec![1, 2, 3]);
        role.partition.append(&batch(5, 10)).unwrap();
        role.after_leader_append();
        assert_eq!(role.partition.high_watermark(), 0);
        assert_eq!(role.on_follower_fetch(2, 5, 5, 10), None);
        assert_eq!(role.partition.high_watermark(), 0);
        role.on_follower_fetch(3, 3, 3, 10);
        assert_eq!(role.partition.high_watermark(), 3);
        role.on_follower_fetch(3, 5, 5, 20);
        assert_eq!(role.partition.high_watermark(), 5);
    }

    #[test]
    fn under_fsync_batch_the_high_watermark_is_the_slowest_durable_position() {
        let dir = tempfile::tempdir().unwrap();
        let config = LogConfig {
            fsync: crate::config::FsyncPolicy::Batch,
            ..LogConfig::default()
        };
        let log = Log::open(dir.path(), config).unwrap();
        log.create_topic("t", 1, false).unwrap();
        let role = PartitionRole::new("t", 0, log.partition("t", 0).unwrap(), 1);
        role.apply(&new_partition(vec![1, 2]), 1, 0);
        let held = role.partition.hold_journal_writes();
        let (_, durability) = role.partition.append_pending(&batch(5, 10)).unwrap();
        role.after_leader_append();
        // The follower has the batches and has synced them; the leader's
        // own sync is still pending.
        role.on_follower_fetch(2, 5, 5, 10);
        assert_eq!(role.partition.high_watermark(), 0);
        drop(held);
        durability.wait_blocking().unwrap();
        role.after_leader_append();
        assert_eq!(role.partition.high_watermark(), 5);
        // More batches: the follower fetched them (log end 8) but reports
        // only 6 on disk.
        role.partition.append(&batch(3, 10)).unwrap();
        role.on_follower_fetch(2, 8, 6, 20);
        assert_eq!(role.partition.high_watermark(), 6);
        role.on_follower_fetch(2, 8, 8, 30);
        assert_eq!(role.partition.high_watermark(), 8);
    }

    #[test]
    fn a_negative_durable_report_holds_the_high_watermark() {
        let (_dir, role) = leader_of(vec![1, 2]);
        role.partition.append(&batch(5, 10)).unwrap();
        role.after_leader_append();
        role.on_follower_fetch(2, 5, -7, 10);
        assert_eq!(role.partition.high_watermark(), 0);
        role.on_follower_fetch(2, 5, i64::MAX, 20);
        assert_eq!(role.partition.high_watermark(), 5);
    }

    #[test]
    fn sole_in_sync_leader_advances_on_append() {
        let (_dir, role) = leader_of(vec![1]);
        role.partition.append(&batch(2, 10)).unwrap();
        role.after_leader_append();
        assert_eq!(role.partition.high_watermark(), 2);
    }

    #[test]
    fn lagging_follower_is_proposed_out_and_returns_when_caught_up() {
        let (_dir, role) = leader_of(vec![1, 2]);
        role.partition.append(&batch(4, 10)).unwrap();
        // Follower 2 never fetches: after the lag it is dropped.
        assert_eq!(role.propose_shrink(100, 1000), None);
        let shrink = role.propose_shrink(2000, 1000).unwrap();
        assert_eq!(shrink.isr, vec![1]);
        role.isr_written(&shrink, Some(2));
        assert_eq!(role.partition.high_watermark(), 4);
        // It fetches from behind (no proposal), then catches up.
        assert_eq!(role.on_follower_fetch(2, 1, 1, 2100), None);
        let grow = role.on_follower_fetch(2, 4, 4, 2200).unwrap();
        assert_eq!(grow.isr, vec![1, 2]);
        role.isr_written(&grow, Some(3));
        assert_eq!(role.isr(), vec![1, 2]);
    }

    #[test]
    fn stale_epochs_are_fenced_and_newer_ones_unknown() {
        let (_dir, role) = leader_of(vec![1, 2]);
        let mut next = new_partition(vec![1, 2]);
        next.leader_epoch = 3;
        role.apply(&next, 2, 0);
        assert_eq!(role.check_leader(Some(3)), Ok(3));
        assert_eq!(
            role.check_leader(Some(2)),
            Err(ResponseError::FencedLeaderEpoch)
        );
        assert_eq!(
            role.check_leader(Some(4)),
            Err(ResponseError::UnknownLeaderEpoch)
        );
        next.leader = 2;
        next.leader_epoch = 4;
        assert_eq!(
            role.apply(&next, 3, 0),
            RoleChange::BecameFollower { leader: 2 }
        );
        assert_eq!(
            role.check_leader(None),
            Err(ResponseError::NotLeaderOrFollower)
        );
    }

    #[test]
    fn an_older_state_applied_late_keeps_the_newer_isr() {
        let (_dir, role) = leader_of(vec![1, 2]);
        let shrink = role.propose_shrink(10_000, 1000).unwrap();
        role.isr_written(&shrink, Some(5));
        role.apply(&new_partition(vec![1, 2]), 4, 10_000);
        assert_eq!(role.isr(), vec![1]);
    }
}
