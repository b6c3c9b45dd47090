//! Idempotent-producer state of one partition: for each producer id, its
//! epoch and the last five batches' sequence ranges and offsets, so that a
//! retried batch is acknowledged with its original offset instead of being
//! appended twice, and a gap in sequences is refused.
//!
//! The rules follow Kafka 2.5+ (KIP-360): a producer the partition has no
//! state for may start at any sequence, so UNKNOWN_PRODUCER_ID is never
//! returned.
//!
//! The state is snapshotted to `<offset, 20 digits>.snapshot` in the
//! partition directory at every segment roll and at a clean shutdown; a
//! snapshot holds the state after every batch below its offset. After the
//! partition is opened, the state is loaded on first need from the newest
//! snapshot at or below the log end, then the batches from its offset to
//! the log end are replayed (see `Partition::append`).
//!
//! Snapshot format: `KBPS`, version 1 (u8), CRC-32C (u32) of the rest,
//! the offset (i64), the producer count (u32), then per producer its id
//! (i64), epoch (i16), batch count (u8) and per batch its first and last
//! sequence (i32) and first and last offset (i64), all big-endian.

use super::batch::{Appended, BatchHeader, HEADER_SIZE};
use crate::error::{Error, Result};
use kafka_protocol::ResponseError;
use std::collections::{HashMap, VecDeque};

const SNAPSHOT_MAGIC: &[u8; 4] = b"KBPS";
const SNAPSHOT_VERSION: u8 = 1;
/// Magic, version and CRC.
const SNAPSHOT_PREFIX: usize = 9;

pub fn snapshot_file_name(offset: i64) -> String {
    format!("{offset:020}.snapshot")
}

/// Kafka keeps this many batches per producer for duplicate detection, and
/// the Java producer allows at most this many in flight with idempotence.
pub const BATCHES_KEPT: usize = 5;

const ATTRIBUTES_AT: usize = 21;
const PRODUCER_ID_AT: usize = 43;
const PRODUCER_EPOCH_AT: usize = 51;
const BASE_SEQUENCE_AT: usize = 53;
const TRANSACTIONAL_FLAG: i16 = 0x10;
const CONTROL_FLAG: i16 = 0x20;

/// The producer fields of one v2 batch header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerFields {
    pub producer_id: i64,
    pub epoch: i16,
    pub base_sequence: i32,
    pub transactional: bool,
    pub control: bool,
}

impl ProducerFields {
    /// Reads the fields from a batch that `BatchHeader::parse` accepted.
    pub fn parse(batch: &[u8]) -> ProducerFields {
        debug_assert!(batch.len() >= HEADER_SIZE);
        let attributes = i16::from_be_bytes([batch[ATTRIBUTES_AT], batch[ATTRIBUTES_AT + 1]]);
        let mut id = [0u8; 8];
        id.copy_from_slice(&batch[PRODUCER_ID_AT..PRODUCER_ID_AT + 8]);
        let mut seq = [0u8; 4];
        seq.copy_from_slice(&batch[BASE_SEQUENCE_AT..BASE_SEQUENCE_AT + 4]);
        ProducerFields {
            producer_id: i64::from_be_bytes(id),
            epoch: i16::from_be_bytes([batch[PRODUCER_EPOCH_AT], batch[PRODUCER_EPOCH_AT + 1]]),
            base_sequence: i32::from_be_bytes(seq),
            transactional: attributes & TRANSACTIONAL_FLAG != 0,
            control: attributes & CONTROL_FLAG != 0,
        }
    }

    /// A batch without a producer id takes no part in idempotence.
    pub fn is_idempotent(&self) -> bool {
        self.producer_id >= 0
    }
}

/// Sequence of the last record: sequences wrap from i32::MAX to 0.
pub fn last_sequence(base_sequence: i32, last_offset_delta: i32) -> i32 {
    let last = i64::from(base_sequence) + i64::from(last_offset_delta);
    if last > i64::from(i32::MAX) {
        (last - i64::from(i32::MAX) - 1) as i32
    } else {
        last as i32
    }
}

fn in_sequence(last: i32, next: i32) -> bool {
    next == last.wrapping_add(1) && last != i32::MAX || (last == i32::MAX && next == 0)
}

/// One appended batch, as remembered for duplicate detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BatchMeta {
    first_seq: i32,
    last_seq: i32,
    first_offset: i64,
    last_offset: i64,
}

