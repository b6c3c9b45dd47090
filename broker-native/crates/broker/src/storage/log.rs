//! The broker's log: every topic and partition under one data directory.
//!
//! Layout: `<dir>/<topic>-<partition>/` holds segments; `<dir>/__catalog`
//! records every topic's id and partition count (see `catalog`) so a
//! restart keeps them.

use super::catalog::{Catalog, CatalogRecord, CatalogTopic};
use super::partition::{LogConfig, Partition};
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

#[derive(Debug)]
pub struct Log {
    dir: PathBuf,
    config: LogConfig,
    catalog: Catalog,
    topics: RwLock<HashMap<String, Arc<Topic>>>,
    /// Topic ids to names, for requests that name topics by id.
    ids: RwLock<HashMap<Uuid, String>>,
    /// Serialises topic creation (which does I/O) without blocking lookups.
    create: Mutex<()>,
    total_size: Arc<AtomicU64>,
}

impl Log {
    /// Replays the catalog and opens every partition, in parallel.
    pub fn open(dir: &Path, config: LogConfig) -> Result<Log> {
        std::fs::create_dir_all(dir)?;
        let (catalog, mut entries) = Catalog::open(dir)?;
        migrate_legacy_topics(dir, &catalog, &mut entries)?;
        let total_size = Arc::new(AtomicU64::new(0));
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
                    let total_size = &total_size;
                    scope.spawn(move || {
                        part.iter()
                            .map(|(name, entry)| {
                                let meta = TopicMeta {
                                    id: entry.id,
                                    partitions: entry.partitions,
                                };
                                open_topic(dir, name, &meta, &entry.configs, config, total_size)
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
        for part in opened {
            for topic in part? {
                ids.insert(topic.id, topic.name.clone());
                topics.insert(topic.name.clone(), Arc::new(topic));
            }
        }
        Ok(Log {
            dir: dir.to_path_buf(),
            config,
            catalog,
            topics: RwLock::new(topics),
            ids: RwLock::new(ids),
            create: Mutex::new(()),
            total_size,
        })
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
        validate_topic_name(name)?;
        if partitions < 1 {
            return Err(Error::kafka(
                ResponseError::InvalidPartitions,
                format!("number of partitions {partitions} is below 1"),
            ));
        }
        let _guard = self.create.lock().expect("create lock");
        if self.topic(name).is_some() {
            return Err(Error::kafka(
                ResponseError::TopicAlreadyExists,
                format!("topic '{name}' already exists"),
            ));
        }
        let meta = TopicMeta {
            id: Uuid::new_v4(),
            partitions,
        };
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
            &self.total_size,
        )?;
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
        Ok(meta)
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

    /// Forces every partition's written bytes and the catalog to disk.
    pub fn flush(&self) -> Result<()> {
        for topic in self.topics() {
            for partition in &topic.partitions {
                partition.flush()?;
            }
        }
        self.catalog.sync()
    }
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
    total_size: &Arc<AtomicU64>,
) -> Result<Topic> {
    let base = TopicConfig {
        segment_bytes: config.segment_bytes,
        ..TopicConfig::default()
    };
    let topic_config = Arc::new(RwLock::new(TopicConfig::resolve(&base, overrides)));
    let partitions = (0..meta.partitions)
        .map(|p| {
            Partition::open(
                &dir.join(format!("{name}-{p}")),
                config.clone(),
                topic_config.clone(),
                total_size.clone(),
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

    #[test]
    fn zero_partitions_is_invalid_partitions() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        let err = log.create_topic("t", 0, false).unwrap_err();
        assert_eq!(err.code(), ResponseError::InvalidPartitions.code());
    }
}
