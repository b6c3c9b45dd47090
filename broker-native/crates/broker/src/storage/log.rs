//! The broker's log: every topic and partition under one data directory.
//!
//! Layout: `<dir>/<topic>-<partition>/` holds segments; `<dir>/__catalog`
//! records every topic's id and partition count (see `catalog`) so a
//! restart keeps them; `<dir>/.clean-shutdown` is there only after a clean
//! `flush` (see `shared::CleanShutdown`), and tells the next open to trust
//! each partition's last segment instead of scanning it.

use super::catalog::{Catalog, CatalogRecord, CatalogTopic};
use super::journal::{Journal, JournalKey};
use super::partition::{LogConfig, Partition, RecoveryReport};
use super::shared::{CleanShutdown, LogShared};
use super::topic::{validate_topic_name, Topic, TopicMeta};
use crate::error::{Error, Result};
use crate::topic_config::{TopicConfig, TopicOverrides};
use kafka_protocol::ResponseError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use uuid::Uuid;

/// The old layout (a file per topic), migrated into the catalog on open.
const LEGACY_TOPICS_DIR: &str = "__topics";

/// DeleteTopics, CreatePartitions and topic config changes.
mod admin;
#[cfg(test)]
mod durability_tests;
/// Replaying the journal a crash left.
mod recover;
pub use admin::{check_growth, check_partition_limits};
pub use recover::JournalReplayReport;

#[derive(Debug)]
pub struct Log {
    dir: PathBuf,
    config: LogConfig,
    catalog: Arc<Catalog>,
    topics: RwLock<HashMap<String, Arc<Topic>>>,
    /// Topic ids to names, for requests that name topics by id.
    ids: RwLock<HashMap<Uuid, String>>,
    /// Serialises topic creation (which does I/O) without blocking lookups;
    /// holds the number of partitions the log has, all topics together.
    create: Mutex<usize>,
    total_size: Arc<AtomicU64>,
    /// The flusher's queue and the clean-shutdown marker (and `total_size`).
    shared: Arc<LogShared>,
    recovery: LogRecovery,
}

