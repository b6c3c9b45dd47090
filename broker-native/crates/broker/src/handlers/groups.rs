//! The consumer-group APIs, answered by the kbench-group coordinator.

use super::ErasedEncodable;
use crate::broker::Broker;
use crate::codec::Request;
use crate::error::{Error, Result};
use bytes::BytesMut;
use kafka_protocol::messages::RequestHeader;
use kafka_protocol::protocol::StrBytes;
use std::net::SocketAddr;

pub(crate) async fn dispatch(
    broker: &Broker,
    header: &RequestHeader,
    request: Request,
    peer: SocketAddr,
    encode: impl Fn(&dyn ErasedEncodable) -> Result<BytesMut>,
) -> Result<BytesMut> {
    let version = header.request_api_version;
    Ok(match request {
        Request::JoinGroup(req) => {
            let client = kbench_group::ClientInfo {
                client_id: header
                    .client_id
                    .as_ref()
                    .map(StrBytes::to_string)
                    .unwrap_or_default(),
                client_host: format!("/{}", peer.ip()),
            };
            encode(&broker.groups.join_group_from(req, version, client).await)?
        }
        Request::SyncGroup(req) => encode(&broker.groups.sync_group(req, version).await)?,
        Request::Heartbeat(req) => encode(&broker.groups.heartbeat(req, version))?,
        Request::LeaveGroup(req) => encode(&broker.groups.leave_group(req, version).await)?,
        Request::OffsetCommit(req) => {
            // Each topic's partition count, once, for the coordinator to refuse commits for
            // partitions that do not exist (before, they were kept for good).
            let mut counts = std::collections::HashMap::new();
            for topic in &req.topics {
                let name = topic.name.0.to_string();
                if !counts.contains_key(&name) {
                    let count = broker
                        .log
                        .topic(&name)
                        .and_then(|t| broker.admin.placement(&t))
                        .map_or(0, |p| p.len());
                    counts.insert(name, count);
                }
            }
            let known = |topic: &str, partition: i32| {
                usize::try_from(partition)
                    .is_ok_and(|p| p < counts.get(topic).copied().unwrap_or(0))
            };
            encode(&broker.groups.offset_commit_known(req, version, &known))?
        }
        Request::OffsetFetch(req) => encode(&broker.groups.offset_fetch(req, version))?,
        Request::ListGroups(req) => encode(&broker.groups.list_groups(req, version))?,
        Request::DescribeGroups(req) => encode(&broker.groups.describe_groups(req, version))?,
        _ => {
            return Err(Error::UnsupportedApi {
                api_key: header.request_api_key,
                version,
            })
        }
    })
}
