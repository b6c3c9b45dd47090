//! JoinGroup (API 11), v0-9.

use std::time::Duration;

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::{JoinGroupRequest, JoinGroupResponse};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::member::{Member, Protocol};
use crate::outcome::JoinOutcome;
use crate::state::{Group, GroupState};
use crate::{error_code, lock, str_bytes, ClientInfo, GroupCoordinator};

enum JoinStep {
    Done(JoinOutcome),
    Wait(String, oneshot::Receiver<JoinOutcome>),
}

pub(crate) async fn join_group(
    coordinator: &GroupCoordinator,
    req: JoinGroupRequest,
    version: i16,
    client: ClientInfo,
) -> JoinGroupResponse {
    let outcome = match begin_join(coordinator, req, version, client) {
        JoinStep::Done(outcome) => outcome,
        JoinStep::Wait(member_id, parked) => parked.await.unwrap_or_else(|_| {
            JoinOutcome::error(ResponseError::CoordinatorNotAvailable, member_id)
        }),
    };
    response(outcome, version)
}

/// Everything that happens under the group lock: validates, then answers at
/// once or parks the join until the rebalance completes.
fn begin_join(
    coordinator: &GroupCoordinator,
    req: JoinGroupRequest,
    version: i16,
    client: ClientInfo,
) -> JoinStep {
    let group_id = req.group_id.0.to_string();
    let member_id = req.member_id.to_string();
    let fail = |error, member_id: &str| JoinStep::Done(JoinOutcome::error(error, member_id.into()));
    if group_id.is_empty() {
        return fail(ResponseError::InvalidGroupId, &member_id);
    }
    let protocol_type = req.protocol_type.to_string();
    let protocols: Vec<Protocol> = req
        .protocols
        .iter()
        .map(|p| Protocol {
            name: p.name.to_string(),
            metadata: p.metadata.clone(),
        })
        .collect();
    let protocol_names: Vec<String> = protocols.iter().map(|p| p.name.clone()).collect();
    let session_timeout = coordinator.session_timeout(req.session_timeout_ms);
    // v0 has no rebalance timeout; Kafka uses the session timeout then.
    let rebalance_timeout = if version >= 1 && req.rebalance_timeout_ms > 0 {
        Duration::from_millis(req.rebalance_timeout_ms as u64)
    } else {
        session_timeout
    };

    let group = if member_id.is_empty() {
        coordinator.group_or_create(&group_id)
    } else {
        match coordinator.group(&group_id) {
            Some(group) => group,
            None => return fail(ResponseError::UnknownMemberId, &member_id),
        }
    };
    let mut group = lock(&group);
    let now = Instant::now();
    if group.state == GroupState::Dead {
        return fail(ResponseError::CoordinatorNotAvailable, &member_id);
    }
    if !group.supports_protocols(&protocol_type, &protocol_names) {
        return fail(ResponseError::InconsistentGroupProtocol, &member_id);
    }
    let instance_id = req.group_instance_id.as_ref().map(|id| id.to_string());

    let new_member = |id: String, awaiting_join| Member {
        id,
        instance_id: instance_id.clone(),
        client_id: client.client_id.clone(),
        client_host: client.client_host.clone(),
        protocols: protocols.clone(),
        session_timeout,
        rebalance_timeout,
        last_heartbeat: now,
        assignment: Default::default(),
        awaiting_join: Some(awaiting_join),
        awaiting_sync: None,
    };

    if member_id.is_empty() {
        let new_id = coordinator.new_member_id(&client.client_id);
        // v4+: hand out an id first so a retried join cannot create a ghost
        // member. Static members (instance id set) skip this, as in Kafka.
        if version >= 4 && instance_id.is_none() {
            group
                .pending_member_ids
                .insert(new_id.clone(), now + session_timeout);
            return fail(ResponseError::MemberIdRequired, &new_id);
        }
        let (tx, rx) = oneshot::channel();
        group.add_member(new_member(new_id.clone(), tx), &protocol_type, now);
        return JoinStep::Wait(new_id, rx);
    }
    if group.pending_member_ids.remove(&member_id).is_some() {
        let (tx, rx) = oneshot::channel();
        group.add_member(new_member(member_id.clone(), tx), &protocol_type, now);
        return JoinStep::Wait(member_id, rx);
    }
    rejoin(
        &mut group,
        member_id,
        protocols,
        session_timeout,
        rebalance_timeout,
        now,
    )
}

