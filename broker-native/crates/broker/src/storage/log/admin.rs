//! Topic administration on the log: deleting topics, adding partitions and
//! changing topic configs, each recorded in the catalog before it shows.

use super::{Log, Topic};
use crate::error::{Error, Result};
use crate::storage::catalog::CatalogRecord;
use crate::storage::journal::JournalKey;
use crate::storage::partition::Partition;
use crate::storage::topic::TopicMeta;
use crate::topic_config::{TopicConfig, TopicOverrides};
use kafka_protocol::ResponseError;
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};
use uuid::Uuid;

fn unknown_topic(name: &str) -> Error {
    Error::kafka(
        ResponseError::UnknownTopicOrPartition,
        format!("topic '{name}' does not exist"),
    )
}

/// CreatePartitions may only grow a topic: INVALID_PARTITIONS otherwise.
pub fn check_growth(current: i32, count: i32) -> Result<()> {
    if count > current {
        return Ok(());
    }
    let message = if count == current {
        format!("topic already has {current} partitions")
    } else {
        format!(
            "topic currently has {current} partitions, which is higher than the requested {count}"
        )
    };
    Err(Error::kafka(ResponseError::InvalidPartitions, message))
}

/// Refuses a topic of `count` partitions beyond the per-topic limit
/// (INVALID_PARTITIONS), and `added` partitions more on a broker that holds
/// `hosted` beyond its own limit (POLICY_VIOLATION): one request must not be
/// able to fill the disk with partition directories.
pub fn check_partition_limits(
    (max_per_topic, max_partitions): (i32, usize),
    count: i32,
    hosted: usize,
    added: usize,
) -> Result<()> {
    if count > max_per_topic {
        return Err(Error::kafka(
            ResponseError::InvalidPartitions,
            format!(
                "number of partitions {count} is above this broker's limit of {max_per_topic} per topic (max.partitions.per.topic)"
            ),
        ));
    }
    if hosted.saturating_add(added) > max_partitions {
        return Err(Error::kafka(
            ResponseError::PolicyViolation,
            format!(
                "{added} more partitions would make {} on this broker, above its limit of {max_partitions} (max.partitions)",
                hosted.saturating_add(added),
            ),
        ));
    }
    Ok(())
}

impl Log {
    /// Partitions per topic and partitions in all, that this log accepts.
    pub fn limits(&self) -> (i32, usize) {
        (
            self.config.max_partitions_per_topic,
            self.config.max_partitions,
        )
    }

    /// The configuration a topic without overrides gets on this broker.
    pub fn topic_defaults(&self) -> TopicConfig {
        TopicConfig {
            segment_bytes: self.config.segment_bytes,
            ..TopicConfig::default()
        }
    }

    /// `create_topic` with validated config overrides.
    pub fn create_topic_with_configs(
        &self,
        name: &str,
        partitions: i32,
        overrides: TopicOverrides,
        validate_only: bool,
    ) -> Result<TopicMeta> {
        let meta = self.create_topic(name, partitions, validate_only)?;
        if !validate_only && !overrides.is_empty() {
            let topic = self.topic(name).ok_or_else(|| unknown_topic(name))?;
            let _hosted = self.create.lock().expect("create lock");
            self.apply_overrides(&topic, overrides)?;
        }
        Ok(meta)
    }

    /// Replaces a topic's config overrides (already validated).
    pub fn set_topic_overrides(
        &self,
        name: &str,
        overrides: TopicOverrides,
        validate_only: bool,
    ) -> Result<()> {
        let _hosted = self.create.lock().expect("create lock");
        let topic = self.topic(name).ok_or_else(|| unknown_topic(name))?;
        if validate_only {
            return Ok(());
        }
        self.apply_overrides(&topic, overrides)
    }

    fn apply_overrides(&self, topic: &Topic, new: TopicOverrides) -> Result<()> {
        let mut current = topic.overrides.write().expect("overrides lock");
        let mut records: Vec<CatalogRecord> = new
            .iter()
            .filter(|(k, v)| current.get(*k) != Some(*v))
            .map(|(k, v)| CatalogRecord::Config {
                name: topic.name.clone(),
                key: k.clone(),
                value: Some(v.clone()),
            })
            .collect();
        records.extend(current.keys().filter(|k| !new.contains_key(*k)).map(|k| {
            CatalogRecord::Config {
                name: topic.name.clone(),
                key: k.clone(),
                value: None,
            }
        }));
        self.catalog.append(&records)?;
        *topic.config.write().expect("topic config lock") =
            TopicConfig::resolve(&self.topic_defaults(), &new);
        *current = new;
        Ok(())
    }