#[derive(Debug, Clone, Default)]
struct ProducerEntry {
    epoch: i16,
    batches: VecDeque<BatchMeta>,
}

/// What to do with a produce payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Append it.
    Append,
    /// Already in the log: acknowledge these offsets, append nothing.
    Duplicate(Appended),
}

#[derive(Debug, Default)]
pub struct ProducerStateTable {
    producers: HashMap<i64, ProducerEntry>,
    /// False until the state was rebuilt from the log after opening.
    loaded: bool,
}

impl ProducerStateTable {
    pub fn is_loaded(&self) -> bool {
        self.loaded
    }

    /// Replays already-appended batches (oldest first) and marks the state loaded.
    pub fn load<'a>(&mut self, batches: impl IntoIterator<Item = (&'a [u8], BatchHeader)>) {
        self.replay(batches);
        self.loaded = true;
    }

    fn replay<'a>(&mut self, batches: impl IntoIterator<Item = (&'a [u8], BatchHeader)>) {
        for (bytes, header) in batches {
            let fields = ProducerFields::parse(bytes);
            if fields.is_idempotent() && !fields.control {
                self.record(&fields, &header);
            }
        }
    }

    /// Decides whether the batches of one produce payload (`(bytes, header)`
    /// pairs, offsets not yet assigned) may be appended.
    pub fn check(&self, batches: &[(&[u8], BatchHeader)]) -> Result<Verdict> {
        let fields: Vec<ProducerFields> = batches
            .iter()
            .map(|(bytes, _)| ProducerFields::parse(bytes))
            .collect();
        if fields.iter().any(|f| f.transactional || f.control) {
            return Err(Error::kafka(
                ResponseError::InvalidTxnState,
                "transactions are not supported by this broker",
            ));
        }
        if !fields.iter().any(ProducerFields::is_idempotent) {
            return Ok(Verdict::Append);
        }
        if batches.len() != 1 {
            return Err(Error::kafka(
                ResponseError::InvalidRecord,
                "an idempotent produce must carry exactly one batch per partition",
            ));
        }
        let (f, header) = (fields[0], batches[0].1);
        let Some(entry) = self.producers.get(&f.producer_id) else {
            // Unknown producer (new, or its batches left the log): any
            // sequence is accepted, as in Kafka 2.5+.
            return Ok(Verdict::Append);
        };
        if f.epoch < entry.epoch {
            return Err(Error::kafka(
                ResponseError::InvalidProducerEpoch,
                format!(
                    "producer {} epoch {} is older than the current epoch {}",
                    f.producer_id, f.epoch, entry.epoch
                ),
            ));
        }
        let last_seq = last_sequence(f.base_sequence, header.last_offset_delta);
        if f.epoch > entry.epoch {
            if f.base_sequence != 0 {
                return Err(Error::kafka(
                    ResponseError::OutOfOrderSequenceNumber,
                    format!(
                        "producer {} new epoch {} must start at sequence 0, not {}",
                        f.producer_id, f.epoch, f.base_sequence
                    ),
                ));
            }
            return Ok(Verdict::Append);
        }
        if let Some(dup) = entry
            .batches
            .iter()
            .find(|b| b.first_seq == f.base_sequence && b.last_seq == last_seq)
        {
            return Ok(Verdict::Duplicate(Appended {
                base_offset: dup.first_offset,
                last_offset: dup.last_offset,
            }));
        }
        match entry.batches.back() {
            Some(last) if !in_sequence(last.last_seq, f.base_sequence) => Err(Error::kafka(
                ResponseError::OutOfOrderSequenceNumber,
                format!(
                    "producer {} sent sequence {} after {} (epoch {})",
                    f.producer_id, f.base_sequence, last.last_seq, f.epoch
                ),
            )),
            _ => Ok(Verdict::Append),
        }
    }

    /// Remembers appended batches (offsets assigned).
    pub fn record_appended(&mut self, batches: &[(&[u8], BatchHeader)]) {
        for (bytes, header) in batches {
            let fields = ProducerFields::parse(bytes);
            if fields.is_idempotent() {
                self.record(&fields, header);
            }
        }
    }

    fn record(&mut self, f: &ProducerFields, header: &BatchHeader) {
        let entry = self.producers.entry(f.producer_id).or_default();
        if f.epoch != entry.epoch {
            entry.epoch = f.epoch;
            entry.batches.clear();
        }
        if entry.batches.len() == BATCHES_KEPT {
            entry.batches.pop_front();
        }
        entry.batches.push_back(BatchMeta {
            first_seq: f.base_sequence,
            last_seq: last_sequence(f.base_sequence, header.last_offset_delta),
            first_offset: header.base_offset,
            last_offset: header.last_offset(),
        });
    }

    pub fn producer_count(&self) -> usize {
        self.producers.len()
    }

    /// Forgets everything, to be loaded again (after a truncation).
    pub fn reset(&mut self) {
        self.producers.clear();
        self.loaded = false;
    }

    /// Marks an empty table as loaded (a partition without batches).
    pub fn mark_loaded(&mut self) {
        self.loaded = true;
    }

    /// The snapshot file's bytes for this state, valid up to `offset`.
    pub fn encode_snapshot(&self, offset: i64) -> Vec<u8> {
        let mut body = Vec::with_capacity(12 + self.producers.len() * (11 + 24 * BATCHES_KEPT));
        body.extend_from_slice(&offset.to_be_bytes());
        body.extend_from_slice(&(self.producers.len() as u32).to_be_bytes());
        let mut ids: Vec<&i64> = self.producers.keys().collect();
        ids.sort_unstable();
        for id in ids {
            let entry = &self.producers[id];
            body.extend_from_slice(&id.to_be_bytes());
            body.extend_from_slice(&entry.epoch.to_be_bytes());
            body.push(entry.batches.len() as u8);
            for b in &entry.batches {
                body.extend_from_slice(&b.first_seq.to_be_bytes());
                body.extend_from_slice(&b.last_seq.to_be_bytes());
                body.extend_from_slice(&b.first_offset.to_be_bytes());
                body.extend_from_slice(&b.last_offset.to_be_bytes());
            }
        }
        let mut out = Vec::with_capacity(SNAPSHOT_PREFIX + body.len());
        out.extend_from_slice(SNAPSHOT_MAGIC);
        out.push(SNAPSHOT_VERSION);
        out.extend_from_slice(&crc32c::crc32c(&body).to_be_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// Reads a snapshot written by `encode_snapshot` for `offset`; None
    /// when it is torn, corrupt, or for another offset. The table is not
    /// marked loaded (batches after the snapshot are still to be replayed).
    pub fn decode_snapshot(bytes: &[u8], offset: i64) -> Option<ProducerStateTable> {
        if bytes.len() < SNAPSHOT_PREFIX
            || &bytes[..4] != SNAPSHOT_MAGIC
            || bytes[4] != SNAPSHOT_VERSION
        {
            return None;
        }
        let body = &bytes[SNAPSHOT_PREFIX..];
        if u32::from_be_bytes(bytes[5..9].try_into().ok()?) != crc32c::crc32c(body) {
            return None;
        }
        let mut r = Reader(body);
        if r.i64()? != offset {
            return None;
        }
        let count = r.u32()? as usize;
        let mut table = ProducerStateTable::default();
        for _ in 0..count {
            let id = r.i64()?;
            let epoch = r.i16()?;
            let n = r.u8()? as usize;
            let mut batches = VecDeque::with_capacity(n);
            for _ in 0..n {
                batches.push_back(BatchMeta {
                    first_seq: r.i32()?,
                    last_seq: r.i32()?,
                    first_offset: r.i64()?,
                    last_offset: r.i64()?,
                });
            }
            table.producers.insert(id, ProducerEntry { epoch, batches });
        }
        r.0.is_empty().then_some(table)
    }
}

/// Big-endian reads from the front of a slice.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    fn i16(&mut self) -> Option<i16> {
        self.take().map(i16::from_be_bytes)
    }
    fn i32(&mut self) -> Option<i32> {
        self.take().map(i32::from_be_bytes)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_be_bytes)
    }
    fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_be_bytes)
    }
}

