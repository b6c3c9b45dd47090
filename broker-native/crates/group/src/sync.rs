//! SyncGroup (API 14), v0-5.

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{SyncGroupRequest, SyncGroupResponse};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::outcome::SyncOutcome;
use crate::state::GroupState;
use crate::{error_code, lock, str_bytes, GroupCoordinator};

enum SyncStep {
    Done(SyncOutcome),
    Wait(oneshot::Receiver<SyncOutcome>),
}

pub(crate) async fn sync_group(
    coordinator: &GroupCoordinator,
    req: SyncGroupRequest,
    version: i16,
) -> SyncGroupResponse {
    let outcome = match begin_sync(coordinator, req, version) {
        SyncStep::Done(outcome) => outcome,
        SyncStep::Wait(parked) => parked
            .await
            .unwrap_or_else(|_| SyncOutcome::error(ResponseError::CoordinatorNotAvailable)),
    };
    response(outcome, version)
}

fn begin_sync(coordinator: &GroupCoordinator, req: SyncGroupRequest, version: i16) -> SyncStep {
    let fail = |error| SyncStep::Done(SyncOutcome::error(error));
    let group_id = req.group_id.0.as_str();
    if group_id.is_empty() {
        return fail(ResponseError::InvalidGroupId);
    }
    let Some(group) = coordinator.group(group_id) else {
        return fail(ResponseError::UnknownMemberId);
    };
    let mut group = lock(&group);
    let member_id = req.member_id.as_str();
    if group.state == GroupState::Dead {
        return fail(ResponseError::CoordinatorNotAvailable);
    }
    if !group.has_member(member_id) {
        return fail(ResponseError::UnknownMemberId);
    }
    if req.generation_id != group.generation_id {
        return fail(ResponseError::IllegalGeneration);
    }
    if version >= 5 {
        let type_differs = req
            .protocol_type
            .as_ref()
            .is_some_and(|t| group.protocol_type.as_deref() != Some(t.as_str()));
        let name_differs = req
            .protocol_name
            .as_ref()
            .is_some_and(|n| group.protocol_name.as_deref() != Some(n.as_str()));
        if type_differs || name_differs {
            return fail(ResponseError::InconsistentGroupProtocol);
        }
    }
    match group.state {
        GroupState::PreparingRebalance => fail(ResponseError::RebalanceInProgress),
        GroupState::Stable => {
            let assignment = group.member(member_id).map(|m| m.assignment.clone());
            SyncStep::Done(group.sync_outcome(assignment.unwrap_or_default()))
        }
        GroupState::CompletingRebalance => {
            let (tx, rx) = oneshot::channel();
            if let Some(member) = group.member_mut(member_id) {
                member.last_heartbeat = Instant::now();
                // A retried sync replaces the earlier one, whose caller is gone.
                member.awaiting_sync = Some(tx);
            }
            if group.is_leader(member_id) {
                let assignments = req
                    .assignments
                    .into_iter()
                    .map(|a| (a.member_id.to_string(), a.assignment))
                    .collect();
                group.apply_leader_assignment(assignments);
            }
            SyncStep::Wait(rx)
        }
        GroupState::Empty | GroupState::Dead => fail(ResponseError::UnknownMemberId),
    }
}

