//! Target `journal`: a journal file as a crash may leave it (torn,
//! overwritten, recycled), read back as the replay at open reads it; with a
//! flag, the replay itself into a log.
//!
//! Input: a flags byte, then the file from its header block on.
//! - bit 0: write a valid header for sequence `SEQ` over the first block;
//! - bit 1: give every record frame the reader walks a valid CRC, and point
//!   every append and truncate record at topic "t" (partition = its own
//!   partition modulo `PARTITIONS`), so that inputs get past both;
//! - bit 2: then open a log under fsync `batch` holding topic "t" on the
//!   file, as a start after a crash does, and read every partition back.
//!
//! The reader must stop, never panic, wherever the file stops making
//! sense, and hand back only slices of the file; a log opened on it must
//! serve whole valid batches and take an append.

use crate::{partition, scratch};
use kbench_broker_core::config::FsyncPolicy;
use kbench_broker_core::storage::batch::split_and_validate;
use kbench_broker_core::storage::journal::record::{self, Entry, BLOCK, FRAME};
use kbench_broker_core::storage::journal::JOURNAL_DIR;
use kbench_broker_core::storage::{Log, LogConfig};

pub const HEADER: u8 = 1;
pub const FIX: u8 = 2;
pub const REPLAY: u8 = 4;
/// The sequence number of the fuzzed file.
pub const SEQ: u64 = 7;
/// Partitions of topic "t".
pub const PARTITIONS: i32 = 3;
/// The most a seed holds.
const SEED_BYTES: usize = 12 << 10;
/// Topic "t"'s id, which fixed records name.
pub const TOPIC_ID: u128 = 0x6b62_656e_6368;

pub fn run(input: &[u8]) {
    let Some((&flags, file)) = input.split_first() else {
        return;
    };
    let mut file = file.to_vec();
    if flags & HEADER != 0 {
        let header = record::header(SEQ);
        let n = file.len().min(BLOCK);
        file[..n].copy_from_slice(&header.as_slice()[..n]);
    }
    if flags & FIX != 0 {
        let seq = record::header_seq(&file).unwrap_or(SEQ);
        fix(&mut file, seq);
    }
    let Some(seq) = record::header_seq(&file) else {
        return;
    };
    check_decode(&file, seq);
    if flags & REPLAY != 0 {
        replay(&file, seq);
    }
}

/// Walks the frames as the reader does, giving each a valid CRC and
/// pointing keyed records at topic "t".
fn fix(file: &mut [u8], seq: u64) {
    let mut at = BLOCK;
    while file.len().saturating_sub(at) >= FRAME {
        let len = u32::from_be_bytes(file[at..at + 4].try_into().unwrap()) as usize;
        if len == 0 || len > file.len() - at - FRAME {
            return;
        }
        let body = &mut file[at + FRAME..at + FRAME + len];
        if matches!(body[0], 1 | 2) && body.len() >= 21 {
            body[1..17].copy_from_slice(&TOPIC_ID.to_be_bytes());
            let p = i32::from_be_bytes(body[17..21].try_into().unwrap()).rem_euclid(PARTITIONS);
            body[17..21].copy_from_slice(&p.to_be_bytes());
        }
        let crc = crc32c::crc32c_append(crc32c::crc32c(&seq.to_be_bytes()), body);
        file[at + 4..at + 8].copy_from_slice(&crc.to_be_bytes());
        at += FRAME + len;
    }
}

/// What the reader returns lies inside the file, and reading is repeatable.
fn check_decode(file: &[u8], seq: u64) {
    let decoded = record::decode(file, seq);
    let range = file.as_ptr_range();
    for entry in &decoded.entries {
        if let Entry::Append { batches, .. } = entry {
            assert!(!batches.is_empty(), "an append record without batches");
            let inside = batches.as_ptr_range();
            assert!(
                range.start <= inside.start && inside.end <= range.end,
                "a record's batches outside the file"
            );
        }
    }
    assert_eq!(record::decode(file, seq), decoded, "reading twice differs");
}

/// A log holding topic "t", crashed with `file` as its only journal file,
/// opened again: it must open or refuse cleanly, and serve valid batches.
fn replay(file: &[u8], seq: u64) {
    let dir = scratch::fresh_dir("journal");
    let config = || LogConfig {
        fsync: FsyncPolicy::Batch,
        ..LogConfig::default()
    };
    {
        let log = Log::open(&dir, config()).expect("opening an empty log");
        log.create_topic_with_id("t", uuid::Uuid::from_u128(TOPIC_ID), PARTITIONS)
            .expect("creating topic t");
        log.flush().expect("a clean flush");
    }
    let journal = dir.join(JOURNAL_DIR);
    std::fs::create_dir_all(&journal).expect("the journal directory");
    std::fs::write(journal.join(format!("{seq:020}.journal")), file).expect("the journal file");
    let Ok(log) = Log::open(&dir, config()) else {
        return;
    };
    for p in 0..PARTITIONS {
        let partition = log.partition("t", p).expect("partition of t");
        let read = partition::read_all(&partition);
        if !read.is_empty() {
            split_and_validate(&read).expect("the replayed log serves an invalid batch");
        }
        if partition.log_end_offset() < i64::MAX / 2 {
            let _ = partition.append(&partition::client_batch(1, 1_700_000_000_000));
        }
    }
}

/// Seeds: journal files of topic "t" holding `payloads` (client batches)
/// as appends to partitions 0, 1, 2 in turn, with a truncation, whole and
/// torn in their last record; every flag set.
pub fn seeds(payloads: &[impl AsRef<[u8]>]) -> Vec<Vec<u8>> {
    use kbench_broker_core::storage::batch::set_base_offset;
    use kbench_broker_core::storage::journal::JournalKey;
    let key = |partition: i32| JournalKey {
        topic_id: uuid::Uuid::from_u128(TOPIC_ID),
        partition,
    };
    let mut file = record::header(SEQ);
    let mut ends = [0i64; PARTITIONS as usize];
    // Where the last record starts and ends, to tear it.
    let mut last = (0, 0);
    for (i, payload) in payloads.iter().enumerate() {
        // Small seeds run fast.
        if file.len() + payload.as_ref().len() > SEED_BYTES {
            break;
        }
        let p = i % PARTITIONS as usize;
        let mut batches = payload.as_ref().to_vec();
        let Ok(split) = split_and_validate(&batches) else {
            continue;
        };
        let base = ends[p];
        let mut next = base;
        for (at, header) in &split {
            set_base_offset(&mut batches[*at..], next);
            next += i64::from(header.last_offset_delta) + 1;
        }
        let start = file.len();
        record::encode_append(&mut file, SEQ, key(p as i32), base, &batches);
        last = (start, file.len());
        ends[p] = next;
        if i == 1 && base < next {
            // The second append is cut again, as a follower's diverging tail.
            record::encode_truncate(&mut file, SEQ, key(p as i32), base);
            ends[p] = base;
        }
    }
    record::pad_to_block(&mut file, SEQ);
    let whole = file.as_slice().to_vec();
    let torn = whole[..(last.0 + last.1) / 2].to_vec();
    [whole, torn]
        .into_iter()
        .map(|f| [vec![HEADER | FIX | REPLAY], f].concat())
        .collect()
}