/// Pairs each batch header with its bytes in `records`.
pub fn with_bytes<'a>(
    records: &'a [u8],
    batches: &[(usize, BatchHeader)],
) -> Vec<(&'a [u8], BatchHeader)> {
    batches
        .iter()
        .map(|(at, header)| (&records[*at..*at + header.size], *header))
        .collect()
}

pub fn any_idempotent(batches: &[(&[u8], BatchHeader)]) -> bool {
    batches
        .iter()
        .any(|(bytes, _)| ProducerFields::parse(bytes).is_idempotent())
}

/// Loads `table` from the batches in `[start, end)`, read a chunk at a
/// time with `read(offset)` (whole batches from that offset).
pub fn rebuild(
    table: &mut ProducerStateTable,
    start: i64,
    end: i64,
    mut read: impl FnMut(i64) -> Result<bytes::Bytes>,
) -> Result<()> {
    let mut offset = start;
    while offset < end {
        let chunk = read(offset)?;
        let mut at = 0;
        let mut batches = Vec::new();
        while at + HEADER_SIZE <= chunk.len() {
            let header = BatchHeader::parse(&chunk[at..])?;
            if at + header.size > chunk.len() {
                break;
            }
            if header.last_offset() >= offset {
                batches.push((&chunk[at..at + header.size], header));
            }
            at += header.size;
        }
        let Some(last) = batches.last() else {
            break;
        };
        offset = last.1.next_offset();
        table.replay(batches);
    }
    table.loaded = true;
    Ok(())
}

