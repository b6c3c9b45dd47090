//! Record batch (magic v2) header checks and offset assignment, without
//! decoding the records.

use crate::error::{Error, Result};
use kafka_protocol::ResponseError;

/// Bytes before `batch_length` ends: base offset (8) + batch length (4).
pub const LOG_OVERHEAD: usize = 12;
/// Size of a v2 batch header up to and including the record count.
pub const HEADER_SIZE: usize = 61;

const BATCH_LENGTH_AT: usize = 8;
/// `partition_leader_epoch`: after the batch length, outside the CRC.
pub const LEADER_EPOCH_AT: usize = 12;
const MAGIC_AT: usize = 16;
const CRC_AT: usize = 17;
pub const ATTRIBUTES_AT: usize = 21;
/// The timestamp-type bit of the attributes' low byte: set, the max
/// timestamp is the time the log appended the batch.
pub const LOG_APPEND_TIME_FLAG: u8 = 0x08;
const LAST_OFFSET_DELTA_AT: usize = 23;
const MAX_TIMESTAMP_AT: usize = 35;
/// The record count: the header's last field.
const RECORD_COUNT_AT: usize = 57;

/// Offsets of one successful append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    pub base_offset: i64,
    pub last_offset: i64,
}

/// The header fields the log needs from one batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: i64,
    /// Whole batch size on disk, including the 12-byte log overhead.
    pub size: usize,
    pub last_offset_delta: i32,
    pub max_timestamp: i64,
    /// The leader epoch the batch was appended in (-1: none).
    pub leader_epoch: i32,
    /// How many records the batch says it holds.
    pub record_count: i32,
}

impl BatchHeader {
    /// Saturates rather than overflows: a header read from a damaged file
    /// can claim any base offset.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .saturating_add(i64::from(self.last_offset_delta))
    }

    pub fn next_offset(&self) -> i64 {
        self.last_offset().saturating_add(1)
    }

    /// Whether every offset of the batch lies in the 32-bit range of a
    /// segment based at `segment_base` (the indexes store offsets relative
    /// to it), as Kafka's recovery requires.
    pub fn fits_segment(&self, segment_base: i64) -> bool {
        self.base_offset >= segment_base
            && self.last_offset_delta >= 0
            && self
                .last_offset()
                .checked_sub(segment_base)
                .is_some_and(|relative| relative < i64::from(u32::MAX))
    }

    /// Reads the header fields from the start of `buf` (at least
    /// `HEADER_SIZE` bytes). Checks sizes, not the CRC.
    pub fn parse(buf: &[u8]) -> Result<BatchHeader> {
        if buf.len() < HEADER_SIZE {
            return Err(corrupt("batch shorter than its header"));
        }
        if buf[MAGIC_AT] != 2 {
            return Err(corrupt(format!("unsupported magic {}", buf[MAGIC_AT])));
        }
        let batch_length = i32::from_be_bytes(be4(buf, BATCH_LENGTH_AT));
        if (batch_length as i64) < (HEADER_SIZE - LOG_OVERHEAD) as i64 {
            return Err(corrupt(format!("batch length {batch_length} too small")));
        }
        let last_offset_delta = i32::from_be_bytes(be4(buf, LAST_OFFSET_DELTA_AT));
        if last_offset_delta < 0 {
            return Err(corrupt("negative last offset delta"));
        }
        Ok(BatchHeader {
            base_offset: i64::from_be_bytes(be8(buf, 0)),
            size: LOG_OVERHEAD + batch_length as usize,
            last_offset_delta,
            max_timestamp: i64::from_be_bytes(be8(buf, MAX_TIMESTAMP_AT)),
            leader_epoch: i32::from_be_bytes(be4(buf, LEADER_EPOCH_AT)),
            record_count: i32::from_be_bytes(be4(buf, RECORD_COUNT_AT)),
        })
    }
}

/// Checks one whole batch (header sizes and CRC-32C) and returns its header.
pub fn validate(batch: &[u8]) -> Result<BatchHeader> {
    let header = BatchHeader::parse(batch)?;
    if header.size != batch.len() {
        return Err(corrupt(format!(
            "batch length says {} bytes, have {}",
            header.size,
            batch.len()
        )));
    }
    let stored = u32::from_be_bytes(be4(batch, CRC_AT));
    let computed = crc32c::crc32c(&batch[ATTRIBUTES_AT..]);
    if stored != computed {
        return Err(corrupt(format!(
            "crc mismatch: stored {stored:#x}, computed {computed:#x}"
        )));
    }
    Ok(header)
}