impl Log {
    /// Replays the catalog and opens every partition, in parallel. After a
    /// clean shutdown (the marker is there) the partitions' last segments
    /// are trusted; the marker is removed before anything can be written.
    pub fn open(dir: &Path, config: LogConfig) -> Result<Log> {
        std::fs::create_dir_all(dir)?;
        let clean = CleanShutdown::take(dir)?;
        let (catalog, mut entries) = Catalog::open(dir)?;
        migrate_legacy_topics(dir, &catalog, &mut entries)?;
        let total_size = Arc::new(AtomicU64::new(0));
        let shared = Arc::new(LogShared::new(total_size.clone(), Some(dir)));
        let entries: Vec<(String, CatalogTopic)> = entries.into_iter().collect();
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        let chunk = entries.len().div_ceil(workers).max(1);
        let opened: Vec<Result<Vec<Topic>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = entries
                .chunks(chunk)
                .map(|part| {
                    let config = &config;
                    let shared = &shared;
                    scope.spawn(move || {
                        part.iter()
                            .map(|(name, entry)| {
                                let meta = TopicMeta {
                                    id: entry.id,
                                    partitions: entry.partitions,
                                };
                                open_topic(dir, name, &meta, &entry.configs, config, shared, clean)
                            })
                            .collect()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("topic opener panicked"))
                .collect()
        });
        let mut topics = HashMap::with_capacity(entries.len());
        let mut ids = HashMap::with_capacity(entries.len());
        let mut recovery = RecoveryReport::default();
        let mut hosted = 0;
        for part in opened {
            for topic in part? {
                hosted += topic.partitions.len();
                for partition in &topic.partitions {
                    recovery.merge(&partition.recovery());
                }
                ids.insert(topic.id, topic.name.clone());
                topics.insert(topic.name.clone(), Arc::new(topic));
            }
        }
        let replayed = recover::replay_journal(dir, &topics, &ids)?;
        let catalog = Arc::new(catalog);
        let journal = Journal::open(
            dir,
            config.journal,
            config.stats.clone(),
            Box::new({
                let catalog = catalog.clone();
                move || catalog.sync_if_dirty()
            }),
        )?;
        shared
            .journal
            .set(journal)
            .expect("a new log has no journal yet");
        Ok(Log {
            dir: dir.to_path_buf(),
            config,
            catalog,
            topics: RwLock::new(topics),
            ids: RwLock::new(ids),
            create: Mutex::new(hosted),
            total_size,
            shared,
            recovery: LogRecovery {
                clean_shutdown: clean,
                report: recovery,
                replayed,
            },
        })
    }

    /// Whether the last shutdown was clean, and what opening found.
    pub fn recovery(&self) -> LogRecovery {
        self.recovery
    }

    /// The storage counters (fsyncs) shared with every partition.
    pub fn storage_stats(&self) -> &crate::stats::StorageStats {
        &self.config.stats
    }

    pub fn topic(&self, name: &str) -> Option<Arc<Topic>> {
        self.topics.read().expect("topics lock").get(name).cloned()
    }

    pub fn topic_by_id(&self, id: Uuid) -> Option<Arc<Topic>> {
        let name = self.ids.read().expect("ids lock").get(&id).cloned()?;
        self.topic(&name).filter(|t| t.id == id)
    }

    pub fn partition(&self, topic: &str, partition: i32) -> Option<Arc<Partition>> {
        let topic = self.topic(topic)?;
        usize::try_from(partition)
            .ok()
            .and_then(|p| topic.partitions.get(p).cloned())
    }

    /// Partitions this log holds, all topics together (no walk over them).
    pub fn partition_count(&self) -> usize {
        *self.create.lock().expect("create lock")
    }

    /// All topics, sorted by name.
    pub fn topics(&self) -> Vec<Arc<Topic>> {
        let mut topics: Vec<_> = self
            .topics
            .read()
            .expect("topics lock")
            .values()
            .cloned()
            .collect();
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        topics
    }

    /// Checks that `name` could be created with `partitions`, then (unless
    /// `validate_only`) creates it.
    pub fn create_topic(
        &self,
        name: &str,
        partitions: i32,
        validate_only: bool,
    ) -> Result<TopicMeta> {
        self.create_topic_as(name, Uuid::new_v4(), partitions, validate_only)
    }

    /// Creates a topic whose id the cluster chose (every node of a cluster
    /// knows a topic by the same id).
    pub fn create_topic_with_id(&self, name: &str, id: Uuid, partitions: i32) -> Result<TopicMeta> {
        self.create_topic_as(name, id, partitions, false)
    }

    fn create_topic_as(
        &self,
        name: &str,
        id: Uuid,
        partitions: i32,
        validate_only: bool,
    ) -> Result<TopicMeta> {
        validate_topic_name(name)?;
        if partitions < 1 {
            return Err(Error::kafka(
                ResponseError::InvalidPartitions,
                format!("number of partitions {partitions} is below 1"),
            ));
        }
        let mut hosted = self.create.lock().expect("create lock");
        if self.topic(name).is_some() {
            return Err(Error::kafka(
                ResponseError::TopicAlreadyExists,
                format!("topic '{name}' already exists"),
            ));
        }
        check_partition_limits(self.limits(), partitions, *hosted, partitions as usize)?;
        let meta = TopicMeta { id, partitions };
        if validate_only {
            return Ok(meta);
        }
        let no_overrides = TopicOverrides::new();
        let topic = open_topic(
            &self.dir,
            name,
            &meta,
            &no_overrides,
            &self.config,
            &self.shared,
            false,
        )
        .inspect_err(|_| self.remove_partition_dirs(name, 0..partitions))?;
        self.catalog.append(&[CatalogRecord::Topic {
            name: name.to_string(),
            id: meta.id,
            partitions,
        }])?;
        self.ids
            .write()
            .expect("ids lock")
            .insert(meta.id, name.to_string());
        self.topics
            .write()
            .expect("topics lock")
            .insert(name.to_string(), Arc::new(topic));
        *hosted += partitions as usize;
        Ok(meta)
    }

    /// Removes the directories of partitions `range` of `name`, after a
    /// create that failed part way (nothing of it was recorded).
    fn remove_partition_dirs(&self, name: &str, range: std::ops::Range<i32>) {
        for p in range {
            let dir = self.dir.join(format!("{name}-{p}"));
            match std::fs::remove_dir_all(&dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    tracing::warn!(dir = %dir.display(), error = %e, "could not remove a partition of a failed create");
                }
                _ => {}
            }
        }
    }

