//! Opening and reading partitions the way the broker does, for the targets
//! that go through storage.

use bytes::{Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use kbench_broker_core::storage::batch::{BatchHeader, HEADER_SIZE};
use kbench_broker_core::storage::journal::JournalKey;
use kbench_broker_core::storage::shared::LogShared;
use kbench_broker_core::storage::{LogConfig, Partition};
use kbench_broker_core::topic_config::TopicConfig;
use kbench_broker_core::Result;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, RwLock};

/// Opens the partition in `dir` as `Log::open` does, after a clean
/// shutdown (the last segment's index files trusted) or after a crash (its
/// batches scanned and a torn tail cut), with an index entry about every
/// `index_interval` bytes of log.
pub fn open(dir: &Path, clean_shutdown: bool, index_interval: u64) -> Result<Partition> {
    let shared = Arc::new(LogShared::new(Arc::new(AtomicU64::new(0)), None));
    Partition::open_in(
        dir,
        LogConfig {
            index_interval,
            ..LogConfig::default()
        },
        Arc::new(RwLock::new(TopicConfig::default())),
        shared,
        clean_shutdown,
        JournalKey {
            topic_id: Default::default(),
            partition: 0,
        },
    )
}

/// Every batch from the log start to the high watermark, read as fetches
/// read them (1 MiB at a time).
pub fn read_all(partition: &Partition) -> Vec<u8> {
    try_read_all(partition).expect("reading the whole partition")
}

/// `read_all`, with read errors returned.
pub fn try_read_all(partition: &Partition) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut offset = partition.log_start_offset();
    // A bound on reads, so that a log whose offsets do not advance ends.
    for _ in 0..10_000 {
        let read = partition.read(offset, 1 << 20, true)?;
        let Some(next) = next_offset(&read.records) else {
            break;
        };
        out.extend_from_slice(&read.records);
        if next <= offset {
            break;
        }
        offset = next;
    }
    Ok(out)
}

/// The offset after the last whole batch in `records`.
pub fn next_offset(records: &[u8]) -> Option<i64> {
    let mut at = 0;
    let mut next = None;
    while records.len() - at >= HEADER_SIZE {
        let header = BatchHeader::parse(&records[at..]).ok()?;
        if header.size > records.len() - at {
            break;
        }
        next = Some(
            header
                .base_offset
                .checked_add(i64::from(header.last_offset_delta) + 1)?,
        );
        at += header.size;
    }
    next
}

/// A valid batch of `count` records, as a client sends it.
pub fn client_batch(count: usize, timestamp: i64) -> Vec<u8> {
    let records: Vec<Record> = (0..count)
        .map(|i| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: -1,
            timestamp: timestamp + i as i64,
            key: None,
            value: Some(Bytes::from(format!("fuzz-{i}"))),
            headers: IndexMap::new(),
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &records,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .expect("encoding a record batch");
    buf.to_vec()
}
