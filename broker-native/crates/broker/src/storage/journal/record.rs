//! The journal's file format, without I/O.
//!
//! A file starts with a header block (`KBJRNL01`, its sequence number, a
//! CRC). Records follow from the second block, each `length u32 | crc32c
//! u32 | body`, big-endian, where the CRC covers the file's sequence number
//! and then the body: a record left in a recycled file by an earlier life
//! fails it, so a reader never takes stale bytes for this life's. Bodies:
//!
//! - append: `1 | topic id [16] | partition i32 | base offset i64 | batches`
//! - truncate: `2 | topic id [16] | partition i32 | offset i64`
//! - pad: `3 | zeros` (fills a write up to a block boundary)
//! - roll: `4` (the file ends here; the next file continues it)
//!
//! Every write ends on a block boundary, so O_DIRECT writes never share a
//! block and never rewrite one. A reader stops at the first record that is
//! torn or fails its CRC, and checks every length against what is left
//! before it looks further.

use super::aligned::AlignedBuf;
pub use super::aligned::BLOCK;
use uuid::Uuid;

/// Length and CRC.
pub const FRAME: usize = 8;
const MAGIC: &[u8; 8] = b"KBJRNL01";
/// Magic, sequence number, CRC.
const HEADER: usize = 8 + 8 + 4;

const KIND_APPEND: u8 = 1;
const KIND_TRUNCATE: u8 = 2;
const KIND_PAD: u8 = 3;
const KIND_ROLL: u8 = 4;
/// Kind, topic id, partition, offset.
const KEYED: usize = 1 + 16 + 4 + 8;

/// A partition as the journal names it: by topic id, so that a record of
/// a deleted topic never lands in a new topic of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct JournalKey {
    pub topic_id: Uuid,
    pub partition: i32,
}

/// One record as read back.
#[derive(Debug, PartialEq, Eq)]
pub enum Entry<'a> {
    /// Batches appended from `base_offset`.
    Append {
        key: JournalKey,
        base_offset: i64,
        batches: &'a [u8],
    },
    /// The partition's log was cut at `offset`.
    Truncate { key: JournalKey, offset: i64 },
}

/// What one file holds.
#[derive(Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    pub entries: Vec<Entry<'a>>,
    /// The file ended with a roll record: the next file continues it.
    pub rolled: bool,
}

/// The first block of a file with sequence number `seq`.
pub fn header(seq: u64) -> AlignedBuf {
    let mut block = AlignedBuf::with_capacity(BLOCK);
    block.extend_from_slice(MAGIC);
    block.extend_from_slice(&seq.to_be_bytes());
    let crc = crc32c::crc32c(block.as_slice());
    block.extend_from_slice(&crc.to_be_bytes());
    block.extend_zeros(BLOCK - HEADER);
    block
}

/// The sequence number in a file's header, if the header is whole.
pub fn header_seq(file: &[u8]) -> Option<u64> {
    let header = file.get(..HEADER)?;
    let crc = u32::from_be_bytes(header[16..20].try_into().ok()?);
    if &header[..8] != MAGIC || crc32c::crc32c(&header[..16]) != crc {
        return None;
    }
    Some(u64::from_be_bytes(header[8..16].try_into().ok()?))
}

/// Bytes an append record of `batches` bytes takes.
pub fn append_len(batches: usize) -> usize {
    FRAME + KEYED + batches
}

/// Bytes a truncate record takes.
pub const TRUNCATE_LEN: usize = FRAME + KEYED;

/// The most a file's last write adds after its last record: a roll
/// record, then padding to the block's end.
pub const ROLL_TAIL: usize = FRAME + 1 + BLOCK + FRAME;

fn crc(seq: u64, body: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&seq.to_be_bytes()), body)
}

/// Appends one record: a frame whose length and CRC are filled in once
/// `body` has written the body.
fn encode(out: &mut AlignedBuf, seq: u64, body: impl FnOnce(&mut AlignedBuf)) {
    let at = out.len();
    out.extend_zeros(FRAME);
    body(out);
    let len = out.len() - at - FRAME;
    let sum = crc(seq, &out.as_slice()[at + FRAME..]);
    let frame = &mut out.as_mut_slice()[at..at + FRAME];
    frame[..4].copy_from_slice(&(len as u32).to_be_bytes());
    frame[4..].copy_from_slice(&sum.to_be_bytes());
}