    pub fn size_bytes(&self) -> u64 {
        self.total_size.load(Ordering::Relaxed)
    }

    /// One retention pass over every partition (see
    /// `Partition::enforce_retention`); returns the segments deleted.
    pub fn retention_pass(&self, now_ms: i64) -> Result<usize> {
        let topics: Vec<Arc<Topic>> = self
            .topics
            .read()
            .expect("topics lock")
            .values()
            .cloned()
            .collect();
        let mut deleted = 0;
        for topic in topics {
            for partition in &topic.partitions {
                deleted += partition.enforce_retention(now_ms)?;
            }
        }
        Ok(deleted)
    }

    /// The clean flush (at shutdown): every partition's written bytes,
    /// active indexes and producer state (see `Partition::flush`), then the
    /// catalog, then the clean-shutdown marker, which is written only if
    /// nothing changed the log meanwhile and is removed by the next change.
    /// Closes the segment files the log keeps open (after the final flush of
    /// a stop), so a stopped broker holds no data files whatever keeps its
    /// handle alive.
    pub fn close_files(&self) {
        self.config.files.clear();
    }

    pub fn flush(&self) -> Result<()> {
        self.shared.clean.arm();
        for topic in self.topics() {
            for partition in &topic.partitions {
                partition.flush()?;
            }
        }
        self.catalog.sync()?;
        // Every segment is synced: the journal has nothing left to vouch for.
        if let Some(journal) = self.shared.journal.get() {
            journal.checkpoint()?;
        }
        self.shared.clean.write_if_armed()?;
        Ok(())
    }

    /// Stops the journal as a crash would (see `Journal::halt`), after a
    /// node's kill or its stop.
    pub fn halt_journal(&self) {
        if let Some(journal) = self.shared.journal.get() {
            journal.halt();
        }
    }

    /// The log's journal (tests that stall or fail its writes).
    #[cfg(test)]
    pub(crate) fn journal_for_tests(&self) -> &std::sync::Arc<Journal> {
        self.shared.journal.get().expect("opened with a journal")
    }

    /// The interval flush (`FsyncPolicy::Interval` and `flush.ms`):
    /// fdatasyncs every segment whose deadline has come. Cheap when none
    /// has; blocking when one has (call it off the async threads). Returns
    /// how many segments were due.
    pub fn flush_dirty(&self) -> Result<usize> {
        self.shared
            .flush_queue
            .flush_due(std::time::Instant::now(), &self.config.stats)
    }

    /// Whether `flush_dirty` has anything to do now.
    pub fn flush_due(&self) -> bool {
        self.shared
            .flush_queue
            .next_due()
            .is_some_and(|at| at <= std::time::Instant::now())
    }

    /// How often to call `flush_dirty`: often enough for the broker's
    /// interval (and for topics' `flush.ms`, to within this period).
    pub fn flush_check_interval(&self) -> std::time::Duration {
        let mut every = FLUSH_CHECK_INTERVAL;
        if let crate::config::FsyncPolicy::Interval(interval) = self.config.fsync {
            every = every.min(interval);
        }
        every.max(std::time::Duration::from_millis(1))
    }
}

/// The longest `flush_check_interval`.
pub const FLUSH_CHECK_INTERVAL: std::time::Duration = std::time::Duration::from_millis(10);