/// Refuses a payload holding a batch larger than `max_message_bytes`
/// (MESSAGE_TOO_LARGE), reading only the batch headers; a damaged header is
/// CORRUPT_MESSAGE.
pub fn check_batch_sizes(records: &[u8], max_message_bytes: usize) -> Result<()> {
    let mut at = 0;
    while at + HEADER_SIZE <= records.len() {
        let size = BatchHeader::parse(&records[at..])?.size;
        if size > max_message_bytes {
            return Err(Error::kafka(
                ResponseError::MessageTooLarge,
                format!(
                    "record batch of {size} bytes exceeds max.message.bytes {max_message_bytes}"
                ),
            ));
        }
        at += size;
    }
    Ok(())
}

/// A copy of `records` with each (valid) batch marked LogAppendTime and
/// `now` as its max timestamp, as Kafka does, its CRC recomputed.
pub fn stamp_log_append_time(records: &[u8], now: i64) -> Result<Vec<u8>> {
    let batches = split_and_validate(records)?;
    let mut out = records.to_vec();
    for (at, header) in batches {
        let batch = &mut out[at..at + header.size];
        batch[ATTRIBUTES_AT + 1] |= LOG_APPEND_TIME_FLAG;
        batch[MAX_TIMESTAMP_AT..MAX_TIMESTAMP_AT + 8].copy_from_slice(&now.to_be_bytes());
        let crc = crc32c::crc32c(&batch[ATTRIBUTES_AT..]);
        batch[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_be_bytes());
    }
    Ok(out)
}

/// Splits a produce payload into batches, validating each one.
pub fn split_and_validate(records: &[u8]) -> Result<Vec<(usize, BatchHeader)>> {
    let mut batches = Vec::new();
    let mut at = 0;
    while at < records.len() {
        let rest = &records[at..];
        if rest.len() < HEADER_SIZE {
            return Err(corrupt("trailing bytes shorter than a batch header"));
        }
        let header = BatchHeader::parse(rest)?;
        if header.size > rest.len() {
            return Err(corrupt("batch truncated"));
        }
        validate(&rest[..header.size])?;
        batches.push((at, header));
        at += header.size;
    }
    if batches.is_empty() {
        return Err(corrupt("no record batches"));
    }
    Ok(batches)
}

/// Refuses a client's batch whose offset range is not its record count, as Kafka does
/// (INVALID_RECORD): the log gives a batch as many offsets as its last offset delta says, so a
/// batch of no records claiming 2^31 offsets took them, and the next one landed past what a
/// segment's 32-bit relative offsets hold (a recovery then cut it, acknowledged).
pub fn check_offset_range(header: &BatchHeader) -> Result<()> {
    let count = header.record_count;
    let from_offsets = i64::from(header.last_offset_delta) + 1;
    let refuse = |message: String| Err(Error::kafka(ResponseError::InvalidRecord, message));
    if count <= 0 {
        return refuse(format!("Invalid reported count for record batch: {count}"));
    }
    if from_offsets != i64::from(count) {
        return refuse(format!(
            "Inconsistent batch offset range (last offset delta {}) and count of records {count}",
            header.last_offset_delta
        ));
    }
    Ok(())
}

/// Rewrites the base offset (outside the CRC, so the CRC stays valid).
pub fn set_base_offset(batch: &mut [u8], base_offset: i64) {
    batch[..8].copy_from_slice(&base_offset.to_be_bytes());
}

/// Rewrites the partition leader epoch (outside the CRC as well).
pub fn set_leader_epoch(batch: &mut [u8], epoch: i32) {
    batch[LEADER_EPOCH_AT..LEADER_EPOCH_AT + 4].copy_from_slice(&epoch.to_be_bytes());
}

fn corrupt(message: impl Into<String>) -> Error {
    Error::kafka(ResponseError::CorruptMessage, message)
}

fn be4(buf: &[u8], at: usize) -> [u8; 4] {
    [buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]
}

