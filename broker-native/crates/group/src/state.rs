//! The classic group state machine, free of I/O and locking: callers hold the
//! group's mutex, pass `now`, and the group answers parked requests through
//! the members' oneshot senders.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::error::ResponseError;
use tokio::time::Instant;

use crate::member::Member;
use crate::outcome::{JoinOutcome, JoinedMember, SyncOutcome};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupState {
    /// No members; may still own committed offsets.
    Empty,
    /// Waiting for every known member to (re)join.
    PreparingRebalance,
    /// Joins answered; waiting for the leader's SyncGroup.
    CompletingRebalance,
    /// Assignment handed out; members heartbeat.
    Stable,
    /// Group removed. Only reported for unknown groups.
    Dead,
}

impl GroupState {
    /// The name Kafka reports in ListGroups and DescribeGroups.
    pub fn name(self) -> &'static str {
        match self {
            Self::Empty => "Empty",
            Self::PreparingRebalance => "PreparingRebalance",
            Self::CompletingRebalance => "CompletingRebalance",
            Self::Stable => "Stable",
            Self::Dead => "Dead",
        }
    }

    /// Parses a state name case-insensitively, as ListGroups filters do.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Self::Empty,
            Self::PreparingRebalance,
            Self::CompletingRebalance,
            Self::Stable,
            Self::Dead,
        ]
        .into_iter()
        .find(|state| state.name().eq_ignore_ascii_case(name))
    }
}

#[derive(Debug)]
pub(crate) struct Group {
    pub id: String,
    pub state: GroupState,
    pub generation_id: i32,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub leader_id: Option<String>,
    /// In join order; the first one becomes leader when there is none.
    pub members: Vec<Member>,
    /// Ids handed out with MEMBER_ID_REQUIRED, valid until the deadline.
    pub pending_member_ids: HashMap<String, Instant>,
    /// When PreparingRebalance gives up on members that have not rejoined.
    rebalance_deadline: Option<Instant>,
    /// Initial rebalance delay of a group that was empty.
    join_not_before: Option<Instant>,
    initial_rebalance_delay: Duration,
}

impl Group {
    pub fn new(id: String, initial_rebalance_delay: Duration) -> Self {
        Self {
            id,
            state: GroupState::Empty,
            generation_id: 0,
            protocol_type: None,
            protocol_name: None,
            leader_id: None,
            members: Vec::new(),
            pending_member_ids: HashMap::new(),
            rebalance_deadline: None,
            join_not_before: None,
            initial_rebalance_delay,
        }
    }