fn keyed(out: &mut AlignedBuf, kind: u8, key: JournalKey, offset: i64) {
    out.extend_from_slice(&[kind]);
    out.extend_from_slice(key.topic_id.as_bytes());
    out.extend_from_slice(&key.partition.to_be_bytes());
    out.extend_from_slice(&offset.to_be_bytes());
}

pub fn encode_append(
    out: &mut AlignedBuf,
    seq: u64,
    key: JournalKey,
    base_offset: i64,
    batches: &[u8],
) {
    encode(out, seq, |out| {
        keyed(out, KIND_APPEND, key, base_offset);
        out.extend_from_slice(batches);
    });
}

pub fn encode_truncate(out: &mut AlignedBuf, seq: u64, key: JournalKey, offset: i64) {
    encode(out, seq, |out| keyed(out, KIND_TRUNCATE, key, offset));
}

/// The file's last record (then pad it).
pub fn encode_roll(out: &mut AlignedBuf, seq: u64) {
    encode(out, seq, |out| out.extend_from_slice(&[KIND_ROLL]));
}

/// Pads `out`, which started on a block boundary, to the next one with a
/// pad record (into the block after, when the gap is too small for one).
/// Returns the bytes added.
pub fn pad_to_block(out: &mut AlignedBuf, seq: u64) -> usize {
    let used = out.len() % BLOCK;
    if used == 0 {
        return 0;
    }
    let mut gap = BLOCK - used;
    if gap < FRAME + 1 {
        gap += BLOCK;
    }
    encode(out, seq, |out| {
        out.extend_from_slice(&[KIND_PAD]);
        out.extend_zeros(gap - FRAME - 1);
    });
    gap
}