/// What `Log::open` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogRecovery {
    /// The clean-shutdown marker was there.
    pub clean_shutdown: bool,
    /// Totals over every partition.
    pub report: RecoveryReport,
    /// What replaying the journal put back.
    pub replayed: JournalReplayReport,
}

/// Moves topics from the old `__topics/<topic>.meta` files into the
/// catalog, then removes that directory.
fn migrate_legacy_topics(
    dir: &Path,
    catalog: &Catalog,
    entries: &mut HashMap<String, CatalogTopic>,
) -> Result<()> {
    let legacy = dir.join(LEGACY_TOPICS_DIR);
    let Ok(listing) = std::fs::read_dir(&legacy) else {
        return Ok(());
    };
    let mut records = Vec::new();
    for entry in listing {
        let path = entry?.path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".meta"))
        else {
            continue;
        };
        if entries.contains_key(name) {
            continue;
        }
        let meta = TopicMeta::read(&path)?;
        records.push(CatalogRecord::Topic {
            name: name.to_string(),
            id: meta.id,
            partitions: meta.partitions,
        });
        entries.insert(
            name.to_string(),
            CatalogTopic {
                id: meta.id,
                partitions: meta.partitions,
                configs: Default::default(),
            },
        );
    }
    catalog.append(&records)?;
    catalog.sync()?;
    std::fs::remove_dir_all(&legacy)?;
    Ok(())
}

