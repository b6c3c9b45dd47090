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
    /// The bytes of those that may hold records to replay: the oldest and
    /// each next one in sequence with its header (`entries` stops after the
    /// first that does not end with a roll record).
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
            files.push((*seq, bytes));
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

    /// Every record, oldest first: each file decoded once, and the next
    /// one only where this one ends with a roll record.
    pub fn entries(&self) -> impl Iterator<Item = Entry<'_>> {
        let mut rolled = true;
        self.files
            .iter()
            .map_while(move |(seq, bytes)| {
                if !rolled {
                    return None;
                }
                let decoded = record::decode(bytes, *seq);
                rolled = decoded.rolled;
                Some(decoded.entries)
            })
            .flatten()
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
        replay
            .entries()
            .map(|entry| match entry {
                Entry::Append { base_offset, .. } => base_offset,
                Entry::Truncate { offset, .. } => offset,
            })
            .collect()
    }

    #[test]
    fn a_file_is_continued_by_the_next_only_where_it_ends_with_a_roll() {
        let data = tempfile::tempdir().unwrap();
        let dir = data.path().join(JOURNAL_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        write(&dir, 5, true);
        write(&dir, 6, false);
        // A file after one that never rolled holds nothing acknowledged.
        write(&dir, 7, true);
        assert_eq!(offsets(&Replay::read(data.path()).unwrap()), vec![50, 60]);
        // A gap in the sequence ends the chain too.
        std::fs::remove_file(dir.join(files::journal_name(6))).unwrap();
        assert_eq!(offsets(&Replay::read(data.path()).unwrap()), vec![50]);
    }
}