    pub fn member(&self, id: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.id == id)
    }

    pub fn member_mut(&mut self, id: &str) -> Option<&mut Member> {
        self.members.iter_mut().find(|m| m.id == id)
    }

    pub fn has_member(&self, id: &str) -> bool {
        self.member(id).is_some()
    }

    pub fn is_leader(&self, id: &str) -> bool {
        self.leader_id.as_deref() == Some(id)
    }

    /// Kafka's `supportsProtocols`: an empty group takes any non-empty type
    /// and protocol list; otherwise the type must match and at least one of
    /// the protocols must be supported by every current member.
    pub fn supports_protocols(&self, protocol_type: &str, protocols: &[String]) -> bool {
        if self.members.is_empty() {
            return !protocol_type.is_empty() && !protocols.is_empty();
        }
        self.protocol_type.as_deref() == Some(protocol_type)
            && protocols
                .iter()
                .any(|p| self.members.iter().all(|m| m.supports(p)))
    }

    /// Adds a member whose join is parked and starts (or continues) a rebalance.
    pub fn add_member(&mut self, member: Member, protocol_type: &str, now: Instant) {
        if self.members.is_empty() {
            self.protocol_type = Some(protocol_type.to_owned());
        }
        self.members.push(member);
        self.rebalance(now);
    }

    /// Moves to PreparingRebalance if not already there, then completes the
    /// join round if everyone is in.
    pub fn rebalance(&mut self, now: Instant) {
        if matches!(
            self.state,
            GroupState::Empty | GroupState::Stable | GroupState::CompletingRebalance
        ) {
            self.prepare_rebalance(now);
        }
        self.try_complete_join(now);
    }

    fn prepare_rebalance(&mut self, now: Instant) {
        let was_empty = self.state == GroupState::Empty;
        for member in &mut self.members {
            // Syncs parked in CompletingRebalance must rejoin.
            member.complete_sync(SyncOutcome::error(ResponseError::RebalanceInProgress));
            member.assignment = Bytes::new();
        }
        let rebalance_timeout = self
            .members
            .iter()
            .map(|m| m.rebalance_timeout)
            .max()
            .unwrap_or_default();
        self.state = GroupState::PreparingRebalance;
        self.rebalance_deadline = Some(now + rebalance_timeout);
        self.join_not_before = (was_empty && !self.initial_rebalance_delay.is_zero())
            .then(|| now + self.initial_rebalance_delay.min(rebalance_timeout));
    }

    /// Completes PreparingRebalance once every member and pending id has
    /// (re)joined, or the rebalance timeout has passed. Returns whether it did.
    pub fn try_complete_join(&mut self, now: Instant) -> bool {
        if self.state != GroupState::PreparingRebalance {
            return false;
        }
        let all_joined =
            self.members.iter().all(Member::is_awaiting_join) && self.pending_member_ids.is_empty();
        let delay_over = self.join_not_before.is_none_or(|t| now >= t);
        let timed_out = self.rebalance_deadline.is_some_and(|d| now >= d);
        let ready = timed_out || (all_joined && delay_over);
        if !ready {
            return false;
        }
        // Members that did not rejoin in time are out.
        let (joined, gone): (Vec<Member>, Vec<Member>) = std::mem::take(&mut self.members)
            .into_iter()
            .partition(Member::is_awaiting_join);
        self.members = joined;
        for mut member in gone {
            member.fail_waiters(ResponseError::UnknownMemberId);
        }
        if timed_out {
            self.pending_member_ids.clear();
        }
        self.init_next_generation(now);
        true
    }

    fn init_next_generation(&mut self, now: Instant) {
        self.generation_id += 1;
        self.rebalance_deadline = None;
        self.join_not_before = None;
        if self.members.is_empty() {
            self.protocol_name = None;
            self.leader_id = None;
            self.state = GroupState::Empty;
            return;
        }
        if !self
            .leader_id
            .as_deref()
            .is_some_and(|id| self.has_member(id))
        {
            self.leader_id = Some(self.members[0].id.clone());
        }
        self.protocol_name = Some(self.select_protocol());
        self.state = GroupState::CompletingRebalance;
        for member in &mut self.members {
            member.last_heartbeat = now;
        }
        let ids: Vec<String> = self.members.iter().map(|m| m.id.clone()).collect();
        for id in ids {
            let outcome = self.current_join_outcome(&id);
            if let Some(member) = self.member_mut(&id) {
                member.complete_join(outcome);
            }
        }
    }

    /// The first protocol in the leader's order that every member supports.
    fn select_protocol(&self) -> String {
        let leader = self
            .leader_id
            .as_deref()
            .and_then(|id| self.member(id))
            .unwrap_or(&self.members[0]);
        leader
            .protocols
            .iter()
            .find(|p| self.members.iter().all(|m| m.supports(&p.name)))
            .or(leader.protocols.first())
            .map(|p| p.name.clone())
            .unwrap_or_default()
    }

    /// The join result of the current generation as `member_id` sees it.
    pub fn current_join_outcome(&self, member_id: &str) -> JoinOutcome {
        let protocol_name = self.protocol_name.clone().unwrap_or_default();
        let members = if self.is_leader(member_id) {
            self.members
                .iter()
                .map(|m| JoinedMember {
                    member_id: m.id.clone(),
                    instance_id: m.instance_id.clone(),
                    metadata: m.metadata_for(&protocol_name).cloned().unwrap_or_default(),
                })
                .collect()
        } else {
            Vec::new()
        };
        JoinOutcome {
            error: None,
            generation_id: self.generation_id,
            protocol_type: self.protocol_type.clone(),
            protocol_name: self.protocol_name.clone(),
            leader: self.leader_id.clone().unwrap_or_default(),
            member_id: member_id.to_owned(),
            members,
        }
    }

    pub fn sync_outcome(&self, assignment: Bytes) -> SyncOutcome {
        SyncOutcome {
            error: None,
            protocol_type: self.protocol_type.clone(),
            protocol_name: self.protocol_name.clone(),
            assignment,
        }
    }

    /// Stores the leader's assignment, moves to Stable and answers every
    /// parked SyncGroup. Members the leader left out get an empty assignment.
    pub fn apply_leader_assignment(&mut self, assignments: Vec<(String, Bytes)>) {
        let mut by_member: HashMap<String, Bytes> = assignments.into_iter().collect();
        let template = self.sync_outcome(Bytes::new());
        for member in &mut self.members {
            member.assignment = by_member.remove(&member.id).unwrap_or_default();
            let outcome = SyncOutcome {
                assignment: member.assignment.clone(),
                ..template.clone()
            };
            member.complete_sync(outcome);
        }
        self.state = GroupState::Stable;
    }

    /// Removes a member (leave or expiry), answering its parked requests with
    /// UNKNOWN_MEMBER_ID, and rebalances the rest.
    pub fn remove_member(&mut self, member_id: &str, now: Instant) -> bool {
        let Some(index) = self.members.iter().position(|m| m.id == member_id) else {
            return false;
        };
        let mut member = self.members.remove(index);
        member.fail_waiters(ResponseError::UnknownMemberId);
        if self.is_leader(member_id) {
            self.leader_id = None;
        }
        match self.state {
            GroupState::Empty | GroupState::Dead => {}
            _ => self.rebalance(now),
        }
        true
    }

    /// Evicts members whose session ran out, forgets stale pending ids and
    /// completes a rebalance whose timeout has passed. Driven by the ticker.
    pub fn expire(&mut self, now: Instant) {
        let expired: Vec<String> = self
            .members
            .iter()
            .filter(|m| m.is_session_expired(now))
            .map(|m| m.id.clone())
            .collect();
        for id in expired {
            self.remove_member(&id, now);
        }
        let before = self.pending_member_ids.len();
        self.pending_member_ids
            .retain(|_, deadline| *deadline > now);
        if self.pending_member_ids.len() != before || self.rebalance_deadline.is_some() {
            self.try_complete_join(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::member::Protocol;
    use tokio::sync::oneshot;

    fn member(id: &str, protocols: &[&str]) -> (Member, oneshot::Receiver<JoinOutcome>) {
        let (tx, rx) = oneshot::channel();
        let member = Member {
            id: id.to_owned(),
            instance_id: None,
            client_id: String::new(),
            client_host: String::new(),
            protocols: protocols
                .iter()
                .map(|name| Protocol {
                    name: (*name).to_owned(),
                    metadata: Bytes::from(format!("{id}:{name}")),
                })
                .collect(),
            session_timeout: Duration::from_secs(10),
            rebalance_timeout: Duration::from_secs(30),
            last_heartbeat: Instant::now(),
            assignment: Bytes::new(),
            awaiting_join: Some(tx),
            awaiting_sync: None,
        };
        (member, rx)
    }

    fn group() -> Group {
        Group::new("g".into(), Duration::ZERO)
    }

    #[test]
    fn state_names_parse_case_insensitively() {
        assert_eq!(GroupState::parse("stable"), Some(GroupState::Stable));
        assert_eq!(GroupState::parse("Bogus"), None);
    }

    #[test]
    fn protocol_is_first_in_leader_order_supported_by_all() {
        let mut g = group();
        let now = Instant::now();
        let (a, _ra) = member("a", &["sticky", "range", "roundrobin"]);
        let (b, _rb) = member("b", &["roundrobin", "range"]);
        // Both joins parked before the round completes.
        g.protocol_type = Some("consumer".into());
        g.members.push(a);
        g.add_member(b, "consumer", now);
        assert_eq!(g.protocol_name.as_deref(), Some("range"));
        assert_eq!(g.leader_id.as_deref(), Some("a"));
    }

    #[test]
    fn empty_group_rejects_empty_protocol_type() {
        let g = Group::new("g".into(), Duration::ZERO);
        assert!(!g.supports_protocols("", &["range".into()]));
        assert!(g.supports_protocols("consumer", &["range".into()]));
    }

    #[test]
    fn rebalance_waits_for_members_that_have_not_rejoined() {
        let mut g = group();
        let now = Instant::now();
        let (mut a, _ra) = member("a", &["range"]);
        a.session_timeout = Duration::from_secs(100);
        g.add_member(a, "consumer", now);
        assert_eq!(g.state, GroupState::CompletingRebalance);
        let (b, _rb) = member("b", &["range"]);
        g.add_member(b, "consumer", now);
        assert_eq!(g.state, GroupState::PreparingRebalance);
        g.expire(now + Duration::from_secs(31));
        assert_eq!(g.state, GroupState::CompletingRebalance);
        assert!(!g.has_member("a"));
        assert_eq!(g.generation_id, 2);
    }

    #[test]
    fn removing_last_member_empties_group_and_bumps_generation() {
        let mut g = group();
        let now = Instant::now();
        let (a, _ra) = member("a", &["range"]);
        g.add_member(a, "consumer", now);
        g.apply_leader_assignment(vec![("a".into(), Bytes::from_static(b"x"))]);
        assert_eq!(g.state, GroupState::Stable);
        g.remove_member("a", now);
        assert_eq!(g.state, GroupState::Empty);
        assert_eq!(g.generation_id, 2);
    }
}