fn open_topic(
    dir: &Path,
    name: &str,
    meta: &TopicMeta,
    overrides: &TopicOverrides,
    config: &LogConfig,
    shared: &Arc<LogShared>,
    clean_shutdown: bool,
) -> Result<Topic> {
    let base = TopicConfig {
        segment_bytes: config.segment_bytes,
        ..TopicConfig::default()
    };
    let topic_config = Arc::new(RwLock::new(TopicConfig::resolve(&base, overrides)));
    let partitions = (0..meta.partitions)
        .map(|p| {
            Partition::open_in(
                &dir.join(format!("{name}-{p}")),
                config.clone(),
                topic_config.clone(),
                shared.clone(),
                clean_shutdown,
                JournalKey {
                    topic_id: meta.id,
                    partition: p,
                },
            )
            .map(Arc::new)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Topic {
        name: name.to_string(),
        id: meta.id,
        config: topic_config,
        overrides: RwLock::new(overrides.clone()),
        partitions,
    })
}

#[cfg(test)]
mod tests {
    use super::super::batch::test_support::batch;
    use super::super::shared::CLEAN_SHUTDOWN_FILE;
    use super::*;

    #[test]
    fn topics_and_data_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let id;
        {
            let log = Log::open(dir.path(), LogConfig::default()).unwrap();
            id = log.create_topic("orders", 3, false).unwrap().id;
            log.partition("orders", 2)
                .unwrap()
                .append(&batch(4, 10))
                .unwrap();
        }
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        let topic = log.topic("orders").unwrap();
        assert_eq!(topic.id, id);
        assert_eq!(topic.partitions.len(), 3);
        assert_eq!(topic.partitions[2].high_watermark(), 4);
        assert!(log.size_bytes() > 0);
    }

    #[test]
    fn validate_only_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        log.create_topic("t", 2, true).unwrap();
        assert!(log.topic("t").is_none());
        assert!(!dir.path().join("t-0").exists());
    }

    #[test]
    fn duplicate_topic_is_topic_already_exists() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        log.create_topic("t", 1, false).unwrap();
        let err = log.create_topic("t", 1, false).unwrap_err();
        assert_eq!(err.code(), ResponseError::TopicAlreadyExists.code());
    }

    #[test]
    fn many_topics_are_all_listed_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let count = 10_000;
        {
            let log = Log::open(dir.path(), LogConfig::default()).unwrap();
            for i in 0..count {
                log.create_topic(&format!("topic-{i:05}"), 1, false)
                    .unwrap();
            }
            assert_eq!(log.topics().len(), count);
        }
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        let topics = log.topics();
        assert_eq!(topics.len(), count);
        assert_eq!(topics[count - 1].name, format!("topic-{:05}", count - 1));
        let t = log.topic("topic-04242").unwrap();
        assert_eq!(log.topic_by_id(t.id).unwrap().name, "topic-04242");
    }

    #[test]
    fn legacy_topic_meta_files_are_migrated_into_the_catalog() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(LEGACY_TOPICS_DIR)).unwrap();
        let meta = TopicMeta {
            id: Uuid::new_v4(),
            partitions: 2,
        };
        meta.write(&dir.path().join(LEGACY_TOPICS_DIR).join("old.meta"))
            .unwrap();
        Log::open(dir.path(), LogConfig::default()).unwrap();
        assert!(!dir.path().join(LEGACY_TOPICS_DIR).exists());
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        assert_eq!(log.topic("old").unwrap().id, meta.id);
        assert_eq!(log.topic("old").unwrap().partitions.len(), 2);
    }

    #[test]
    fn retention_pass_applies_each_topics_current_config() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(1, 200);
        let log = Log::open(
            dir.path(),
            LogConfig {
                segment_bytes: one.len() as u64,
                ..LogConfig::default()
            },
        )
        .unwrap();
        log.create_topic("kept", 1, false).unwrap();
        log.create_topic("trimmed", 1, false).unwrap();
        for name in ["kept", "trimmed"] {
            for _ in 0..3 {
                log.partition(name, 0).unwrap().append(&one).unwrap();
            }
        }
        log.topic("trimmed")
            .unwrap()
            .config
            .write()
            .unwrap()
            .retention_bytes = Some(0);
        assert_eq!(log.retention_pass(0).unwrap(), 2);
        assert_eq!(log.partition("kept", 0).unwrap().log_start_offset(), 0);
        assert_eq!(log.partition("trimmed", 0).unwrap().log_start_offset(), 2);
    }

    fn log_path(dir: &Path, partition: &str) -> PathBuf {
        dir.join(partition).join("00000000000000000000.log")
    }

    #[test]
    fn a_clean_flush_lets_the_next_open_trust_the_tails() {
        let dir = tempfile::tempdir().unwrap();
        {
            let log = Log::open(dir.path(), LogConfig::default()).unwrap();
            assert!(!log.recovery().clean_shutdown);
            log.create_topic("t", 2, false).unwrap();
            for p in 0..2 {
                for _ in 0..3 {
                    log.partition("t", p)
                        .unwrap()
                        .append(&batch(2, 300))
                        .unwrap();
                }
            }
            log.flush().unwrap();
            assert!(dir.path().join(CLEAN_SHUTDOWN_FILE).exists());
        }
        {
            let log = Log::open(dir.path(), LogConfig::default()).unwrap();
            let recovery = log.recovery();
            assert!(recovery.clean_shutdown);
            assert_eq!(recovery.report.partitions, 2);
            assert_eq!(recovery.report.trusted, 2);
            assert_eq!(recovery.report.scanned_segments, 0);
            // Removed before anything could be written.
            assert!(!dir.path().join(CLEAN_SHUTDOWN_FILE).exists());
            let p = log.partition("t", 1).unwrap();
            assert_eq!(p.log_end_offset(), 6);
            assert_eq!(p.append(&batch(1, 10)).unwrap().base_offset, 6);
            let read = p.read(4, 1 << 20, false).unwrap();
            assert_eq!(
                super::super::batch::split_and_validate(&read.records).unwrap()[0]
                    .1
                    .base_offset,
                4
            );
            assert_eq!(p.offset_for_timestamp(0).unwrap(), Some(0));
            // Dropped without a flush: a crash.
        }
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        let recovery = log.recovery();
        assert!(!recovery.clean_shutdown);
        assert_eq!(recovery.report.scanned_segments, 2);
        assert_eq!(log.partition("t", 1).unwrap().log_end_offset(), 7);
    }

    #[test]
    fn after_a_crash_a_torn_tail_is_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let whole;
        {
            let log = Log::open(dir.path(), LogConfig::default()).unwrap();
            log.create_topic("t", 1, false).unwrap();
            let p = log.partition("t", 0).unwrap();
            p.append(&batch(3, 10)).unwrap();
            whole = p.size_bytes();
        }
        let half = batch(4, 10);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(log_path(dir.path(), "t-0"))
            .unwrap();
        std::io::Write::write_all(&mut file, &half[..half.len() / 2]).unwrap();
        drop(file);
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        let recovery = log.recovery();
        assert!(!recovery.clean_shutdown);
        assert_eq!(recovery.report.scanned_segments, 1);
        assert_eq!(recovery.report.truncated_bytes, (half.len() / 2) as u64);
        let p = log.partition("t", 0).unwrap();
        assert_eq!((p.log_end_offset(), p.size_bytes()), (3, whole));
    }

    #[test]
    fn a_change_after_the_clean_flush_removes_the_marker() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        log.create_topic("t", 1, false).unwrap();
        log.partition("t", 0)
            .unwrap()
            .append(&batch(1, 10))
            .unwrap();
        log.flush().unwrap();
        assert!(dir.path().join(CLEAN_SHUTDOWN_FILE).exists());
        log.partition("t", 0)
            .unwrap()
            .append(&batch(1, 10))
            .unwrap();
        assert!(!dir.path().join(CLEAN_SHUTDOWN_FILE).exists());
        drop(log);
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        assert!(!log.recovery().clean_shutdown);
        assert_eq!(log.partition("t", 0).unwrap().log_end_offset(), 2);
    }

    #[test]
    fn a_marker_over_a_tail_that_does_not_add_up_falls_back_to_a_scan() {
        let dir = tempfile::tempdir().unwrap();
        {
            let log = Log::open(dir.path(), LogConfig::default()).unwrap();
            log.create_topic("t", 1, false).unwrap();
            log.partition("t", 0)
                .unwrap()
                .append(&batch(2, 10))
                .unwrap();
            log.flush().unwrap();
        }
        let half = batch(4, 10);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(log_path(dir.path(), "t-0"))
            .unwrap();
        std::io::Write::write_all(&mut file, &half[..half.len() - 3]).unwrap();
        drop(file);
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        let recovery = log.recovery();
        assert!(recovery.clean_shutdown);
        assert_eq!(recovery.report.scanned_segments, 1);
        assert_eq!(recovery.report.truncated_bytes, (half.len() - 3) as u64);
        assert_eq!(log.partition("t", 0).unwrap().log_end_offset(), 2);
    }

    #[test]
    fn flush_dirty_syncs_only_what_is_due() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(
            dir.path(),
            LogConfig {
                fsync: crate::config::FsyncPolicy::Interval(std::time::Duration::ZERO),
                ..LogConfig::default()
            },
        )
        .unwrap();
        assert_eq!(
            log.flush_check_interval(),
            std::time::Duration::from_millis(1)
        );
        log.create_topic("now", 2, false).unwrap();
        log.create_topic("later", 1, false).unwrap();
        let overrides = crate::topic_config::validate_all([("flush.ms", Some("3600000"))]).unwrap();
        log.set_topic_overrides("later", overrides, false).unwrap();
        assert!(!log.flush_due());
        for (topic, p) in [("now", 0), ("now", 1), ("later", 0)] {
            log.partition(topic, p)
                .unwrap()
                .append(&batch(1, 10))
                .unwrap();
        }
        assert!(log.flush_due());
        assert_eq!(log.flush_dirty().unwrap(), 2);
        assert_eq!(log.storage_stats().fsyncs.load(Ordering::Relaxed), 2);
        assert!(!log.flush_due());
        assert_eq!(log.flush_dirty().unwrap(), 0);
    }

    #[test]
    fn zero_partitions_is_invalid_partitions() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        let err = log.create_topic("t", 0, false).unwrap_err();
        assert_eq!(err.code(), ResponseError::InvalidPartitions.code());
    }
}