/// A known member joins again: answers from the current generation when
/// nothing changed, otherwise parks the join and rebalances.
fn rejoin(
    group: &mut Group,
    member_id: String,
    protocols: Vec<Protocol>,
    session_timeout: Duration,
    rebalance_timeout: Duration,
    now: Instant,
) -> JoinStep {
    let state = group.state;
    let is_leader = group.is_leader(&member_id);
    let Some(member) = group.member_mut(&member_id) else {
        return JoinStep::Done(JoinOutcome::error(
            ResponseError::UnknownMemberId,
            member_id,
        ));
    };
    member.last_heartbeat = now;
    let unchanged = member.protocols == protocols;
    match state {
        GroupState::CompletingRebalance if unchanged => {
            return JoinStep::Done(group.current_join_outcome(&member_id));
        }
        // The leader rejoining forces a rebalance (e.g. topic metadata changed).
        GroupState::Stable if unchanged && !is_leader => {
            return JoinStep::Done(group.current_join_outcome(&member_id));
        }
        _ => {}
    }
    member.protocols = protocols;
    member.session_timeout = session_timeout;
    member.rebalance_timeout = rebalance_timeout;
    let (tx, rx) = oneshot::channel();
    if let Some(superseded) = member.awaiting_join.replace(tx) {
        let _ = superseded.send(JoinOutcome::error(
            ResponseError::RebalanceInProgress,
            member_id.clone(),
        ));
    }
    group.rebalance(now);
    JoinStep::Wait(member_id, rx)
}

