//! One member of a classic group and the requests it has parked with us.

use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::error::ResponseError;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::outcome::{JoinOutcome, SyncOutcome};

/// A protocol (assignor) a member can use, with its opaque metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Protocol {
    pub name: String,
    pub metadata: Bytes,
}

#[derive(Debug)]
pub(crate) struct Member {
    pub id: String,
    pub instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    /// In the member's order of preference.
    pub protocols: Vec<Protocol>,
    pub session_timeout: Duration,
    pub rebalance_timeout: Duration,
    pub last_heartbeat: Instant,
    /// What the leader assigned this member in the current generation.
    pub assignment: Bytes,
    /// A JoinGroup waiting for the rebalance to complete.
    pub awaiting_join: Option<oneshot::Sender<JoinOutcome>>,
    /// A SyncGroup waiting for the leader's assignment.
    pub awaiting_sync: Option<oneshot::Sender<SyncOutcome>>,
}

impl Member {
    pub fn metadata_for(&self, protocol: &str) -> Option<&Bytes> {
        self.protocols
            .iter()
            .find(|p| p.name == protocol)
            .map(|p| &p.metadata)
    }

    pub fn supports(&self, protocol: &str) -> bool {
        self.metadata_for(protocol).is_some()
    }

    pub fn is_awaiting_join(&self) -> bool {
        self.awaiting_join.is_some()
    }

    /// Members with a parked join or sync are waiting on us, not silent.
    pub fn is_session_expired(&self, now: Instant) -> bool {
        self.awaiting_join.is_none()
            && self.awaiting_sync.is_none()
            && now.saturating_duration_since(self.last_heartbeat) >= self.session_timeout
    }

    pub fn complete_join(&mut self, outcome: JoinOutcome) {
        if let Some(waiter) = self.awaiting_join.take() {
            // The requester may have gone away; nothing to tell then.
            let _ = waiter.send(outcome);
        }
    }

    pub fn complete_sync(&mut self, outcome: SyncOutcome) {
        if let Some(waiter) = self.awaiting_sync.take() {
            let _ = waiter.send(outcome);
        }
    }

    /// Answers every parked request with `error`, e.g. when the member is removed.
    pub fn fail_waiters(&mut self, error: ResponseError) {
        let id = self.id.clone();
        self.complete_join(JoinOutcome::error(error, id));
        self.complete_sync(SyncOutcome::error(error));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(session_ms: u64, now: Instant) -> Member {
        Member {
            id: "m".into(),
            instance_id: None,
            client_id: String::new(),
            client_host: String::new(),
            protocols: vec![Protocol {
                name: "range".into(),
                metadata: Bytes::from_static(b"r"),
            }],
            session_timeout: Duration::from_millis(session_ms),
            rebalance_timeout: Duration::from_millis(session_ms),
            last_heartbeat: now,
            assignment: Bytes::new(),
            awaiting_join: None,
            awaiting_sync: None,
        }
    }

    #[test]
    fn silent_member_expires_after_session_timeout() {
        let now = Instant::now();
        let m = member(100, now);
        assert!(!m.is_session_expired(now + Duration::from_millis(99)));
        assert!(m.is_session_expired(now + Duration::from_millis(100)));
    }

    #[test]
    fn member_with_parked_join_does_not_expire() {
        let now = Instant::now();
        let mut m = member(100, now);
        let (tx, _rx) = oneshot::channel();
        m.awaiting_join = Some(tx);
        assert!(!m.is_session_expired(now + Duration::from_secs(10)));
    }

    #[test]
    fn metadata_is_found_by_protocol_name() {
        let m = member(100, Instant::now());
        assert_eq!(m.metadata_for("range"), Some(&Bytes::from_static(b"r")));
        assert!(!m.supports("roundrobin"));
    }
}