fn response(outcome: SyncOutcome, version: i16) -> SyncGroupResponse {
    let mut res = SyncGroupResponse::default();
    res.error_code = error_code(outcome.error);
    if version >= 5 {
        res.protocol_type = outcome.protocol_type.map(str_bytes);
        res.protocol_name = outcome.protocol_name.map(str_bytes);
    }
    res.assignment = outcome.assignment;
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use bytes::Bytes;

    const RANGE: &[(&str, &[u8])] = &[("range", b"meta")];

    #[tokio::test(start_paused = true)]
    async fn single_member_join_and_sync_gets_its_assignment() {
        let dir = TempDir::new("sync-single");
        let c = open(&dir);
        let joined = join_new(&c, "g", RANGE).await;
        let id = joined.member_id.as_str();
        let res = c
            .sync_group(sync_request("g", id, 1, &[(id, b"mine")]), 3)
            .await;
        assert_eq!(res.error_code, 0);
        assert_eq!(res.assignment, Bytes::from_static(b"mine"));
    }

    #[tokio::test(start_paused = true)]
    async fn each_member_gets_its_own_assignment_and_follower_waits_for_leader() {
        let dir = TempDir::new("sync-two");
        let c = open(&dir);
        let first = join_new(&c, "g", RANGE).await;
        let (second, first) = tokio::join!(
            join_new(&c, "g", RANGE),
            c.join_group(join_request("g", first.member_id.as_str(), RANGE), 3)
        );
        let (leader, follower) = if first.leader == first.member_id {
            (first, second)
        } else {
            (second, first)
        };
        let (l, f) = (leader.member_id.as_str(), follower.member_id.as_str());
        let generation = leader.generation_id;
        // The follower's sync is polled first and must wait for the leader's.
        let (follower_res, leader_res) = tokio::join!(
            c.sync_group(sync_request("g", f, generation, &[]), 5),
            c.sync_group(
                sync_request(
                    "g",
                    l,
                    generation,
                    &[(l, b"for-leader"), (f, b"for-follower")]
                ),
                5
            )
        );
        assert_eq!(leader_res.assignment, Bytes::from_static(b"for-leader"));
        assert_eq!(follower_res.assignment, Bytes::from_static(b"for-follower"));
        assert_eq!(follower_res.protocol_name.as_deref(), Some("range"));
    }

    #[tokio::test(start_paused = true)]
    async fn sync_with_wrong_generation_is_illegal_generation() {
        let dir = TempDir::new("sync-generation");
        let c = open(&dir);
        let joined = join_new(&c, "g", RANGE).await;
        let res = c
            .sync_group(sync_request("g", joined.member_id.as_str(), 7, &[]), 3)
            .await;
        assert_eq!(res.error_code, ResponseError::IllegalGeneration.code());
    }

    #[tokio::test(start_paused = true)]
    async fn sync_from_unknown_member_is_unknown_member_id() {
        let dir = TempDir::new("sync-unknown");
        let c = open(&dir);
        join_new(&c, "g", RANGE).await;
        let res = c.sync_group(sync_request("g", "ghost", 1, &[]), 3).await;
        assert_eq!(res.error_code, ResponseError::UnknownMemberId.code());
    }

    #[tokio::test(start_paused = true)]
    async fn parked_sync_gets_rebalance_in_progress_when_a_member_joins() {
        let dir = TempDir::new("sync-interrupted");
        let c = open(&dir);
        let first = join_new(&c, "g", RANGE).await;
        let second = join_new(&c, "g", RANGE);
        let rejoin = c.join_group(join_request("g", first.member_id.as_str(), RANGE), 3);
        let (a, b) = tokio::join!(second, rejoin);
        let follower = if a.leader == a.member_id { b } else { a };
        let parked = c.sync_group(
            sync_request(
                "g",
                follower.member_id.as_str(),
                follower.generation_id,
                &[],
            ),
            3,
        );
        let third = async {
            tokio::task::yield_now().await;
            // Only starts a rebalance; its join stays parked.
            tokio::time::timeout(
                std::time::Duration::from_millis(10),
                join_new(&c, "g", RANGE),
            )
            .await
        };
        let (res, _) = tokio::join!(parked, third);
        assert_eq!(res.error_code, ResponseError::RebalanceInProgress.code());
    }

    #[test]
    fn response_round_trips_at_every_version() {
        let outcome = SyncOutcome {
            error: None,
            protocol_type: Some("consumer".into()),
            protocol_name: Some("range".into()),
            assignment: Bytes::from_static(b"a"),
        };
        for version in 0..=5 {
            let decoded = round_trip(&response(outcome.clone(), version), version);
            assert_eq!(decoded.assignment, Bytes::from_static(b"a"));
            let expected_name = (version >= 5).then(|| str_bytes("range"));
            assert_eq!(decoded.protocol_name, expected_name);
        }
    }
}
