//! Storage durability through the public API: the clean-shutdown marker a
//! stopped broker leaves, crash recovery without it, and fsync counting.

use bytes::{Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use kbench_broker_core::storage::shared::CLEAN_SHUTDOWN_FILE;
use kbench_broker_core::storage::{Log, LogConfig};
use kbench_broker_core::{start, BrokerConfig, FsyncPolicy};
use std::path::Path;

/// One uncompressed v2 batch of `count` records of `value_len` bytes.
fn batch(count: usize, value_len: usize) -> Vec<u8> {
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
            timestamp: 1_700_000_000_000 + i as i64,
            key: None,
            value: Some(Bytes::from(vec![b'v'; value_len])),
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
    .unwrap();
    buf.to_vec()
}

fn segment(dir: &Path, topic_partition: &str) -> std::path::PathBuf {
    dir.join(topic_partition).join("00000000000000000000.log")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_broker_restarts_without_scanning_and_a_crashed_one_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let handle = start(BrokerConfig::new(dir.path())).await.unwrap();
    let log = &handle.broker().log;
    log.create_topic("t", 3, false).unwrap();
    for p in 0..3 {
        for _ in 0..10 {
            log.partition("t", p)
                .unwrap()
                .append(&batch(5, 100))
                .unwrap();
        }
    }
    handle.stop().await.unwrap();
    assert!(dir.path().join(CLEAN_SHUTDOWN_FILE).exists());
    drop(handle);

    {
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        let recovery = log.recovery();
        assert!(recovery.clean_shutdown);
        assert_eq!(recovery.report.partitions, 3);
        assert_eq!(recovery.report.scanned_segments, 0);
        assert!(!dir.path().join(CLEAN_SHUTDOWN_FILE).exists());
        let p = log.partition("t", 2).unwrap();
        assert_eq!(p.log_end_offset(), 50);
        assert_eq!(p.append(&batch(1, 10)).unwrap().base_offset, 50);
        // Dropped without a flush, as in a kill -9; then a torn write.
    }
    let torn = batch(5, 100);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(segment(dir.path(), "t-2"))
        .unwrap();
    std::io::Write::write_all(&mut file, &torn[..torn.len() / 3]).unwrap();
    drop(file);

    let log = Log::open(dir.path(), LogConfig::default()).unwrap();
    let recovery = log.recovery();
    assert!(!recovery.clean_shutdown);
    assert_eq!(recovery.report.scanned_segments, 3);
    assert_eq!(recovery.report.truncated_bytes, (torn.len() / 3) as u64);
    assert_eq!(log.partition("t", 2).unwrap().log_end_offset(), 51);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fsync_batch_counts_one_fsync_per_append_in_the_broker_stats() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = BrokerConfig::new(dir.path());
    config.fsync = FsyncPolicy::parse("batch").unwrap();
    let handle = start(config).await.unwrap();
    let log = &handle.broker().log;
    log.create_topic("t", 1, false).unwrap();
    let partition = log.partition("t", 0).unwrap();
    // Each append waits for its sync (off the tokio workers) before the next.
    for _ in 0..3 {
        let (_, durability) = partition.append_pending(&batch(2, 10)).unwrap();
        durability.wait().await.unwrap();
    }
    let stats = handle.stats();
    assert_eq!(stats.fsyncs, 3);
    assert!(stats.fsync_micros_max <= stats.fsync_micros_total);
    handle.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_fsync_policy_leaves_appends_to_the_page_cache() {
    let dir = tempfile::tempdir().unwrap();
    let handle = start(BrokerConfig::new(dir.path())).await.unwrap();
    let log = &handle.broker().log;
    log.create_topic("t", 1, false).unwrap();
    for _ in 0..3 {
        log.partition("t", 0)
            .unwrap()
            .append(&batch(2, 10))
            .unwrap();
    }
    assert_eq!(handle.stats().fsyncs, 0);
    // The clean stop syncs what was written: one fdatasync.
    handle.stop().await.unwrap();
    assert_eq!(handle.stats().fsyncs, 1);
}