#[cfg(test)]
pub(crate) mod test_support {
    use crate::storage::batch::test_support::encode;
    use bytes::Bytes;
    use kafka_protocol::indexmap::IndexMap;
    use kafka_protocol::records::{Record, TimestampType};

    /// One v2 batch of `count` records from producer `id` at `epoch`,
    /// starting at sequence `seq`.
    pub fn idempotent_batch(id: i64, epoch: i16, seq: i32, count: usize) -> Vec<u8> {
        producer_batch(id, epoch, seq, count, false)
    }

    pub fn producer_batch(
        id: i64,
        epoch: i16,
        seq: i32,
        count: usize,
        transactional: bool,
    ) -> Vec<u8> {
        let records: Vec<Record> = (0..count)
            .map(|i| Record {
                transactional,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: 0,
                producer_id: id,
                producer_epoch: epoch,
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                sequence: seq.wrapping_add(i as i32),
                timestamp: 1_700_000_000_000 + i as i64,
                key: None,
                value: Some(Bytes::from(format!("value-{i}"))),
                headers: IndexMap::new(),
            })
            .collect();
        encode(&records)
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{idempotent_batch, producer_batch};
    use super::*;
    use crate::storage::batch::validate;

    fn check(table: &ProducerStateTable, bytes: &[u8]) -> Result<Verdict> {
        let header = validate(bytes).unwrap();
        table.check(&[(bytes, header)])
    }

    fn append(table: &mut ProducerStateTable, bytes: &[u8], base_offset: i64) {
        let mut header = validate(bytes).unwrap();
        header.base_offset = base_offset;
        table.record_appended(&[(bytes, header)]);
    }

    #[test]
    fn header_fields_are_read_from_the_batch() {
        let bytes = idempotent_batch(42, 3, 7, 2);
        let f = ProducerFields::parse(&bytes);
        assert_eq!((f.producer_id, f.epoch, f.base_sequence), (42, 3, 7));
        assert!(!f.transactional);
        assert!(ProducerFields::parse(&producer_batch(1, 0, 0, 1, true)).transactional);
    }

    #[test]
    fn retried_batch_is_a_duplicate_with_its_first_offsets() {
        let mut table = ProducerStateTable::default();
        let first = idempotent_batch(1, 0, 0, 3);
        append(&mut table, &first, 10);
        assert_eq!(
            check(&table, &first).unwrap(),
            Verdict::Duplicate(Appended {
                base_offset: 10,
                last_offset: 12
            })
        );
    }

    #[test]
    fn next_sequence_is_appended() {
        let mut table = ProducerStateTable::default();
        append(&mut table, &idempotent_batch(1, 0, 0, 3), 0);
        assert_eq!(
            check(&table, &idempotent_batch(1, 0, 3, 1)).unwrap(),
            Verdict::Append
        );
    }

    #[test]
    fn gap_in_sequence_is_out_of_order() {
        let mut table = ProducerStateTable::default();
        append(&mut table, &idempotent_batch(1, 0, 0, 3), 0);
        let err = check(&table, &idempotent_batch(1, 0, 5, 1)).unwrap_err();
        assert_eq!(err.code(), ResponseError::OutOfOrderSequenceNumber.code());
    }

    #[test]
    fn older_epoch_is_invalid_producer_epoch() {
        let mut table = ProducerStateTable::default();
        append(&mut table, &idempotent_batch(1, 2, 0, 1), 0);
        let err = check(&table, &idempotent_batch(1, 1, 1, 1)).unwrap_err();
        assert_eq!(err.code(), ResponseError::InvalidProducerEpoch.code());
    }

    #[test]
    fn new_epoch_must_restart_at_sequence_zero() {
        let mut table = ProducerStateTable::default();
        append(&mut table, &idempotent_batch(1, 0, 0, 1), 0);
        assert_eq!(
            check(&table, &idempotent_batch(1, 1, 0, 1)).unwrap(),
            Verdict::Append
        );
        let err = check(&table, &idempotent_batch(1, 1, 4, 1)).unwrap_err();
        assert_eq!(err.code(), ResponseError::OutOfOrderSequenceNumber.code());
    }

    #[test]
    fn unknown_producer_may_start_at_any_sequence() {
        let table = ProducerStateTable::default();
        assert_eq!(
            check(&table, &idempotent_batch(9, 0, 17, 1)).unwrap(),
            Verdict::Append
        );
    }

    #[test]
    fn only_the_last_five_batches_are_remembered() {
        let mut table = ProducerStateTable::default();
        for i in 0..6 {
            append(&mut table, &idempotent_batch(1, 0, i, 1), i64::from(i));
        }
        // Sequence 0 fell out of the window: no longer a duplicate.
        let err = check(&table, &idempotent_batch(1, 0, 0, 1)).unwrap_err();
        assert_eq!(err.code(), ResponseError::OutOfOrderSequenceNumber.code());
        assert!(matches!(
            check(&table, &idempotent_batch(1, 0, 1, 1)).unwrap(),
            Verdict::Duplicate(_)
        ));
    }

    #[test]
    fn transactional_batch_is_rejected() {
        let table = ProducerStateTable::default();
        let err = check(&table, &producer_batch(1, 0, 0, 1, true)).unwrap_err();
        assert_eq!(err.code(), ResponseError::InvalidTxnState.code());
    }

    #[test]
    fn sequence_wraps_after_i32_max() {
        assert_eq!(last_sequence(i32::MAX, 0), i32::MAX);
        assert_eq!(last_sequence(i32::MAX, 1), 0);
        assert_eq!(last_sequence(i32::MAX - 1, 3), 1);
        assert!(in_sequence(i32::MAX, 0));
        assert!(in_sequence(4, 5));
        assert!(!in_sequence(4, 6));
    }

    #[test]
    fn a_snapshot_round_trips_and_a_damaged_one_is_refused() {
        let mut table = ProducerStateTable::default();
        append(&mut table, &idempotent_batch(1, 0, 0, 3), 10);
        append(&mut table, &idempotent_batch(1, 0, 3, 2), 13);
        append(&mut table, &idempotent_batch(2, 4, 0, 1), 15);
        let bytes = table.encode_snapshot(16);
        let loaded = ProducerStateTable::decode_snapshot(&bytes, 16).unwrap();
        assert!(!loaded.is_loaded());
        assert_eq!(loaded.producer_count(), 2);
        assert_eq!(
            check(&loaded, &idempotent_batch(1, 0, 0, 3)).unwrap(),
            Verdict::Duplicate(Appended {
                base_offset: 10,
                last_offset: 12
            })
        );
        let err = check(&loaded, &idempotent_batch(2, 3, 1, 1)).unwrap_err();
        assert_eq!(err.code(), ResponseError::InvalidProducerEpoch.code());
        assert!(ProducerStateTable::decode_snapshot(&bytes, 17).is_none());
        assert!(ProducerStateTable::decode_snapshot(&bytes[..bytes.len() - 1], 16).is_none());
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        assert!(ProducerStateTable::decode_snapshot(&flipped, 16).is_none());
        let empty = ProducerStateTable::default().encode_snapshot(0);
        assert_eq!(
            ProducerStateTable::decode_snapshot(&empty, 0)
                .unwrap()
                .producer_count(),
            0
        );
    }

    #[test]
    fn load_replays_the_log_and_marks_loaded() {
        let mut first = idempotent_batch(5, 0, 0, 2);
        crate::storage::batch::set_base_offset(&mut first, 100);
        let header = validate(&first).unwrap();
        let mut table = ProducerStateTable::default();
        table.load([(&first[..], header)]);
        assert!(table.is_loaded());
        assert_eq!(table.producer_count(), 1);
        assert_eq!(
            check(&table, &idempotent_batch(5, 0, 0, 2)).unwrap(),
            Verdict::Duplicate(Appended {
                base_offset: 100,
                last_offset: 101
            })
        );
    }
}
