//! Producer ids for InitProducerId. Ids are handed out from blocks whose
//! upper end is persisted (`<dataDir>/__producer_ids`) before any id of the
//! block is used, so ids are never reused after a restart or a crash.

use crate::error::{Error, Result};
use kafka_protocol::ResponseError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub const PRODUCER_IDS_FILE: &str = "__producer_ids";
/// Ids reserved per write of the file.
pub const BLOCK_SIZE: i64 = 1000;

#[derive(Debug)]
pub struct ProducerIdAllocator {
    path: PathBuf,
    /// (next id to hand out, first id not yet reserved on disk)
    state: Mutex<(i64, i64)>,
    /// Or-ed into every id: 0, or a cluster node's id in the high bits.
    node_bits: i64,
}

impl ProducerIdAllocator {
    /// Starts after the last reserved block recorded in `dir`.
    pub fn open(dir: &Path) -> Result<ProducerIdAllocator> {
        let path = dir.join(PRODUCER_IDS_FILE);
        let next = match std::fs::read_to_string(&path) {
            Ok(text) => text
                .trim()
                .strip_prefix("next_block_start=")
                .and_then(|v| v.parse::<i64>().ok())
                .filter(|v| *v >= 0)
                .ok_or_else(|| {
                    Error::kafka(
                        ResponseError::KafkaStorageError,
                        format!("bad producer id file {}", path.display()),
                    )
                })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(e.into()),
        };
        Ok(ProducerIdAllocator {
            path,
            state: Mutex::new((next, next)),
            node_bits: 0,
        })
    }

    /// Each node of a cluster allocates from its own data directory, so
    /// its node id goes in the high bits to keep ids unique.
    pub fn unique_across_nodes(self, node_id: i32) -> ProducerIdAllocator {
        ProducerIdAllocator {
            node_bits: i64::from(node_id) << 40,
            ..self
        }
    }

    /// A producer id never handed out before by this data directory.
    pub fn allocate(&self) -> Result<i64> {
        let mut state = self.state.lock().expect("producer id lock");
        if state.0 >= state.1 {
            let reserved = state.0 + BLOCK_SIZE;
            self.persist(reserved)?;
            state.1 = reserved;
        }
        let id = state.0;
        state.0 += 1;
        Ok(self.node_bits | id)
    }

    fn persist(&self, next_block_start: i64) -> Result<()> {
        let tmp = self.path.with_extension("tmp");
        let mut file = std::fs::File::create(&tmp)?;
        writeln!(file, "next_block_start={next_block_start}")?;
        file.sync_all()?;
        std::fs::rename(&tmp, &self.path)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_consecutive_within_a_run() {
        let dir = tempfile::tempdir().unwrap();
        let ids = ProducerIdAllocator::open(dir.path()).unwrap();
        assert_eq!(ids.allocate().unwrap(), 0);
        assert_eq!(ids.allocate().unwrap(), 1);
    }

    #[test]
    fn ids_are_not_reused_after_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let first = ProducerIdAllocator::open(dir.path())
            .unwrap()
            .allocate()
            .unwrap();
        let second = ProducerIdAllocator::open(dir.path())
            .unwrap()
            .allocate()
            .unwrap();
        assert!(second > first, "{second} should be above {first}");
    }

    #[test]
    fn a_new_block_is_reserved_when_one_runs_out() {
        let dir = tempfile::tempdir().unwrap();
        let ids = ProducerIdAllocator::open(dir.path()).unwrap();
        for _ in 0..=BLOCK_SIZE {
            ids.allocate().unwrap();
        }
        let reopened = ProducerIdAllocator::open(dir.path()).unwrap();
        assert_eq!(reopened.allocate().unwrap(), 2 * BLOCK_SIZE);
    }
}
