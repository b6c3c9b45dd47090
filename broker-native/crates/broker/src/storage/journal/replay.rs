//! Reading back the journal files a run left: from the oldest, each file
//! continued by the next only where it ends with a roll record, up to the
//! first record that is torn or fails its CRC (nothing after it was ever
//! acknowledged: rounds are written, and acknowledged, in order).

use super::files;
use super::record::{self, Entry};
use super::JOURNAL_DIR;
use crate::error::Result;
use std::path::{Path, PathBuf};

/// The journal files found at open, read.
#[derive(Debug)]
pub struct Replay {
    dir: PathBuf,
    /// Every `<seq>.journal` file there, oldest first.
    seqs: Vec<u64>,
    /// The bytes of those that hold records to replay, in order.
    files: Vec<(u64, Vec<u8>)>,
}

impl Replay {
    pub fn read(data_dir: &Path) -> Result<Replay> {
        let dir = data_dir.join(JOURNAL_DIR);
        let listing = files::list(&dir)?;
        let mut files = Vec::new();
        let mut expected = None;
        for (seq, path) in &listing.journals {
            if expected.is_some_and(|e| e != *seq) {
                break;
            }
            let bytes = std::fs::read(path)?;
            if record::header_seq(&bytes) != Some(*seq) {
                break;
            }
            let rolled = record::decode(&bytes, *seq).rolled;
            files.push((*seq, bytes));
            if !rolled {
                break;
            }
            expected = Some(seq + 1);
        }
        Ok(Replay {
            dir,
            seqs: listing.journals.iter().map(|(seq, _)| *seq).collect(),
            files,
        })
    }

    /// Whether there is anything to replay.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every record, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = Entry<'_>> {
        self.files
            .iter()
            .flat_map(|(seq, bytes)| record::decode(bytes, *seq).entries)
    }

    /// Retires every journal file (call it once what was replayed is in
    /// synced segments): a few stay as spares, the rest go.
    pub fn finish(self) -> Result<()> {
        let mut spares = files::list(&self.dir)?.spares;
        for seq in self.seqs {
            files::retire(&self.dir, seq, &mut spares)?;
        }
        Ok(())
    }
}
