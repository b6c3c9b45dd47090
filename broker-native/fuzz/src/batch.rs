//! Target `batch`: the records of one partition of a Produce request, as
//! the produce path checks them before anything is written: the batch
//! split and header/CRC validation, the offset range against the record
//! count, then the idempotent-producer checks;
//! with a flag, the whole `Partition::append` onto a fresh partition.
//!
//! Input: one flags byte, then the records bytes.
//! - bit 0: rewrite each batch's CRC first (see `crc`), to get past it;
//! - bit 1: also append to a partition on disk and read it back.

use crate::{crc, partition, scratch};
use kbench_broker_core::storage::batch::{self, split_and_validate, BatchHeader};
use kbench_broker_core::storage::producer_state::{self, ProducerStateTable, Verdict};
use kbench_broker_core::storage::segment::DEFAULT_INDEX_INTERVAL;
use kbench_broker_core::storage::Appended;

pub const FIX_CRCS: u8 = 1;
pub const APPEND: u8 = 2;

pub fn run(input: &[u8]) {
    let Some((&flags, records)) = input.split_first() else {
        return;
    };
    let mut records = records.to_vec();
    if flags & FIX_CRCS != 0 {
        crc::fix_crcs(&mut records);
    }
    let Ok(batches) = split_and_validate(&records) else {
        return;
    };
    check_split(&records, &batches);
    // The produce path refuses a batch whose offset range is not its record count.
    if batches
        .iter()
        .any(|(_, header)| batch::check_offset_range(header).is_err())
    {
        return;
    }
    if !check_producers(&records, &batches) {
        return;
    }
    if flags & APPEND != 0 {
        append_and_read_back(&records, &batches);
    }
}

/// The split covers the payload exactly, batch after batch, each valid.
fn check_split(records: &[u8], batches: &[(usize, BatchHeader)]) {
    let mut end = 0;
    for (at, header) in batches {
        assert_eq!(*at, end, "batches not back to back");
        let whole = &records[*at..*at + header.size];
        assert_eq!(
            batch::validate(whole).ok(),
            Some(*header),
            "split disagrees with validate"
        );
        end += header.size;
    }
    assert_eq!(end, records.len(), "split left bytes over");
}

/// What `Partition::append` does with a fresh producer state: check, assign
/// offsets from 0, record; then a retry of an idempotent batch must come
/// back as a duplicate with the same offsets, and the state must survive a
/// snapshot round trip. False when the payload is refused.
fn check_producers(records: &[u8], batches: &[(usize, BatchHeader)]) -> bool {
    let sent = producer_state::with_bytes(records, batches);
    let mut table = ProducerStateTable::default();
    table.mark_loaded();
    match table.check(&sent) {
        Ok(Verdict::Append) => {}
        Ok(Verdict::Duplicate(d)) => panic!("an empty producer state found a duplicate {d:?}"),
        Err(_) => return false,
    }
    let mut chunk = records.to_vec();
    let mut assigned = batches.to_vec();
    let mut next = 0i64;
    for (at, header) in assigned.iter_mut() {
        batch::set_base_offset(&mut chunk[*at..], next);
        header.base_offset = next;
        next = header.next_offset();
    }
    table.record_appended(&producer_state::with_bytes(&chunk, &assigned));
    if producer_state::any_idempotent(&sent) {
        let expected = Appended {
            base_offset: 0,
            last_offset: next - 1,
        };
        match table.check(&sent) {
            Ok(Verdict::Duplicate(d)) => assert_eq!(d, expected, "duplicate with other offsets"),
            other => panic!("a retried idempotent batch was not a duplicate: {other:?}"),
        }
    }
    let snapshot = table.encode_snapshot(next);
    let restored = ProducerStateTable::decode_snapshot(&snapshot, next)
        .expect("a snapshot just written does not decode");
    assert_eq!(
        restored.encode_snapshot(next),
        snapshot,
        "snapshot round trip differs"
    );
    true
}

/// Appends to an empty partition and reads the batches back: the same
/// bytes, with base offsets from 0 and leader epoch 0 stamped in.
fn append_and_read_back(records: &[u8], batches: &[(usize, BatchHeader)]) {
    let dir = scratch::fresh_dir("batch");
    let partition =
        partition::open(&dir, false, DEFAULT_INDEX_INTERVAL).expect("opening an empty partition");
    let appended = partition
        .append(records)
        .expect("appending batches that validated");
    let mut expected = records.to_vec();
    let mut next = 0i64;
    for (at, header) in batches {
        batch::set_base_offset(&mut expected[*at..], next);
        batch::set_leader_epoch(&mut expected[*at..], 0);
        next += i64::from(header.last_offset_delta) + 1;
    }
    let offsets = Appended {
        base_offset: 0,
        last_offset: next - 1,
    };
    assert_eq!(appended, offsets, "append returned other offsets");
    assert_eq!(partition.log_end_offset(), next, "log end after append");
    assert_eq!(
        partition::read_all(&partition),
        expected,
        "read back other bytes"
    );
}
