//! DescribeGroups (API 15), v0-6.

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::{DescribeGroupsRequest, DescribeGroupsResponse, GroupId};

use crate::state::{Group, GroupState};
use crate::{lock, str_bytes, GroupCoordinator};

/// READ, DELETE and DESCRIBE: the group operations, all allowed (no ACLs).
const GROUP_OPERATIONS: i32 = (1 << 3) | (1 << 6) | (1 << 8);

pub(crate) fn describe_groups(
    coordinator: &GroupCoordinator,
    req: DescribeGroupsRequest,
    version: i16,
) -> DescribeGroupsResponse {
    let mut res = DescribeGroupsResponse::default();
    res.groups = req
        .groups
        .iter()
        .map(|group_id| {
            let mut described = match coordinator.group(group_id.0.as_str()) {
                Some(group) => describe(&lock(&group), version),
                None if coordinator.offsets.has_group(group_id.0.as_str()) => {
                    with_state(group_id, GroupState::Empty)
                }
                None => unknown(group_id, version),
            };
            if version >= 3 && req.include_authorized_operations {
                described.authorized_operations = GROUP_OPERATIONS;
            }
            described
        })
        .collect();
    res
}

fn with_state(group_id: &GroupId, state: GroupState) -> DescribedGroup {
    let mut described = DescribedGroup::default();
    described.group_id = group_id.clone();
    described.group_state = str_bytes(state.name());
    described
}

/// Before v6 Kafka describes a missing group as Dead without an error.
fn unknown(group_id: &GroupId, version: i16) -> DescribedGroup {
    let mut described = with_state(group_id, GroupState::Dead);
    if version >= 6 {
        described.error_code = ResponseError::GroupIdNotFound.code();
        described.error_message = Some(str_bytes(format!("Group {} not found.", group_id.0)));
    }
    described
}

/// Kafka's group summary: metadata, assignment and protocol only when Stable.
fn describe(group: &Group, version: i16) -> DescribedGroup {
    let mut described = with_state(&GroupId(str_bytes(group.id.clone())), group.state);
    described.protocol_type = str_bytes(group.protocol_type.clone().unwrap_or_default());
    let stable = group.state == GroupState::Stable;
    if stable {
        described.protocol_data = str_bytes(group.protocol_name.clone().unwrap_or_default());
    }
    described.members = group
        .members
        .iter()
        .map(|m| {
            let mut member = DescribedGroupMember::default();
            member.member_id = str_bytes(m.id.clone());
            if version >= 4 {
                member.group_instance_id = m.instance_id.clone().map(str_bytes);
            }
            member.client_id = str_bytes(m.client_id.clone());
            member.client_host = str_bytes(m.client_host.clone());
            if stable {
                let protocol = group.protocol_name.as_deref().unwrap_or_default();
                member.member_metadata = m.metadata_for(protocol).cloned().unwrap_or_default();
                member.member_assignment = m.assignment.clone();
            }
            member
        })
        .collect();
    described
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use crate::ClientInfo;
    use bytes::Bytes;

    fn request(groups: &[&str]) -> DescribeGroupsRequest {
        let mut req = DescribeGroupsRequest::default();
        req.groups = groups.iter().map(|g| GroupId(str_bytes(*g))).collect();
        req
    }

    #[tokio::test(start_paused = true)]
    async fn stable_group_shows_members_with_metadata_and_assignment() {
        let dir = TempDir::new("describe-stable");
        let c = open(&dir);
        let client = ClientInfo {
            client_id: "app".into(),
            client_host: "/127.0.0.1".into(),
        };
        let joined = c
            .join_group_from(join_request("g", "", &[("range", b"meta")]), 3, client)
            .await;
        let id = joined.member_id.as_str();
        assert!(id.starts_with("app-"));
        c.sync_group(sync_request("g", id, 1, &[(id, b"assigned")]), 3)
            .await;
        let res = c.describe_groups(request(&["g"]), 5);
        let group = &res.groups[0];
        assert_eq!(group.group_state.as_str(), "Stable");
        assert_eq!(group.protocol_data.as_str(), "range");
        assert_eq!(group.members[0].client_id.as_str(), "app");
        assert_eq!(
            group.members[0].member_metadata,
            Bytes::from_static(b"meta")
        );
        assert_eq!(
            group.members[0].member_assignment,
            Bytes::from_static(b"assigned")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn unknown_group_is_dead_before_v6_and_not_found_at_v6() {
        let dir = TempDir::new("describe-unknown");
        let c = open(&dir);
        let res = c.describe_groups(request(&["nope"]), 5);
        assert_eq!(res.groups[0].error_code, 0);
        assert_eq!(res.groups[0].group_state.as_str(), "Dead");
        let res = c.describe_groups(request(&["nope"]), 6);
        assert_eq!(
            res.groups[0].error_code,
            ResponseError::GroupIdNotFound.code()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn responses_round_trip_at_every_version() {
        let dir = TempDir::new("describe-codec");
        let c = open(&dir);
        let joined = join_new(&c, "g", &[("range", b"meta")]).await;
        let id = joined.member_id.as_str();
        c.sync_group(sync_request("g", id, 1, &[(id, b"a")]), 3)
            .await;
        for version in 0..=6 {
            let mut req = request(&["g", "nope"]);
            req.include_authorized_operations = version >= 3;
            let res = c.describe_groups(req, version);
            assert_eq!(round_trip(&res, version), res);
        }
    }
}
