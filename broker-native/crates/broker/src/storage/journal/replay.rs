//! Reading back the journal files a run left: from the oldest, each file
//! continued by the next only where it ends with a roll record, up to the
//! first record that is torn or fails its CRC (nothing after it was ever
//! acknowledged: rounds are written, and acknowledged, in order).

use super::files;
use super::record::{self, Entry};
use super::JOURNAL_DIR;
use crate::error::Result;
use std::path::{Path, PathBuf};

/// The journal files found at open.
#[derive(Debug)]
pub struct Replay {
    dir: PathBuf,
    /// Every `<seq>.journal` file there, oldest first, with its path.
    journals: Vec<(u64, PathBuf)>,
}

impl Replay {
    pub fn open(data_dir: &Path) -> Result<Replay> {
        let dir = data_dir.join(JOURNAL_DIR);
        let journals = files::list(&dir)?.journals;
        Ok(Replay { dir, journals })
    }

    /// Hands over every record, oldest first. Files are read one at a
    /// time, each decoded once; the next is read only where this one ends
    /// with a roll record, follows it in sequence and carries its own
    /// header. So at most one file is in memory, and none that holds
    /// nothing acknowledged is read at all.
    pub fn for_each(&self, mut f: impl FnMut(&Entry<'_>)) -> Result<()> {
        let mut expected = None;
        for (seq, path) in &self.journals {
            if expected.is_some_and(|e| e != *seq) {
                break;
            }
            let bytes = std::fs::read(path)?;
            if record::header_seq(&bytes) != Some(*seq) {
                break;
            }
            let decoded = record::decode(&bytes, *seq);
            for entry in &decoded.entries {
                f(entry);
            }
            if !decoded.rolled {
                break;
            }
            expected = Some(seq + 1);
        }
        Ok(())
    }

    /// Retires every journal file (call it once what was replayed is in
    /// synced segments): a few stay as spares, the rest go.
    pub fn finish(self) -> Result<()> {
        let mut spares = files::list(&self.dir)?.spares;
        for (seq, _) in self.journals {
            files::retire(&self.dir, seq, &mut spares)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::journal::aligned::AlignedBuf;
    use crate::storage::journal::record::JournalKey;
    use crate::storage::journal::record::{encode_append, encode_roll, header, pad_to_block};

    fn write(dir: &Path, seq: u64, roll: bool) {
        let mut out = AlignedBuf::with_capacity(0);
        out.extend_from_slice(header(seq).as_slice());
        let key = JournalKey {
            topic_id: uuid::Uuid::from_u128(1),
            partition: 0,
        };
        encode_append(&mut out, seq, key, seq as i64 * 10, b"batches");
        if roll {
            encode_roll(&mut out, seq);
        }
        pad_to_block(&mut out, seq);
        std::fs::write(dir.join(files::journal_name(seq)), out.as_slice()).unwrap();
    }

    fn offsets(replay: &Replay) -> Vec<i64> {
        let mut out = Vec::new();
        replay
            .for_each(|entry| {
                out.push(match entry {
                    Entry::Append { base_offset, .. } => *base_offset,
                    Entry::Truncate { offset, .. } => *offset,
                })
            })
            .unwrap();
        out
    }

    /// A data directory whose journal holds file 5, which rolled, and
    /// file 6, which did not.
    fn rolled_then_not() -> (tempfile::TempDir, PathBuf) {
        let data = tempfile::tempdir().unwrap();
        let dir = data.path().join(JOURNAL_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        write(&dir, 5, true);
        write(&dir, 6, false);
        (data, dir)
    }

    #[test]
    fn a_file_is_continued_by_the_next_only_where_it_ends_with_a_roll() {
        let (data, dir) = rolled_then_not();
        // A file after one that never rolled holds nothing acknowledged.
        write(&dir, 7, true);
        assert_eq!(offsets(&Replay::open(data.path()).unwrap()), vec![50, 60]);
        // A gap in the sequence ends the chain too.
        std::fs::remove_file(dir.join(files::journal_name(6))).unwrap();
        assert_eq!(offsets(&Replay::open(data.path()).unwrap()), vec![50]);
    }

    #[test]
    fn a_file_after_one_that_never_rolled_is_not_read() {
        let (data, dir) = rolled_then_not();
        // Reading this one would fail (it is a directory): it must not be read.
        std::fs::create_dir(dir.join(files::journal_name(7))).unwrap();
        assert_eq!(offsets(&Replay::open(data.path()).unwrap()), vec![50, 60]);
    }
}