    /// Deletes a topic: its metadata, then its partitions' data.
    pub fn delete_topic(&self, name: &str) -> Result<Uuid> {
        let mut hosted = self.create.lock().expect("create lock");
        let topic = self.topic(name).ok_or_else(|| unknown_topic(name))?;
        self.catalog.append(&[CatalogRecord::Deleted {
            name: name.to_string(),
        }])?;
        self.topics.write().expect("topics lock").remove(name);
        self.ids.write().expect("ids lock").remove(&topic.id);
        *hosted = hosted.saturating_sub(topic.partitions.len());
        let size: u64 = topic.partitions.iter().map(|p| p.size_bytes()).sum();
        let _ = self
            .total_size
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                Some(t.saturating_sub(size))
            });
        for (p, partition) in topic.partitions.iter().enumerate() {
            if let Err(e) = partition.delete_segments() {
                tracing::warn!(topic = name, partition = p, error = %e, "could not delete a partition's segments");
            }
            let dir = self.dir.join(format!("{name}-{p}"));
            match std::fs::remove_dir_all(&dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    tracing::warn!(dir = %dir.display(), error = %e, "could not remove a deleted partition");
                }
                _ => {}
            }
        }
        Ok(topic.id)
    }

    /// Deletes the topic with this id.
    pub fn delete_topic_by_id(&self, id: Uuid) -> Result<String> {
        let topic = self.topic_by_id(id).ok_or_else(|| {
            Error::kafka(
                ResponseError::UnknownTopicId,
                format!("no topic with id {id}"),
            )
        })?;
        self.delete_topic(&topic.name)?;
        Ok(topic.name.clone())
    }

    /// Grows a topic to `count` partitions (never shrinks it).
    pub fn create_partitions(&self, name: &str, count: i32, validate_only: bool) -> Result<()> {
        let mut hosted = self.create.lock().expect("create lock");
        let topic = self.topic(name).ok_or_else(|| unknown_topic(name))?;
        let current = topic.partitions.len() as i32;
        check_growth(current, count)?;
        check_partition_limits(self.limits(), count, *hosted, (count - current) as usize)?;
        if validate_only {
            return Ok(());
        }
        let mut partitions = topic.partitions.clone();
        let grown = (|| {
            for p in current..count {
                let partition = Partition::open_in(
                    &self.dir.join(format!("{name}-{p}")),
                    self.config.clone(),
                    topic.config.clone(),
                    self.shared.clone(),
                    false,
                    JournalKey {
                        topic_id: topic.id,
                        partition: p,
                    },
                )?;
                partitions.push(Arc::new(partition));
            }
            self.catalog.append(&[CatalogRecord::Topic {
                name: name.to_string(),
                id: topic.id,
                partitions: count,
            }])
        })();
        if let Err(e) = grown {
            // Nothing was recorded: the new partitions' files go too.
            for partition in &partitions[current as usize..] {
                let _ = partition.delete_segments();
            }
            self.remove_partition_dirs(name, current..count);
            return Err(e);
        }
        *hosted += (count - current) as usize;
        let grown = Topic {
            name: topic.name.clone(),
            id: topic.id,
            config: topic.config.clone(),
            overrides: RwLock::new(topic.overrides.read().expect("overrides lock").clone()),
            partitions,
        };
        self.topics
            .write()
            .expect("topics lock")
            .insert(name.to_string(), Arc::new(grown));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::batch::test_support::batch;
    use crate::storage::LogConfig;
    use crate::topic_config::validate_all;

    fn open(dir: &std::path::Path) -> Log {
        Log::open(dir, LogConfig::default()).unwrap()
    }

    #[test]
    fn delete_removes_metadata_and_data() {
        let dir = tempfile::tempdir().unwrap();
        let log = open(dir.path());
        log.create_topic("t", 2, false).unwrap();
        log.partition("t", 1)
            .unwrap()
            .append(&batch(2, 10))
            .unwrap();
        log.delete_topic("t").unwrap();
        assert!(log.topic("t").is_none());
        assert!(!dir.path().join("t-1").exists());
        assert_eq!(log.size_bytes(), 0);
        drop(log);
        assert!(open(dir.path()).topic("t").is_none());
    }

    /// Files of `dir` this process still has open (on Linux, through /proc).
    fn open_files_under(dir: &std::path::Path) -> Vec<String> {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .map(|target| target.to_string_lossy().into_owned())
            .filter(|target| target.starts_with(&*dir.to_string_lossy()))
            .collect()
    }

    #[test]
    fn delete_closes_the_segment_files_so_their_space_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let log = open(dir.path());
        log.create_topic("t", 3, false).unwrap();
        log.create_topic("kept", 1, false).unwrap();
        for p in 0..3 {
            log.partition("t", p)
                .unwrap()
                .append(&batch(2, 10))
                .unwrap();
        }
        log.partition("kept", 0)
            .unwrap()
            .append(&batch(2, 10))
            .unwrap();
        let segment = |name: &str| format!("{name}-0/00000000000000000000.log");
        assert!(open_files_under(dir.path())
            .iter()
            .any(|f| f.ends_with(&segment("t"))));
        log.delete_topic("t").unwrap();
        let open = open_files_under(dir.path());
        assert!(
            open.iter().all(|f| !f.contains("/t-")),
            "still open: {open:?}"
        );
        assert!(open.iter().any(|f| f.ends_with(&segment("kept"))));
        log.close_files();
        let open = open_files_under(dir.path());
        assert!(
            open.iter().all(|f| !f.ends_with(".log")),
            "still open: {open:?}"
        );
    }

    #[test]
    fn deleted_name_can_be_created_again_empty() {
        let dir = tempfile::tempdir().unwrap();
        let log = open(dir.path());
        log.create_topic("t", 1, false).unwrap();
        log.partition("t", 0)
            .unwrap()
            .append(&batch(2, 10))
            .unwrap();
        log.delete_topic("t").unwrap();
        log.create_topic("t", 1, false).unwrap();
        assert_eq!(log.partition("t", 0).unwrap().high_watermark(), 0);
    }

    #[test]
    fn delete_unknown_is_unknown_topic_or_partition() {
        let dir = tempfile::tempdir().unwrap();
        let err = open(dir.path()).delete_topic("nope").unwrap_err();
        assert_eq!(err.code(), ResponseError::UnknownTopicOrPartition.code());
    }

    #[test]
    fn partitions_grow_keep_data_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let log = open(dir.path());
            log.create_topic("t", 1, false).unwrap();
            log.partition("t", 0)
                .unwrap()
                .append(&batch(3, 10))
                .unwrap();
            log.create_partitions("t", 3, false).unwrap();
            assert_eq!(log.topic("t").unwrap().partitions.len(), 3);
        }
        let log = open(dir.path());
        assert_eq!(log.topic("t").unwrap().partitions.len(), 3);
        assert_eq!(log.partition("t", 0).unwrap().high_watermark(), 3);
    }

    #[test]
    fn shrinking_is_invalid_partitions() {
        let dir = tempfile::tempdir().unwrap();
        let log = open(dir.path());
        log.create_topic("t", 2, false).unwrap();
        for count in [1, 2] {
            let err = log.create_partitions("t", count, false).unwrap_err();
            assert_eq!(err.code(), ResponseError::InvalidPartitions.code());
        }
    }

    #[test]
    fn config_overrides_reach_partitions_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let log = open(dir.path());
            let overrides = validate_all([("retention.ms", Some("1000"))]).unwrap();
            log.create_topic_with_configs("t", 1, overrides, false)
                .unwrap();
            let partition = log.partition("t", 0).unwrap();
            assert_eq!(
                partition.topic_config().read().unwrap().retention_ms,
                Some(1000)
            );
        }
        let log = open(dir.path());
        let partition = log.partition("t", 0).unwrap();
        assert_eq!(
            partition.topic_config().read().unwrap().retention_ms,
            Some(1000)
        );
        log.set_topic_overrides("t", TopicOverrides::new(), false)
            .unwrap();
        assert_eq!(
            partition.topic_config().read().unwrap().retention_ms,
            TopicConfig::default().retention_ms
        );
        drop(log);
        let log = open(dir.path());
        assert!(log.topic("t").unwrap().overrides.read().unwrap().is_empty());
    }
}
