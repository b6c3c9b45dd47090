//! The cluster's metadata and its store.
//!
//! Every node of a bundled cluster runs on one machine, so the controller's
//! state lives in a shared directory rather than in a consensus log: a JSON
//! document (`state.json`) replaced atomically (write, fsync, rename) under
//! an exclusive file lock (`state.lock`), and one heartbeat file per node
//! (`nodes/<id>`). Nodes in one process and nodes in separate processes use
//! it the same way, and any node can die without taking the metadata with
//! it. Each change bumps `version`; a node notices a change by the file's
//! identity (a rename makes a new inode) and re-reads it.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use uuid::Uuid;

/// The whole cluster's metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterState {
    /// Bumped by every change.
    pub version: u64,
    pub cluster_id: String,
    /// Every node that ever registered, alive or not.
    pub nodes: BTreeMap<i32, NodeInfo>,
    pub topics: BTreeMap<String, TopicState>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfo {
    pub host: String,
    pub port: u16,
    /// A plaintext listener for replicas only, when the client listener
    /// asks for TLS or SASL (followers fetch there, without credentials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication_port: Option<u16>,
}

impl NodeInfo {
    /// Where a follower fetches from this node.
    pub fn for_replication(&self) -> NodeInfo {
        NodeInfo {
            host: self.host.clone(),
            port: self.replication_port.unwrap_or(self.port),
            replication_port: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicState {
    pub id: Uuid,
    /// Config overrides (Kafka names), already validated.
    #[serde(default)]
    pub configs: BTreeMap<String, String>,
    pub partitions: Vec<PartitionState>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionState {
    /// Assigned replicas, preferred leader first.
    pub replicas: Vec<i32>,
    /// -1 while no in-sync replica is alive.
    pub leader: i32,
    pub leader_epoch: i32,
    /// In-sync replicas, the leader included.
    pub isr: Vec<i32>,
}

impl ClusterState {
    pub fn partition(&self, topic: &str, partition: i32) -> Option<&PartitionState> {
        self.topics.get(topic).and_then(|t| {
            usize::try_from(partition)
                .ok()
                .and_then(|p| t.partitions.get(p))
        })
    }

    pub fn partition_mut(&mut self, topic: &str, partition: i32) -> Option<&mut PartitionState> {
        self.topics.get_mut(topic).and_then(|t| {
            usize::try_from(partition)
                .ok()
                .and_then(|p| t.partitions.get_mut(p))
        })
    }
}

/// What a node writes to its heartbeat file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// Wall-clock milliseconds of the write (shared by every process).
    pub at_ms: i64,
    /// The state version this node has applied.
    pub applied: u64,
    /// Distinguishes one start of a node from the next.
    pub incarnation: u64,
}

/// Identity of the state file: changes on every replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    ino: u64,
    len: u64,
    mtime_ns: i64,
}

/// The shared directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

const STATE: &str = "state.json";
const LOCK: &str = "state.lock";
const NODES: &str = "nodes";

impl Store {
    pub fn open(dir: &Path) -> Result<Store> {
        std::fs::create_dir_all(dir.join(NODES))?;
        Ok(Store {
            dir: dir.to_path_buf(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The current state (empty before the first write).
    pub fn read(&self) -> Result<ClusterState> {
        match std::fs::read(self.dir.join(STATE)) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::Io(std::io::Error::other(format!(
                    "bad cluster state {}: {e}",
                    self.dir.join(STATE).display()
                )))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ClusterState::default()),
            Err(e) => Err(e.into()),
        }
    }

    pub fn stamp(&self) -> Option<Stamp> {
        let meta = std::fs::metadata(self.dir.join(STATE)).ok()?;
        Some(Stamp {
            ino: meta.ino(),
            len: meta.len(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        })
    }

    /// Runs `change` on the current state under the lock, and writes the
    /// result (with the version bumped) if it differs. Blocks while another
    /// node holds the lock (which is never for long).
    pub fn modify<T>(
        &self,
        change: impl FnOnce(&mut ClusterState) -> Result<T>,
    ) -> Result<(T, ClusterState)> {
        let lock = self.lock_file()?;
        lock.lock()?;
        let outcome = self.modify_locked(change);
        let _ = lock.unlock();
        outcome
    }

    /// `modify`, or `None` at once if another node holds the lock.
    pub fn try_modify<T>(
        &self,
        change: impl FnOnce(&mut ClusterState) -> Result<T>,
    ) -> Result<Option<(T, ClusterState)>> {
        let lock = self.lock_file()?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
        }
        let outcome = self.modify_locked(change);
        let _ = lock.unlock();
        outcome.map(Some)
    }

    fn lock_file(&self) -> Result<std::fs::File> {
        Ok(std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join(LOCK))?)
    }

    fn modify_locked<T>(
        &self,
        change: impl FnOnce(&mut ClusterState) -> Result<T>,
    ) -> Result<(T, ClusterState)> {
        let before = self.read()?;
        let mut after = before.clone();
        let value = change(&mut after)?;
        if after != before {
            after.version = before.version + 1;
            self.write(&after)?;
        }
        Ok((value, after))
    }

    fn write(&self, state: &ClusterState) -> Result<()> {
        let bytes = serde_json::to_vec(state).map_err(std::io::Error::other)?;
        let tmp = self.dir.join(format!("{STATE}.tmp"));
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&bytes)?;
        file.sync_data()?;
        std::fs::rename(&tmp, self.dir.join(STATE))?;
        Ok(())
    }

    pub fn write_heartbeat(&self, node: i32, heartbeat: &Heartbeat) -> Result<()> {
        let path = self.dir.join(NODES).join(node.to_string());
        let tmp = self.dir.join(NODES).join(format!("{node}.tmp"));
        std::fs::write(
            &tmp,
            serde_json::to_vec(heartbeat).map_err(std::io::Error::other)?,
        )?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    }

    /// The last heartbeat of every node that wrote one.
    pub fn heartbeats(&self) -> BTreeMap<i32, Heartbeat> {
        let Ok(listing) = std::fs::read_dir(self.dir.join(NODES)) else {
            return BTreeMap::new();
        };
        listing
            .filter_map(|entry| {
                let entry = entry.ok()?;
                let id: i32 = entry.file_name().to_str()?.parse().ok()?;
                let bytes = std::fs::read(entry.path()).ok()?;
                Some((id, serde_json::from_slice(&bytes).ok()?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modify_bumps_the_version_only_on_change_and_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.read().unwrap(), ClusterState::default());
        let before = store.stamp();
        let (_, s) = store
            .modify(|s| {
                s.nodes.insert(
                    1,
                    NodeInfo {
                        host: "127.0.0.1".into(),
                        port: 9092,
                        replication_port: None,
                    },
                );
                Ok(())
            })
            .unwrap();
        assert_eq!(s.version, 1);
        assert_ne!(store.stamp(), before);
        let stamp = store.stamp();
        let (_, s) = store.modify(|_| Ok(())).unwrap();
        assert_eq!(s.version, 1);
        assert_eq!(store.stamp(), stamp);
        let again = Store::open(dir.path()).unwrap().read().unwrap();
        assert_eq!(again.nodes[&1].port, 9092);
    }

    #[test]
    fn a_held_lock_makes_try_modify_decline() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let held = store.lock_file().unwrap();
        held.lock().unwrap();
        assert!(store.try_modify(|_| Ok(())).unwrap().is_none());
        held.unlock().unwrap();
        assert!(store.try_modify(|_| Ok(())).unwrap().is_some());
    }

    #[test]
    fn heartbeats_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let hb = Heartbeat {
            at_ms: 5,
            applied: 2,
            incarnation: 9,
        };
        store.write_heartbeat(3, &hb).unwrap();
        assert_eq!(store.heartbeats()[&3], hb);
    }
}
