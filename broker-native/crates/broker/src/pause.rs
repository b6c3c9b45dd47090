//! Fault injection: a node told to pause holds its requests, its
//! replication and its cluster upkeep until a wall-clock time, so that a
//! long enough pause moves leadership away from it. A node isolated from
//! its peers keeps answering clients but neither replicates (either way)
//! nor takes part in the cluster's upkeep (heartbeats, state, ISR writes);
//! one isolated from its clients drops every connection but its peers'.

use crate::clock::now_ms;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// Replica fetchers name themselves `kbench-replica-<node id>` (the
/// request header's client id): what tells peer traffic from clients'.
pub const REPLICA_CLIENT_PREFIX: &str = "kbench-replica-";

/// Who an isolated node stops talking to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    Peers,
    Clients,
}

/// Shared by a node's server, its replica fetchers and its upkeep.
#[derive(Debug, Default)]
pub struct Pause {
    /// Wall-clock ms until which the node is paused; 0 if it never was.
    until_ms: AtomicI64,
    /// Wall-clock ms until which the node is cut off from its peers, and
    /// from its clients (0: not; i64::MAX: until healed).
    peers_until_ms: AtomicI64,
    clients_until_ms: AtomicI64,
}

impl Pause {
    pub fn pause_for(&self, ms: i64) {
        self.until_ms.store(now_ms() + ms, Ordering::Release);
    }

    /// True while paused. A node never paused reads no clock.
    pub fn paused(&self) -> bool {
        let until = self.until_ms.load(Ordering::Acquire);
        until != 0 && until > now_ms()
    }

    /// Cuts the node off from its peers or its clients for `ms` (None:
    /// until `heal`).
    pub fn isolate(&self, from: Isolation, ms: Option<i64>) {
        let until = ms.map_or(i64::MAX, |ms| now_ms().saturating_add(ms.max(0)));
        self.slot(from).store(until, Ordering::Release);
    }

    /// Ends both isolations.
    pub fn heal(&self) {
        self.peers_until_ms.store(0, Ordering::Release);
        self.clients_until_ms.store(0, Ordering::Release);
    }

    fn slot(&self, from: Isolation) -> &AtomicI64 {
        match from {
            Isolation::Peers => &self.peers_until_ms,
            Isolation::Clients => &self.clients_until_ms,
        }
    }

    /// True while cut off from `from`. A node never isolated reads no clock.
    pub fn isolated(&self, from: Isolation) -> bool {
        let until = self.slot(from).load(Ordering::Acquire);
        until != 0 && until > now_ms()
    }

    /// Whether the server drops a connection whose request names
    /// `client_id`: a peer's while isolated from peers, anyone else's while
    /// isolated from clients.
    pub fn refuses(&self, client_id: Option<&str>) -> bool {
        let peer = client_id.is_some_and(|c| c.starts_with(REPLICA_CLIENT_PREFIX));
        self.isolated(if peer {
            Isolation::Peers
        } else {
            Isolation::Clients
        })
    }

    /// Returns once the node is neither paused nor isolated from its peers:
    /// where replication and cluster upkeep wait.
    pub async fn wait_peers(&self) {
        loop {
            self.wait().await;
            if !self.isolated(Isolation::Peers) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Returns once the pause (if any) is over.
    pub async fn wait(&self) {
        loop {
            let left = self.until_ms.load(Ordering::Acquire) - now_ms();
            if left <= 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(left as u64)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_tells_peers_from_clients_and_heals() {
        let p = Pause::default();
        assert!(!p.refuses(Some("kbench-replica-2")) && !p.refuses(Some("rdkafka")));
        p.isolate(Isolation::Peers, None);
        assert!(p.refuses(Some("kbench-replica-2")));
        assert!(!p.refuses(Some("rdkafka")) && !p.refuses(None));
        p.isolate(Isolation::Clients, Some(60_000));
        assert!(p.refuses(Some("rdkafka")) && p.refuses(None));
        p.heal();
        assert!(!p.refuses(Some("kbench-replica-2")) && !p.refuses(Some("rdkafka")));
        p.isolate(Isolation::Clients, Some(0));
        assert!(!p.isolated(Isolation::Clients));
    }
}
