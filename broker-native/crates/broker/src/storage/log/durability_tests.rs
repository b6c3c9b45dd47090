//! The fsync `batch` policy through a log and its journal: appends wait
//! for the journal's writes, share them across partitions, and fail as a
//! failed disk or a truncation says.

use crate::config::FsyncPolicy;
use crate::storage::batch::test_support::batch;
use crate::storage::{Log, LogConfig};
use kafka_protocol::ResponseError;
use std::path::Path;
use std::sync::atomic::Ordering;

/// A log under fsync `batch` with one topic "t" of `partitions`.
fn batch_log(dir: &Path, partitions: i32) -> Log {
    let log = Log::open(
        dir,
        LogConfig {
            fsync: FsyncPolicy::Batch,
            ..LogConfig::default()
        },
    )
    .unwrap();
    log.create_topic("t", partitions, false).unwrap();
    log
}

fn fsyncs(log: &Log) -> u64 {
    log.storage_stats().fsyncs.load(Ordering::Relaxed)
}

#[test]
fn a_batch_append_returns_once_its_journal_record_is_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let log = batch_log(dir.path(), 1);
    let partition = log.partition("t", 0).unwrap();
    partition.append(&batch(2, 10)).unwrap();
    assert_eq!(fsyncs(&log), 1);
    assert_eq!(partition.durable_end(), 2);
    // Durable through the journal: the segment itself is synced later,
    // when its journal file is retired.
    assert!(partition.active_is_unsynced());
    partition.append(&batch(2, 10)).unwrap();
    assert_eq!(fsyncs(&log), 2);
    let stats = log.storage_stats();
    assert!(
        stats.fsync_micros_max.load(Ordering::Relaxed)
            <= stats.fsync_micros_total.load(Ordering::Relaxed)
    );
    // Offsets already on disk need no write.
    partition.sync_through(4).unwrap();
    assert_eq!(fsyncs(&log), 2);
}

#[test]
fn appenders_to_different_partitions_share_journal_writes() {
    let dir = tempfile::tempdir().unwrap();
    let log = batch_log(dir.path(), 4);
    let partitions: Vec<_> = (0..4).map(|p| log.partition("t", p).unwrap()).collect();
    let written = || partitions.iter().map(|p| p.log_end_offset()).sum::<i64>();
    std::thread::scope(|scope| {
        let held = partitions[0].hold_journal_writes();
        let appenders: Vec<_> = partitions
            .iter()
            .map(|p| scope.spawn(|| p.append(&batch(1, 10)).unwrap()))
            .collect();
        // Every appender has written: the writer holds the first
        // round, the rest wait in the journal's memory for the next.
        while written() < 4 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(held);
        for appender in appenders {
            appender.join().unwrap();
        }
    });
    assert!(fsyncs(&log) <= 2, "{}", fsyncs(&log));
    assert!(partitions.iter().all(|p| p.durable_end() == 1));
}

#[test]
fn a_retried_batch_under_batch_policy_is_acknowledged_once_durable() {
    use crate::storage::producer_state::test_support::idempotent_batch;
    let dir = tempfile::tempdir().unwrap();
    let log = batch_log(dir.path(), 1);
    let partition = log.partition("t", 0).unwrap();
    let once = idempotent_batch(3, 0, 0, 2);
    partition.append(&once).unwrap();
    let dup = partition.append(&once).unwrap();
    assert_eq!((dup.base_offset, dup.last_offset), (0, 1));
    assert_eq!(partition.log_end_offset(), 2);
    assert_eq!(fsyncs(&log), 1);
}