fn be8(buf: &[u8], at: usize) -> [u8; 8] {
    let mut out = [0u8; 8];
    out.copy_from_slice(&buf[at..at + 8]);
    out
}

#[cfg(test)]
pub(crate) mod test_support {
    use bytes::{Bytes, BytesMut};
    use kafka_protocol::indexmap::IndexMap;
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };

    /// Encodes `count` records with values `value-<i>` as one v2 batch.
    pub fn batch(count: usize, value_len: usize) -> Vec<u8> {
        let records: Vec<Record> = (0..count)
            .map(|i| Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: 0,
                producer_id: -1,
                producer_epoch: -1,
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                sequence: i as i32,
                timestamp: 1_700_000_000_000 + i as i64,
                key: Some(Bytes::from(format!("key-{i}"))),
                value: Some(Bytes::from(vec![b'v'; value_len])),
                headers: IndexMap::new(),
            })
            .collect();
        encode(&records)
    }

    /// Encodes records as one uncompressed v2 batch, as a client would send it.
    pub fn encode(records: &[Record]) -> Vec<u8> {
        let mut buf = BytesMut::new();
        RecordBatchEncoder::encode(
            &mut buf,
            records,
            &RecordEncodeOptions {
                version: 2,
                compression: Compression::None,
            },
        )
        .unwrap();
        buf.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::batch;
    use super::*;

    #[test]
    fn a_batch_above_max_message_bytes_is_message_too_large() {
        let mut records = batch(2, 10);
        records.extend_from_slice(&batch(3, 100));
        let largest = split_and_validate(&records).unwrap()[1].1.size;
        check_batch_sizes(&records, largest).unwrap();
        let err = check_batch_sizes(&records, largest - 1).unwrap_err();
        assert_eq!(err.code(), ResponseError::MessageTooLarge.code());
    }

    #[test]
    fn a_stamped_batch_carries_the_time_and_a_valid_crc() {
        let stamped = stamp_log_append_time(&batch(2, 10), 1_234).unwrap();
        assert_eq!(validate(&stamped).unwrap().max_timestamp, 1_234);
        assert_eq!(
            stamped[ATTRIBUTES_AT + 1] & LOG_APPEND_TIME_FLAG,
            LOG_APPEND_TIME_FLAG
        );
    }

    #[test]
    fn good_batch_validates() {
        let bytes = batch(3, 10);
        let header = validate(&bytes).unwrap();
        assert_eq!(header.size, bytes.len());
        assert_eq!(header.last_offset_delta, 2);
    }

    #[test]
    fn bad_crc_is_corrupt_message() {
        let mut bytes = batch(3, 10);
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        let err = validate(&bytes).unwrap_err();
        assert_eq!(err.code(), ResponseError::CorruptMessage.code());
    }

    #[test]
    fn truncated_batch_is_corrupt_message() {
        let bytes = batch(3, 10);
        let err = split_and_validate(&bytes[..bytes.len() - 5]).unwrap_err();
        assert_eq!(err.code(), ResponseError::CorruptMessage.code());
    }

    #[test]
    fn wrong_magic_is_corrupt_message() {
        let mut bytes = batch(1, 10);
        bytes[MAGIC_AT] = 1;
        assert_eq!(
            validate(&bytes).unwrap_err().code(),
            ResponseError::CorruptMessage.code()
        );
    }

    #[test]
    fn patching_base_offset_keeps_crc_valid() {
        let mut bytes = batch(2, 10);
        set_base_offset(&mut bytes, 4242);
        let header = validate(&bytes).unwrap();
        assert_eq!(header.base_offset, 4242);
        assert_eq!(header.last_offset(), 4243);
    }

    #[test]
    fn stamping_the_leader_epoch_keeps_crc_valid() {
        let mut bytes = batch(2, 10);
        set_leader_epoch(&mut bytes, 7);
        assert_eq!(validate(&bytes).unwrap().leader_epoch, 7);
    }

    #[test]
    fn split_finds_every_batch() {
        let mut bytes = batch(2, 10);
        bytes.extend(batch(5, 20));
        let batches = split_and_validate(&bytes).unwrap();
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[1].1.last_offset_delta, 4);
    }
}
