//! LeaveGroup (API 13), v0-5. v0-2 name one member; v3+ a batch.

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::{LeaveGroupRequest, LeaveGroupResponse};
use tokio::time::Instant;

use crate::state::GroupState;
use crate::{error_code, lock, str_bytes, GroupCoordinator};

struct Leaving {
    member_id: String,
    instance_id: Option<String>,
}

pub(crate) fn leave_group(
    coordinator: &GroupCoordinator,
    req: LeaveGroupRequest,
    version: i16,
) -> LeaveGroupResponse {
    let leaving: Vec<Leaving> = if version >= 3 {
        req.members
            .iter()
            .map(|m| Leaving {
                member_id: m.member_id.to_string(),
                instance_id: m.group_instance_id.as_ref().map(|id| id.to_string()),
            })
            .collect()
    } else {
        vec![Leaving {
            member_id: req.member_id.to_string(),
            instance_id: None,
        }]
    };
    let mut res = LeaveGroupResponse::default();
    match leave(coordinator, req.group_id.0.as_str(), &leaving) {
        Err(error) => res.error_code = error.code(),
        Ok(errors) if version >= 3 => {
            res.members = leaving
                .into_iter()
                .zip(errors)
                .map(|(leaving, error)| {
                    let mut member = MemberResponse::default();
                    member.member_id = str_bytes(leaving.member_id);
                    member.group_instance_id = leaving.instance_id.map(str_bytes);
                    member.error_code = error_code(error);
                    member
                })
                .collect();
        }
        // Before v3 the single member's error is the response's error.
        Ok(errors) => res.error_code = error_code(errors.into_iter().next().flatten()),
    }
    res
}

/// Removes each member; the outer error fails the whole request, the inner
/// ones are per member.
fn leave(
    coordinator: &GroupCoordinator,
    group_id: &str,
    leaving: &[Leaving],
) -> Result<Vec<Option<ResponseError>>, ResponseError> {
    if group_id.is_empty() {
        return Err(ResponseError::InvalidGroupId);
    }
    let Some(group) = coordinator.group(group_id) else {
        return Ok(vec![Some(ResponseError::UnknownMemberId); leaving.len()]);
    };
    let mut group = lock(&group);
    if group.state == GroupState::Dead {
        return Err(ResponseError::CoordinatorNotAvailable);
    }
    let now = Instant::now();
    let errors = leaving
        .iter()
        .map(|leaving| {
            // v3+ static members may leave by instance id alone.
            let member_id = match (&leaving.instance_id, leaving.member_id.is_empty()) {
                (Some(instance_id), true) => group
                    .members
                    .iter()
                    .find(|m| m.instance_id.as_ref() == Some(instance_id))
                    .map(|m| m.id.clone())
                    .unwrap_or_default(),
                _ => leaving.member_id.clone(),
            };
            if group.pending_member_ids.remove(&member_id).is_some() {
                group.try_complete_join(now);
                None
            } else if group.remove_member(&member_id, now) {
                None
            } else {
                Some(ResponseError::UnknownMemberId)
            }
        })
        .collect();
    Ok(errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use kafka_protocol::messages::leave_group_request::MemberIdentity;
    use kafka_protocol::messages::GroupId;

    const RANGE: &[(&str, &[u8])] = &[("range", b"meta")];

    fn leave_v0(group: &str, member_id: &str) -> LeaveGroupRequest {
        let mut req = LeaveGroupRequest::default();
        req.group_id = GroupId(str_bytes(group));
        req.member_id = str_bytes(member_id);
        req
    }

    fn leave_v3(group: &str, member_ids: &[&str]) -> LeaveGroupRequest {
        let mut req = LeaveGroupRequest::default();
        req.group_id = GroupId(str_bytes(group));
        req.members = member_ids
            .iter()
            .map(|id| {
                let mut member = MemberIdentity::default();
                member.member_id = str_bytes(*id);
                member
            })
            .collect();
        req
    }

    /// Two members, both synced: Stable at generation 2. Returns their ids.
    async fn two_member_group(c: &GroupCoordinator) -> (String, String) {
        let first = join_new(c, "g", RANGE).await;
        let (second, first) = tokio::join!(
            join_new(c, "g", RANGE),
            c.join_group(join_request("g", first.member_id.as_str(), RANGE), 3)
        );
        let leader = if first.leader == first.member_id {
            &first
        } else {
            &second
        };
        let assignment: &[(&str, &[u8])] = &[];
        c.sync_group(
            sync_request("g", leader.member_id.as_str(), 2, assignment),
            3,
        )
        .await;
        (first.member_id.to_string(), second.member_id.to_string())
    }

    #[tokio::test(start_paused = true)]
    async fn leave_triggers_rebalance_of_remaining_member() {
        let dir = TempDir::new("leave-rebalance");
        let c = open(&dir);
        let (first, second) = two_member_group(&c).await;
        let res = c.leave_group(leave_v0("g", &second), 1).await;
        assert_eq!(res.error_code, 0);
        let hb = c.heartbeat(heartbeat_request("g", &first, 2), 4);
        assert_eq!(hb.error_code, ResponseError::RebalanceInProgress.code());
        let rejoined = c.join_group(join_request("g", &first, RANGE), 3).await;
        assert_eq!(rejoined.generation_id, 3);
        assert_eq!(rejoined.members.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn batch_leave_reports_each_member() {
        let dir = TempDir::new("leave-batch");
        let c = open(&dir);
        let (first, second) = two_member_group(&c).await;
        let res = c
            .leave_group(leave_v3("g", &[&first, "ghost", &second]), 5)
            .await;
        assert_eq!(res.error_code, 0);
        let errors: Vec<i16> = res.members.iter().map(|m| m.error_code).collect();
        assert_eq!(errors, vec![0, ResponseError::UnknownMemberId.code(), 0]);
        let group = c.group("g").unwrap();
        assert_eq!(lock(&group).state, GroupState::Empty);
    }

    #[tokio::test(start_paused = true)]
    async fn v0_leave_of_unknown_member_is_top_level_unknown_member_id() {
        let dir = TempDir::new("leave-unknown");
        let c = open(&dir);
        two_member_group(&c).await;
        let res = c.leave_group(leave_v0("g", "ghost"), 0).await;
        assert_eq!(res.error_code, ResponseError::UnknownMemberId.code());
    }

    #[tokio::test(start_paused = true)]
    async fn responses_round_trip_at_every_version() {
        let dir = TempDir::new("leave-codec");
        let c = open(&dir);
        two_member_group(&c).await;
        for version in 0..=5 {
            let req = if version >= 3 {
                leave_v3("g", &["ghost"])
            } else {
                leave_v0("g", "ghost")
            };
            let res = c.leave_group(req, version).await;
            assert_eq!(round_trip(&res, version), res);
        }
    }
}
