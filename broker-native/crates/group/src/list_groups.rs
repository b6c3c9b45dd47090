//! ListGroups (API 16), v0-5.

use std::collections::BTreeMap;

use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::{GroupId, ListGroupsRequest, ListGroupsResponse};

use crate::state::GroupState;
use crate::{lock, str_bytes, GroupCoordinator};

/// The only group type this coordinator runs (KIP-848 groups are "consumer").
const CLASSIC: &str = "classic";

pub(crate) fn list_groups(
    coordinator: &GroupCoordinator,
    req: ListGroupsRequest,
    version: i16,
) -> ListGroupsResponse {
    // group id -> (state, protocol type); groups known only by their
    // committed offsets are Empty, as Kafka loads them.
    let mut listed: BTreeMap<String, (GroupState, String)> = coordinator
        .offsets
        .groups()
        .into_iter()
        .map(|id| (id, (GroupState::Empty, String::new())))
        .collect();
    for group in coordinator.all_groups() {
        let group = lock(&group);
        let protocol_type = group.protocol_type.clone().unwrap_or_default();
        listed.insert(group.id.clone(), (group.state, protocol_type));
    }

    let state_filter: Vec<&str> = if version >= 4 {
        req.states_filter.iter().map(|s| s.as_str()).collect()
    } else {
        Vec::new()
    };
    let type_filter: Vec<&str> = if version >= 5 {
        req.types_filter.iter().map(|s| s.as_str()).collect()
    } else {
        Vec::new()
    };
    let type_matches =
        type_filter.is_empty() || type_filter.iter().any(|t| t.eq_ignore_ascii_case(CLASSIC));

    let mut res = ListGroupsResponse::default();
    if !type_matches {
        return res;
    }
    res.groups = listed
        .into_iter()
        .filter(|(_, (state, _))| {
            state_filter.is_empty()
                || state_filter
                    .iter()
                    .any(|s| s.eq_ignore_ascii_case(state.name()))
        })
        .map(|(id, (state, protocol_type))| {
            let mut group = ListedGroup::default();
            group.group_id = GroupId(str_bytes(id));
            group.protocol_type = str_bytes(protocol_type);
            if version >= 4 {
                group.group_state = str_bytes(state.name());
            }
            if version >= 5 {
                group.group_type = str_bytes(CLASSIC);
            }
            group
        })
        .collect();
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offset_commit::tests::commit_request;
    use crate::test_support::*;

    fn names(res: &ListGroupsResponse) -> Vec<String> {
        res.groups
            .iter()
            .map(|g| g.group_id.0.to_string())
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn lists_active_groups_and_groups_with_only_offsets() {
        let dir = TempDir::new("list-all");
        let c = open(&dir);
        join_new(&c, "active", &[("range", b"")]).await;
        c.offset_commit(commit_request("offsets-only", "", -1, &[("t", 0, 1)]), 8);
        let res = c.list_groups(ListGroupsRequest::default(), 4);
        assert_eq!(names(&res), vec!["active", "offsets-only"]);
        assert_eq!(res.groups[0].protocol_type.as_str(), "consumer");
        assert_eq!(res.groups[0].group_state.as_str(), "CompletingRebalance");
        assert_eq!(res.groups[1].group_state.as_str(), "Empty");
    }

    #[tokio::test(start_paused = true)]
    async fn state_filter_keeps_matching_groups_only() {
        let dir = TempDir::new("list-filter");
        let c = open(&dir);
        join_new(&c, "active", &[("range", b"")]).await;
        c.offset_commit(commit_request("offsets-only", "", -1, &[("t", 0, 1)]), 8);
        let mut req = ListGroupsRequest::default();
        req.states_filter = vec![str_bytes("empty")];
        assert_eq!(names(&c.list_groups(req, 4)), vec!["offsets-only"]);
    }

    #[tokio::test(start_paused = true)]
    async fn consumer_type_filter_lists_no_classic_groups() {
        let dir = TempDir::new("list-type");
        let c = open(&dir);
        join_new(&c, "active", &[("range", b"")]).await;
        let mut req = ListGroupsRequest::default();
        req.types_filter = vec![str_bytes("consumer")];
        assert!(c.list_groups(req, 5).groups.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn responses_round_trip_at_every_version() {
        let dir = TempDir::new("list-codec");
        let c = open(&dir);
        join_new(&c, "active", &[("range", b"")]).await;
        for version in 0..=5 {
            let res = c.list_groups(ListGroupsRequest::default(), version);
            assert_eq!(round_trip(&res, version), res);
        }
    }
}
