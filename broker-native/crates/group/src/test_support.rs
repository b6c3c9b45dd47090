//! Shared helpers for the tests at the bottom of each module.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{
    GroupId, HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, SyncGroupRequest,
};
use kafka_protocol::protocol::{Decodable, Encodable};

use crate::{str_bytes, GroupConfig, GroupCoordinator};

/// A directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("kbench-group-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        Self(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Session bounds low enough for expiry tests, no initial delay.
pub fn test_config() -> GroupConfig {
    GroupConfig {
        min_session_timeout_ms: 100,
        max_session_timeout_ms: 60_000,
        initial_rebalance_delay_ms: 0,
    }
}

pub fn open(dir: &TempDir) -> Arc<GroupCoordinator> {
    GroupCoordinator::open(dir.path(), test_config()).unwrap()
}

pub fn join_request(group: &str, member_id: &str, protocols: &[(&str, &[u8])]) -> JoinGroupRequest {
    let mut req = JoinGroupRequest::default();
    req.group_id = GroupId(str_bytes(group));
    req.member_id = str_bytes(member_id);
    req.session_timeout_ms = 10_000;
    req.rebalance_timeout_ms = 30_000;
    req.protocol_type = str_bytes("consumer");
    req.protocols = protocols
        .iter()
        .map(|(name, metadata)| {
            let mut protocol = JoinGroupRequestProtocol::default();
            protocol.name = str_bytes(*name);
            protocol.metadata = Bytes::copy_from_slice(metadata);
            protocol
        })
        .collect();
    req
}

pub fn sync_request(
    group: &str,
    member_id: &str,
    generation_id: i32,
    assignments: &[(&str, &[u8])],
) -> SyncGroupRequest {
    let mut req = SyncGroupRequest::default();
    req.group_id = GroupId(str_bytes(group));
    req.member_id = str_bytes(member_id);
    req.generation_id = generation_id;
    req.assignments = assignments
        .iter()
        .map(|(member, assignment)| {
            let mut a = SyncGroupRequestAssignment::default();
            a.member_id = str_bytes(*member);
            a.assignment = Bytes::copy_from_slice(assignment);
            a
        })
        .collect();
    req
}

pub fn heartbeat_request(group: &str, member_id: &str, generation_id: i32) -> HeartbeatRequest {
    let mut req = HeartbeatRequest::default();
    req.group_id = GroupId(str_bytes(group));
    req.member_id = str_bytes(member_id);
    req.generation_id = generation_id;
    req
}

/// Joins `group` as a new member at v3 (no MEMBER_ID_REQUIRED round trip).
pub async fn join_new(
    coordinator: &GroupCoordinator,
    group: &str,
    protocols: &[(&str, &[u8])],
) -> JoinGroupResponse {
    coordinator
        .join_group(join_request(group, "", protocols), 3)
        .await
}

/// Encodes `message` at `version` and decodes it back; panics if the codec
/// refuses a field the version does not have.
pub fn round_trip<T: Encodable + Decodable>(message: &T, version: i16) -> T {
    let mut buf = BytesMut::new();
    message
        .encode(&mut buf, version)
        .unwrap_or_else(|e| panic!("encode at v{version}: {e}"));
    let mut bytes = buf.freeze();
    let decoded = T::decode(&mut bytes, version).unwrap();
    assert!(bytes.is_empty(), "trailing bytes at v{version}");
    decoded
}