fn response(outcome: JoinOutcome, version: i16) -> JoinGroupResponse {
    let mut res = JoinGroupResponse::default();
    res.error_code = error_code(outcome.error);
    res.generation_id = outcome.generation_id;
    if version >= 7 {
        res.protocol_type = outcome.protocol_type.map(str_bytes);
        res.protocol_name = outcome.protocol_name.map(str_bytes);
    } else {
        // Not nullable before v7.
        res.protocol_name = Some(str_bytes(outcome.protocol_name.unwrap_or_default()));
    }
    res.leader = str_bytes(outcome.leader);
    res.member_id = str_bytes(outcome.member_id);
    res.members = outcome
        .members
        .into_iter()
        .map(|m| {
            let mut member = JoinGroupResponseMember::default();
            member.member_id = str_bytes(m.member_id);
            if version >= 5 {
                member.group_instance_id = m.instance_id.map(str_bytes);
            }
            member.metadata = m.metadata;
            member
        })
        .collect();
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use bytes::Bytes;

    const RANGE: &[(&str, &[u8])] = &[("range", b"meta")];

    #[tokio::test(start_paused = true)]
    async fn single_member_becomes_leader_of_generation_one() {
        let dir = TempDir::new("join-single");
        let c = open(&dir);
        let res = join_new(&c, "g", RANGE).await;
        assert_eq!(res.error_code, 0);
        assert_eq!(res.generation_id, 1);
        assert_eq!(res.leader, res.member_id);
        assert_eq!(res.protocol_name.as_deref(), Some("range"));
        assert_eq!(res.members.len(), 1);
        assert_eq!(res.members[0].metadata, Bytes::from_static(b"meta"));
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_joins_share_generation_and_only_leader_sees_members() {
        let dir = TempDir::new("join-two");
        let c = open(&dir);
        // First member forms generation 1 alone; it must rejoin for the second.
        let first = join_new(&c, "g", &[("range", b"m1")]).await;
        let second = join_new(&c, "g", &[("range", b"m2")]);
        let rejoin_first = c.join_group(
            join_request("g", first.member_id.as_str(), &[("range", b"m1")]),
            3,
        );
        let (a, b) = tokio::join!(second, rejoin_first);
        assert_eq!((a.error_code, b.error_code), (0, 0));
        assert_eq!(a.generation_id, 2);
        assert_eq!(b.generation_id, 2);
        assert_eq!(a.leader, b.leader);
        let (leader, follower) = if a.leader == a.member_id {
            (a, b)
        } else {
            (b, a)
        };
        let mut metadata: Vec<Bytes> = leader.members.iter().map(|m| m.metadata.clone()).collect();
        metadata.sort();
        assert_eq!(
            metadata,
            vec![Bytes::from_static(b"m1"), Bytes::from_static(b"m2")]
        );
        assert!(follower.members.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn v4_join_without_member_id_gets_member_id_required_then_joins() {
        let dir = TempDir::new("join-v4");
        let c = open(&dir);
        let first = c.join_group(join_request("g", "", RANGE), 4).await;
        assert_eq!(first.error_code, ResponseError::MemberIdRequired.code());
        assert!(!first.member_id.is_empty());
        assert_eq!(first.generation_id, -1);
        let second = c
            .join_group(join_request("g", first.member_id.as_str(), RANGE), 4)
            .await;
        assert_eq!(second.error_code, 0);
        assert_eq!(second.member_id, first.member_id);
        assert_eq!(second.generation_id, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn unknown_member_id_is_rejected() {
        let dir = TempDir::new("join-unknown");
        let c = open(&dir);
        join_new(&c, "g", RANGE).await;
        let res = c.join_group(join_request("g", "ghost", RANGE), 5).await;
        assert_eq!(res.error_code, ResponseError::UnknownMemberId.code());
    }

    #[tokio::test(start_paused = true)]
    async fn protocol_type_mismatch_is_inconsistent_group_protocol() {
        let dir = TempDir::new("join-type");
        let c = open(&dir);
        join_new(&c, "g", RANGE).await;
        let mut req = join_request("g", "", RANGE);
        req.protocol_type = str_bytes("connect");
        let res = c.join_group(req, 3).await;
        assert_eq!(
            res.error_code,
            ResponseError::InconsistentGroupProtocol.code()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn no_common_protocol_is_inconsistent_group_protocol() {
        let dir = TempDir::new("join-protocol");
        let c = open(&dir);
        join_new(&c, "g", RANGE).await;
        let res = join_new(&c, "g", &[("roundrobin", b"")]).await;
        assert_eq!(
            res.error_code,
            ResponseError::InconsistentGroupProtocol.code()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn session_timeout_is_clamped_to_config_bounds() {
        let dir = TempDir::new("join-clamp");
        let c = open(&dir);
        let mut req = join_request("g", "", RANGE);
        req.session_timeout_ms = 1;
        let res = c.join_group(req, 3).await;
        let group = c.group("g").unwrap();
        let group = lock(&group);
        let member = group.member(res.member_id.as_str()).unwrap();
        assert_eq!(member.session_timeout, Duration::from_millis(100));
    }

    #[tokio::test(start_paused = true)]
    async fn initial_rebalance_delay_holds_first_join() {
        let dir = TempDir::new("join-delay");
        let mut config = test_config();
        config.initial_rebalance_delay_ms = 3000;
        let c = crate::GroupCoordinator::open(dir.path(), config).unwrap();
        let started = Instant::now();
        let res = join_new(&c, "g", RANGE).await;
        assert_eq!(res.error_code, 0);
        assert!(started.elapsed() >= Duration::from_millis(3000));
    }

    #[tokio::test(start_paused = true)]
    async fn v0_join_uses_session_timeout_as_rebalance_timeout() {
        use kafka_protocol::protocol::{Decodable, Encodable};
        let dir = TempDir::new("join-v0");
        let c = open(&dir);
        let mut buf = bytes::BytesMut::new();
        join_request("g", "", RANGE).encode(&mut buf, 0).unwrap();
        let decoded = JoinGroupRequest::decode(&mut buf.freeze(), 0).unwrap();
        let res = c.join_group(decoded, 0).await;
        assert_eq!(res.error_code, 0);
        let group = c.group("g").unwrap();
        let group = lock(&group);
        let member = group.member(res.member_id.as_str()).unwrap();
        assert_eq!(member.rebalance_timeout, member.session_timeout);
    }

    fn success_outcome() -> JoinOutcome {
        JoinOutcome {
            error: None,
            generation_id: 3,
            protocol_type: Some("consumer".into()),
            protocol_name: Some("range".into()),
            leader: "m1".into(),
            member_id: "m1".into(),
            members: vec![crate::outcome::JoinedMember {
                member_id: "m1".into(),
                instance_id: Some("i1".into()),
                metadata: Bytes::from_static(b"meta"),
            }],
        }
    }

    #[test]
    fn response_round_trips_at_every_version() {
        for version in 0..=9 {
            let decoded = round_trip(&response(success_outcome(), version), version);
            assert_eq!(decoded.generation_id, 3);
            assert_eq!(decoded.protocol_name.as_deref(), Some("range"));
            assert_eq!(decoded.members[0].metadata, Bytes::from_static(b"meta"));
        }
    }

    #[test]
    fn error_response_has_non_null_protocol_name_before_v7() {
        let outcome = JoinOutcome::error(ResponseError::MemberIdRequired, "m".into());
        let decoded = round_trip(&response(outcome.clone(), 5), 5);
        assert_eq!(decoded.protocol_name.as_deref(), Some(""));
        let decoded = round_trip(&response(outcome, 7), 7);
        assert_eq!(decoded.protocol_name, None);
    }
}
