//! Target `recovery`: a segment's files as a crash or a clean shutdown left
//! them, opened with the broker's own recovery (`Partition::open_in`, which
//! scans the last segment and cuts a torn or corrupt tail, or trusts its
//! index files after a clean shutdown).
//!
//! Input: a flags byte, the offset index length and the time index length
//! (u16 big-endian each), then the offset index, the time index, and the
//! log (the rest). Flags:
//! - bits 0-1, what is on disk and how it is opened: 0 the active segment
//!   after a crash, 1 the active segment after a clean shutdown, 2 and 3
//!   the same with the input as a sealed segment followed by an empty
//!   active one;
//! - bit 2: rewrite the log's batch CRCs first (see `crc`);
//! - bit 3: write the index files (else they are missing);
//! - bits 4-5: the segment's base offset, one of `BASES`;
//! - bits 6-7: the index interval, one of `INDEX_INTERVALS` (small ones
//!   put index entries into small inputs).
//!
//! After a crash, the recovered active segment must read back as the
//! valid prefix of the file, open again without cutting anything, survive
//! a clean shutdown (its index files then trusted), and take an append.

use crate::{crc, partition, scratch};
use kbench_broker_core::storage::batch::split_and_validate;
use kbench_broker_core::storage::segment::{index_file_name, log_file_name, time_index_file_name};
use kbench_broker_core::storage::Partition;
use std::path::Path;

pub const CLEAN_SHUTDOWN: u8 = 1;
pub const SEALED: u8 = 2;
pub const FIX_CRCS: u8 = 4;
pub const INDEX_FILES: u8 = 8;
pub const BASES: [i64; 4] = [0, 100, 1 << 32, 1 << 62];
pub const INDEX_INTERVALS: [u64; 4] = [4096, 0, 100, 1000];
/// Base offset of the empty active segment after a sealed one.
const ACTIVE_AFTER_SEALED: i64 = 1 << 20;

/// The parts of one input.
pub struct Files<'a> {
    pub flags: u8,
    pub index: &'a [u8],
    pub time_index: &'a [u8],
    pub log: Vec<u8>,
}

impl Files<'_> {
    pub fn parse(input: &[u8]) -> Files<'_> {
        let flags = input.first().copied().unwrap_or(0);
        let len_at = |at: usize| {
            input
                .get(at..at + 2)
                .map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])))
        };
        let mut rest = input.get(5..).unwrap_or(&[]);
        let mut take = |n: usize| {
            let (head, tail) = rest.split_at(n.min(rest.len()));
            rest = tail;
            head
        };
        let index = take(len_at(1));
        let time_index = take(len_at(3));
        let mut log = rest.to_vec();
        if flags & FIX_CRCS != 0 {
            crc::fix_crcs(&mut log);
        }
        Files {
            flags,
            index,
            time_index,
            log,
        }
    }

    pub fn base_offset(&self) -> i64 {
        BASES[usize::from(self.flags >> 4) & 3]
    }

    pub fn index_interval(&self) -> u64 {
        INDEX_INTERVALS[usize::from(self.flags >> 6)]
    }
}

/// An input in this target's format.
pub fn encode(flags: u8, index: &[u8], time_index: &[u8], log: &[u8]) -> Vec<u8> {
    let mut out = vec![flags];
    out.extend_from_slice(&(index.len() as u16).to_be_bytes());
    out.extend_from_slice(&(time_index.len() as u16).to_be_bytes());
    out.extend_from_slice(index);
    out.extend_from_slice(time_index);
    out.extend_from_slice(log);
    out
}

pub fn run(input: &[u8]) {
    let files = Files::parse(input);
    let dir = scratch::fresh_dir("recovery");
    let base = files.base_offset();
    let interval = files.index_interval();
    write(&dir, base, &files);
    let clean = files.flags & CLEAN_SHUTDOWN != 0;
    if files.flags & SEALED != 0 {
        std::fs::write(dir.join(log_file_name(base + ACTIVE_AFTER_SEALED)), b"")
            .expect("writing the active segment");
        // A sealed segment is trusted (only its index is checked), so bad
        // batches in it may fail opens and reads; none may panic.
        if let Ok(partition) = partition::open(&dir, clean, interval) {
            exercise(&partition);
        }
        return;
    }
    let partition =
        partition::open(&dir, clean, interval).expect("opening a partition with one segment");
    if clean {
        exercise(&partition);
        return;
    }
    check_crash_recovery(&dir, interval, &files.log, partition);
}

