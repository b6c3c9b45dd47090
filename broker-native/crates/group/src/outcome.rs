//! What a parked JoinGroup or SyncGroup is answered with: the outcome of a
//! rebalance step, independent of the request version. The state machine
//! (`state`) decides it and a member (`member`) carries the sender for it.

use bytes::Bytes;
use kafka_protocol::error::ResponseError;

/// A JoinGroup result, independent of the request version.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JoinOutcome {
    pub error: Option<ResponseError>,
    pub generation_id: i32,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub leader: String,
    pub member_id: String,
    /// Filled for the leader only.
    pub members: Vec<JoinedMember>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JoinedMember {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub metadata: Bytes,
}

impl JoinOutcome {
    pub fn error(error: ResponseError, member_id: String) -> Self {
        Self {
            error: Some(error),
            generation_id: -1,
            protocol_type: None,
            protocol_name: None,
            leader: String::new(),
            member_id,
            members: Vec::new(),
        }
    }
}

/// A SyncGroup result, independent of the request version.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SyncOutcome {
    pub error: Option<ResponseError>,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub assignment: Bytes,
}

impl SyncOutcome {
    pub fn error(error: ResponseError) -> Self {
        Self {
            error: Some(error),
            protocol_type: None,
            protocol_name: None,
            assignment: Bytes::new(),
        }
    }
}
