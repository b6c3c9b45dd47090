//! A topic: its id, its partitions, and the small file that persists them.

use super::partition::{Partition, SharedTopicConfig};
use crate::error::{Error, Result};
use kafka_protocol::ResponseError;
use std::path::Path;
use std::sync::Arc;
use uuid::Uuid;

#[derive(Debug)]
pub struct Topic {
    pub name: String,
    pub id: Uuid,
    /// Shared with every partition; storage reads it at each decision.
    pub config: SharedTopicConfig,
    /// The configs a client set (Kafka names), behind `config`.
    pub overrides: std::sync::RwLock<crate::topic_config::TopicOverrides>,
    pub partitions: Vec<Arc<Partition>>,
}

/// What the topic metadata file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicMeta {
    pub id: Uuid,
    pub partitions: i32,
}

impl TopicMeta {
    pub fn write(&self, path: &Path) -> Result<()> {
        let tmp = path.with_extension("tmp");
        std::fs::write(
            &tmp,
            format!("topic_id={}\npartitions={}\n", self.id, self.partitions),
        )?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    }

    pub fn read(path: &Path) -> Result<TopicMeta> {
        let text = std::fs::read_to_string(path)?;
        let mut id = None;
        let mut partitions = None;
        for line in text.lines() {
            match line.split_once('=') {
                Some(("topic_id", v)) => id = Uuid::parse_str(v.trim()).ok(),
                Some(("partitions", v)) => partitions = v.trim().parse().ok(),
                _ => {}
            }
        }
        match (id, partitions) {
            (Some(id), Some(partitions)) if partitions > 0 => Ok(TopicMeta { id, partitions }),
            _ => Err(Error::kafka(
                ResponseError::KafkaStorageError,
                format!("bad topic metadata file {}", path.display()),
            )),
        }
    }
}

/// Kafka's topic name rule: 1..=249 of `[a-zA-Z0-9._-]`, not "." or "..".
pub fn validate_topic_name(name: &str) -> Result<()> {
    let legal = !name.is_empty()
        && name.len() <= 249
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-');
    if legal {
        Ok(())
    } else {
        Err(Error::kafka(
            ResponseError::InvalidTopicException,
            format!("illegal topic name {name:?}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.meta");
        let meta = TopicMeta {
            id: Uuid::new_v4(),
            partitions: 3,
        };
        meta.write(&path).unwrap();
        assert_eq!(TopicMeta::read(&path).unwrap(), meta);
    }

    #[test]
    fn illegal_names_are_invalid_topic() {
        for name in ["", ".", "..", "a/b", "space here"] {
            assert_eq!(
                validate_topic_name(name).unwrap_err().code(),
                ResponseError::InvalidTopicException.code()
            );
        }
        validate_topic_name("orders_v2.eu-1").unwrap();
    }
}