/// The records of a file whose header carries `seq` (see [`header_seq`]),
/// up to a roll record or the first record that is torn, fails its CRC or
/// makes no sense.
pub fn decode(file: &[u8], seq: u64) -> Decoded<'_> {
    let mut entries = Vec::new();
    let mut at = BLOCK;
    while file.len().saturating_sub(at) >= FRAME {
        let len = u32::from_be_bytes(file[at..at + 4].try_into().expect("4 bytes")) as usize;
        let sum = u32::from_be_bytes(file[at + 4..at + 8].try_into().expect("4 bytes"));
        let left = file.len() - at - FRAME;
        if len == 0 || len > left {
            break;
        }
        let body = &file[at + FRAME..at + FRAME + len];
        if crc(seq, body) != sum {
            break;
        }
        let key = |body: &[u8]| JournalKey {
            topic_id: Uuid::from_bytes(body[1..17].try_into().expect("16 bytes")),
            partition: i32::from_be_bytes(body[17..21].try_into().expect("4 bytes")),
        };
        let offset = |body: &[u8]| i64::from_be_bytes(body[21..29].try_into().expect("8 bytes"));
        match body[0] {
            KIND_APPEND if len > KEYED => entries.push(Entry::Append {
                key: key(body),
                base_offset: offset(body),
                batches: &body[KEYED..],
            }),
            KIND_TRUNCATE if len == KEYED => entries.push(Entry::Truncate {
                key: key(body),
                offset: offset(body),
            }),
            KIND_PAD => {}
            KIND_ROLL if len == 1 => {
                return Decoded {
                    entries,
                    rolled: true,
                }
            }
            _ => break,
        }
        at += FRAME + len;
    }
    Decoded {
        entries,
        rolled: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(partition: i32) -> JournalKey {
        JournalKey {
            topic_id: Uuid::from_u128(7),
            partition,
        }
    }

    /// A file of `seq` holding what `records` writes, padded as a write.
    fn file(seq: u64, records: impl FnOnce(&mut AlignedBuf)) -> Vec<u8> {
        let mut out = AlignedBuf::with_capacity(0);
        out.extend_from_slice(header(seq).as_slice());
        records(&mut out);
        pad_to_block(&mut out, seq);
        out.as_slice().to_vec()
    }

    #[test]
    fn records_read_back_as_written_with_padding_skipped() {
        let bytes = file(3, |out| {
            encode_append(out, 3, key(1), 40, b"batches");
            pad_to_block(out, 3);
            encode_truncate(out, 3, key(2), 12);
        });
        assert_eq!(bytes.len() % BLOCK, 0);
        assert_eq!(header_seq(&bytes), Some(3));
        assert_eq!(
            decode(&bytes, 3),
            Decoded {
                entries: vec![
                    Entry::Append {
                        key: key(1),
                        base_offset: 40,
                        batches: b"batches",
                    },
                    Entry::Truncate {
                        key: key(2),
                        offset: 12,
                    },
                ],
                rolled: false,
            }
        );
    }

    #[test]
    fn a_roll_record_ends_the_file() {
        let bytes = file(4, |out| {
            encode_append(out, 4, key(0), 0, b"x");
            encode_roll(out, 4);
            // Nothing after a roll is read.
            encode_append(out, 4, key(0), 1, b"y");
        });
        let decoded = decode(&bytes, 4);
        assert!(decoded.rolled);
        assert_eq!(decoded.entries.len(), 1);
    }

    #[test]
    fn a_record_of_an_earlier_life_of_the_file_fails_its_crc() {
        let old = file(5, |out| encode_append(out, 5, key(0), 0, b"stale"));
        let mut bytes = old.clone();
        bytes[..BLOCK].copy_from_slice(header(9).as_slice());
        assert_eq!(header_seq(&bytes), Some(9));
        assert_eq!(decode(&bytes, 9).entries, Vec::new());
        assert_eq!(decode(&old, 5).entries.len(), 1);
    }

    #[test]
    fn a_torn_or_flipped_record_ends_the_file_there() {
        let bytes = file(1, |out| {
            encode_append(out, 1, key(0), 0, b"first");
            encode_append(out, 1, key(0), 1, b"second");
        });
        let whole = decode(&bytes, 1).entries.len();
        assert_eq!(whole, 2);
        let second = BLOCK + append_len(5);
        let mut flipped = bytes.clone();
        flipped[second + FRAME + 30] ^= 1;
        assert_eq!(decode(&flipped, 1).entries.len(), 1);
        let torn = &bytes[..second + FRAME + 3];
        assert_eq!(decode(torn, 1).entries.len(), 1);
    }

    #[test]
    fn hostile_lengths_and_kinds_are_checked_before_use() {
        let mut bytes = file(1, |out| encode_append(out, 1, key(0), 0, b"x"));
        let at = BLOCK;
        for len in [0u32, 3, u32::MAX, (bytes.len() - at - FRAME + 1) as u32] {
            bytes[at..at + 4].copy_from_slice(&len.to_be_bytes());
            assert_eq!(decode(&bytes, 1).entries, Vec::new(), "length {len}");
        }
        // A CRC-valid record whose kind or length makes no sense ends it too.
        for body in [
            vec![9u8],
            vec![KIND_ROLL, 0],
            vec![KIND_TRUNCATE, 1, 2],
            vec![KIND_APPEND; KEYED],
        ] {
            let bytes = file(1, |out| encode(out, 1, |out| out.extend_from_slice(&body)));
            assert_eq!(
                decode(&bytes, 1),
                Decoded {
                    entries: vec![],
                    rolled: false
                }
            );
        }
        assert_eq!(decode(&[], 1).entries, Vec::new());
        assert_eq!(header_seq(&[0; 10]), None);
        assert_eq!(header_seq(&vec![0; BLOCK]), None);
    }

    #[test]
    fn padding_always_ends_on_a_block_boundary() {
        for used in [
            1,
            FRAME,
            BLOCK - FRAME - 1,
            BLOCK - FRAME,
            BLOCK - 1,
            BLOCK + 5,
        ] {
            let mut out = AlignedBuf::with_capacity(0);
            out.extend_zeros(used);
            let added = pad_to_block(&mut out, 1);
            assert_eq!(out.len() % BLOCK, 0, "from {used}");
            assert!(
                (FRAME + 1..=BLOCK + FRAME).contains(&added),
                "from {used}: {added}"
            );
        }
    }
}