#[test]
fn pending_appends_resolve_in_order_as_their_rounds_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let log = batch_log(dir.path(), 1);
    let partition = log.partition("t", 0).unwrap();
    let held = partition.hold_journal_writes();
    // The writer is stuck in a write: every append returns at once,
    // written but not durable.
    let waits: Vec<_> = (0..3)
        .map(|_| partition.append_pending(&batch(2, 10)).unwrap())
        .collect();
    assert_eq!(partition.log_end_offset(), 6);
    assert_eq!(partition.durable_end(), 0);
    assert!(waits.iter().all(|(_, d)| !d.is_ready()));
    drop(held);
    let mut bases = Vec::new();
    for (appended, durability) in waits {
        durability.wait_blocking().unwrap();
        bases.push(appended.base_offset);
    }
    assert_eq!(bases, vec![0, 2, 4]);
    assert_eq!(partition.durable_end(), 6);
    // At most two writes for three appends: the one held took the
    // first, the next took the other two.
    assert!(fsyncs(&log) <= 2, "{}", fsyncs(&log));
}

#[test]
fn a_failed_journal_write_fails_the_waiting_appends_and_every_later_one() {
    let dir = tempfile::tempdir().unwrap();
    let log = batch_log(dir.path(), 1);
    let partition = log.partition("t", 0).unwrap();
    let held = partition.hold_journal_writes();
    let (_, durability) = partition.append_pending(&batch(2, 10)).unwrap();
    log.journal_for_tests().fail_writes();
    drop(held);
    let err = durability.wait_blocking().unwrap_err();
    assert_eq!(err.code(), ResponseError::KafkaStorageError.code());
    assert!(err.to_string().contains("injected write failure"), "{err}");
    assert_eq!(partition.durable_end(), 0);
    // As Kafka takes a failed log directory offline: nothing more is
    // taken, and nothing is written.
    let err = partition.append(&batch(1, 10)).unwrap_err();
    assert_eq!(err.code(), ResponseError::KafkaStorageError.code());
    assert!(err.to_string().contains("the journal stopped"), "{err}");
    assert_eq!(partition.log_end_offset(), 2);
}

#[test]
fn truncation_during_a_pending_write_fails_only_the_cut_appends() {
    let dir = tempfile::tempdir().unwrap();
    let log = batch_log(dir.path(), 1);
    let partition = log.partition("t", 0).unwrap();
    let held = partition.hold_journal_writes();
    let (_, kept) = partition.append_pending(&batch(2, 10)).unwrap();
    let (_, cut) = partition.append_pending(&batch(2, 10)).unwrap();
    partition.truncate_to(2).unwrap();
    let err = cut.wait_blocking().unwrap_err();
    assert_eq!(err.code(), ResponseError::NotLeaderOrFollower.code());
    drop(held);
    kept.wait_blocking().unwrap();
    assert_eq!(partition.log_end_offset(), 2);
    // The truncation's own record vouches for what is left.
    partition.sync_through(2).unwrap();
    assert_eq!(partition.durable_end(), 2);
    let (appended, durability) = partition.append_pending(&batch(1, 10)).unwrap();
    durability.wait_blocking().unwrap();
    assert_eq!(appended.base_offset, 2);
    assert_eq!(partition.durable_end(), 3);
}

#[test]
fn topic_flush_configs_override_the_broker_policy() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), LogConfig::default()).unwrap();
    log.create_topic("t", 1, false).unwrap();
    log.set_topic_overrides("t", [("flush.messages".into(), "1".into())].into(), false)
        .unwrap();
    let partition = log.partition("t", 0).unwrap();
    assert_eq!(partition.fsync_policy(), FsyncPolicy::Batch);
    partition.append(&batch(1, 10)).unwrap();
    assert_eq!(fsyncs(&log), 1);
    log.set_topic_overrides("t", [("flush.ms".into(), "0".into())].into(), false)
        .unwrap();
    assert_eq!(
        partition.fsync_policy(),
        FsyncPolicy::Interval(std::time::Duration::ZERO)
    );
    partition.append(&batch(1, 10)).unwrap();
    assert_eq!(fsyncs(&log), 1);
    assert_eq!(log.flush_dirty().unwrap(), 1);
    assert_eq!(fsyncs(&log), 2);
}
