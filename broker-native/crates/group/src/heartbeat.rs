//! Heartbeat (API 12), v0-4.

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{HeartbeatRequest, HeartbeatResponse};
use tokio::time::Instant;

use crate::state::GroupState;
use crate::{error_code, lock, GroupCoordinator};

pub(crate) fn heartbeat(
    coordinator: &GroupCoordinator,
    req: HeartbeatRequest,
    _version: i16,
) -> HeartbeatResponse {
    let mut res = HeartbeatResponse::default();
    res.error_code = error_code(check(coordinator, &req).err());
    res
}

/// Kafka's order of checks: group, member, generation, then state.
fn check(coordinator: &GroupCoordinator, req: &HeartbeatRequest) -> Result<(), ResponseError> {
    let group_id = req.group_id.0.as_str();
    if group_id.is_empty() {
        return Err(ResponseError::InvalidGroupId);
    }
    let group = coordinator
        .group(group_id)
        .ok_or(ResponseError::UnknownMemberId)?;
    let mut group = lock(&group);
    if group.state == GroupState::Dead {
        return Err(ResponseError::CoordinatorNotAvailable);
    }
    let generation_id = group.generation_id;
    let state = group.state;
    let member = group
        .member_mut(req.member_id.as_str())
        .ok_or(ResponseError::UnknownMemberId)?;
    if req.generation_id != generation_id {
        return Err(ResponseError::IllegalGeneration);
    }
    member.last_heartbeat = Instant::now();
    match state {
        GroupState::PreparingRebalance => Err(ResponseError::RebalanceInProgress),
        GroupState::CompletingRebalance | GroupState::Stable => Ok(()),
        GroupState::Empty | GroupState::Dead => Err(ResponseError::UnknownMemberId),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use std::time::Duration;

    const RANGE: &[(&str, &[u8])] = &[("range", b"meta")];

    /// One member that joined and synced: Stable at generation 1.
    async fn stable_group(c: &GroupCoordinator) -> String {
        let joined = join_new(c, "g", RANGE).await;
        let id = joined.member_id.to_string();
        c.sync_group(sync_request("g", &id, 1, &[(&id, b"a")]), 3)
            .await;
        id
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeat_of_stable_member_is_ok() {
        let dir = TempDir::new("hb-ok");
        let c = open(&dir);
        let id = stable_group(&c).await;
        let res = c.heartbeat(heartbeat_request("g", &id, 1), 4);
        assert_eq!(res.error_code, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeat_with_old_generation_is_illegal_generation() {
        let dir = TempDir::new("hb-generation");
        let c = open(&dir);
        let id = stable_group(&c).await;
        let res = c.heartbeat(heartbeat_request("g", &id, 0), 4);
        assert_eq!(res.error_code, ResponseError::IllegalGeneration.code());
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeat_of_unknown_member_is_unknown_member_id() {
        let dir = TempDir::new("hb-unknown");
        let c = open(&dir);
        stable_group(&c).await;
        let res = c.heartbeat(heartbeat_request("g", "ghost", 1), 4);
        assert_eq!(res.error_code, ResponseError::UnknownMemberId.code());
        let res = c.heartbeat(heartbeat_request("nope", "ghost", 1), 4);
        assert_eq!(res.error_code, ResponseError::UnknownMemberId.code());
    }

    #[tokio::test(start_paused = true)]
    async fn new_member_triggers_rebalance_that_existing_members_learn_by_heartbeat() {
        let dir = TempDir::new("hb-rebalance");
        let c = open(&dir);
        let first = join_new(&c, "g", RANGE).await;
        let second = join_new(&c, "g", RANGE);
        let rejoin = c.join_group(join_request("g", first.member_id.as_str(), RANGE), 3);
        let (a, b) = tokio::join!(second, rejoin);
        let (a_id, b_id) = (a.member_id.as_str(), b.member_id.as_str());
        let no_assignment: &[(&str, &[u8])] = &[];
        let (sync_a, sync_b) = tokio::join!(
            c.sync_group(sync_request("g", a_id, 2, no_assignment), 3),
            c.sync_group(sync_request("g", b_id, 2, no_assignment), 3)
        );
        assert_eq!((sync_a.error_code, sync_b.error_code), (0, 0));
        let third = join_new(&c, "g", RANGE);
        let existing = async {
            tokio::task::yield_now().await;
            for id in [a_id, b_id] {
                let hb = c.heartbeat(heartbeat_request("g", id, 2), 4);
                assert_eq!(hb.error_code, ResponseError::RebalanceInProgress.code());
            }
            tokio::join!(
                c.join_group(join_request("g", a_id, RANGE), 3),
                c.join_group(join_request("g", b_id, RANGE), 3)
            )
        };
        let (third, (x, y)) = tokio::join!(third, existing);
        for res in [&third, &x, &y] {
            assert_eq!(res.error_code, 0);
            assert_eq!(res.generation_id, 3);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn silent_member_is_evicted_after_session_timeout() {
        let dir = TempDir::new("hb-expiry");
        let c = open(&dir);
        let id = stable_group(&c).await;
        tokio::time::sleep(Duration::from_secs(30)).await;
        let res = c.heartbeat(heartbeat_request("g", &id, 1), 4);
        assert_eq!(res.error_code, ResponseError::UnknownMemberId.code());
        let group = c.group("g").unwrap();
        assert_eq!(lock(&group).state, GroupState::Empty);
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeats_keep_a_member_alive_past_its_session_timeout() {
        let dir = TempDir::new("hb-alive");
        let c = open(&dir);
        let id = stable_group(&c).await;
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_secs(5)).await;
            let res = c.heartbeat(heartbeat_request("g", &id, 1), 4);
            assert_eq!(res.error_code, 0);
        }
    }

    #[test]
    fn response_round_trips_at_every_version() {
        let mut res = HeartbeatResponse::default();
        res.error_code = ResponseError::RebalanceInProgress.code();
        for version in 0..=4 {
            assert_eq!(round_trip(&res, version).error_code, 27);
        }
    }
}
