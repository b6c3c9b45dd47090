//! The broker's log: every topic and partition under one data directory.
//!
//! Layout: `<dir>/<topic>-<partition>/` holds segments; `<dir>/__topics/<topic>.meta`
//! records each topic's id and partition count so a restart keeps them.

use super::partition::{LogConfig, Partition};
use super::topic::{validate_topic_name, Topic, TopicMeta};
use crate::error::{Error, Result};
use kafka_protocol::ResponseError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use uuid::Uuid;

const TOPICS_DIR: &str = "__topics";

#[derive(Debug)]
pub struct Log {
    dir: PathBuf,
    config: LogConfig,
    topics: RwLock<HashMap<String, Arc<Topic>>>,
    /// Serialises topic creation (which does I/O) without blocking lookups.
    create: Mutex<()>,
    total_size: Arc<AtomicU64>,
}

impl Log {
    pub fn open(dir: &Path, config: LogConfig) -> Result<Log> {
        std::fs::create_dir_all(dir.join(TOPICS_DIR))?;
        let total_size = Arc::new(AtomicU64::new(0));
        let mut topics = HashMap::new();
        for entry in std::fs::read_dir(dir.join(TOPICS_DIR))? {
            let path = entry?.path();
            let Some(name) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".meta"))
            else {
                continue;
            };
            let meta = TopicMeta::read(&path)?;
            let topic = open_topic(dir, name, &meta, config, &total_size)?;
            topics.insert(name.to_string(), Arc::new(topic));
        }
        Ok(Log {
            dir: dir.to_path_buf(),
            config,
            topics: RwLock::new(topics),
            create: Mutex::new(()),
            total_size,
        })
    }

    pub fn topic(&self, name: &str) -> Option<Arc<Topic>> {
        self.topics.read().expect("topics lock").get(name).cloned()
    }

    pub fn topic_by_id(&self, id: Uuid) -> Option<Arc<Topic>> {
        self.topics
            .read()
            .expect("topics lock")
            .values()
            .find(|t| t.id == id)
            .cloned()
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
        let topic = open_topic(&self.dir, name, &meta, self.config, &self.total_size)?;
        meta.write(&self.dir.join(TOPICS_DIR).join(format!("{name}.meta")))?;
        self.topics
            .write()
            .expect("topics lock")
            .insert(name.to_string(), Arc::new(topic));
        Ok(meta)
    }

    pub fn size_bytes(&self) -> u64 {
        self.total_size.load(Ordering::Relaxed)
    }

    /// Forces every partition's written bytes to disk.
    pub fn flush(&self) -> Result<()> {
        for topic in self.topics() {
            for partition in &topic.partitions {
                partition.flush()?;
            }
        }
        Ok(())
    }
}

fn open_topic(
    dir: &Path,
    name: &str,
    meta: &TopicMeta,
    config: LogConfig,
    total_size: &Arc<AtomicU64>,
) -> Result<Topic> {
    let partitions = (0..meta.partitions)
        .map(|p| {
            Partition::open(&dir.join(format!("{name}-{p}")), config, total_size.clone())
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Topic {
        name: name.to_string(),
        id: meta.id,
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
    fn zero_partitions_is_invalid_partitions() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        let err = log.create_topic("t", 0, false).unwrap_err();
        assert_eq!(err.code(), ResponseError::InvalidPartitions.code());
    }
}