fn write(dir: &Path, base: i64, files: &Files) {
    let write = |name: String, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).expect("writing a segment file");
    };
    write(log_file_name(base), &files.log);
    if files.flags & INDEX_FILES != 0 {
        write(index_file_name(base), files.index);
        write(time_index_file_name(base), files.time_index);
    }
}

/// Reads, looks up timestamps and appends, ignoring errors.
fn exercise(partition: &Partition) {
    let _ = partition::try_read_all(partition);
    for timestamp in [-1, 0, 1_700_000_000_000, i64::MAX] {
        let _ = partition.offset_for_timestamp(timestamp);
    }
    if partition.log_end_offset() < i64::MAX / 2 {
        let _ = partition.append(&partition::client_batch(2, 1_700_000_000_000));
    }
}

fn check_crash_recovery(dir: &Path, interval: u64, log: &[u8], partition: Partition) {
    let report = partition.recovery();
    let kept = partition.size_bytes() as usize;
    assert!(kept <= log.len(), "recovery grew the log");
    assert_eq!(
        report.truncated_bytes as usize,
        log.len() - kept,
        "truncated bytes"
    );
    let read = partition::read_all(&partition);
    assert_eq!(read, log[..kept], "reading the recovered log");
    let batches = if read.is_empty() {
        Vec::new()
    } else {
        split_and_validate(&read).expect("recovery kept an invalid batch")
    };
    let base = partition.log_start_offset();
    for (_, header) in &batches {
        // Index entries hold offsets relative to the base in 32 bits, so
        // Kafka's recovery refuses a batch past that range.
        assert!(
            header.base_offset >= base && header.last_offset() - base <= i64::from(u32::MAX),
            "recovery kept a batch (offsets {}..={}) outside the 32-bit range of segment {base}",
            header.base_offset,
            header.last_offset()
        );
    }
    let log_end = partition.log_end_offset();
    let expected_end = partition::next_offset(&read).unwrap_or(base);
    assert_eq!(log_end, expected_end, "log end after recovery");
    for timestamp in [-1, 0, 1_700_000_000_000, i64::MAX] {
        partition
            .offset_for_timestamp(timestamp)
            .expect("timestamp lookup in a recovered log");
    }
    drop(partition);

    let again = partition::open(dir, false, interval).expect("reopening after recovery");
    assert_eq!(
        again.recovery().truncated_bytes,
        0,
        "a second recovery cut more"
    );
    assert_eq!(
        again.log_end_offset(),
        log_end,
        "log end on a second recovery"
    );
    again.flush().expect("a clean shutdown's flush");
    drop(again);

    let trusted = partition::open(dir, true, interval).expect("reopening after a clean shutdown");
    assert_eq!(
        trusted.log_end_offset(),
        log_end,
        "log end after a clean shutdown"
    );
    // The trusted path wants offsets without gaps from the base, as the
    // broker writes them; a log with gaps is scanned again (slower, not wrong).
    let contiguous = batches
        .iter()
        .try_fold(base, |next, (_, h)| {
            (h.base_offset == next).then(|| h.next_offset())
        })
        .is_some();
    if contiguous {
        assert_eq!(
            trusted.recovery().scanned_segments,
            0,
            "the broker's own index files were not trusted after a clean shutdown"
        );
    }
    if log_end >= i64::MAX / 2 {
        return;
    }
    let sent = partition::client_batch(3, 1_700_000_000_000);
    let appended = trusted.append(&sent).expect("appending after recovery");
    assert_eq!(appended.base_offset, log_end, "append after recovery");
    let back = trusted
        .read(log_end, 1 << 20, true)
        .expect("reading the appended batch");
    assert_eq!(back.records.len(), sent.len(), "reading the appended batch");
}
