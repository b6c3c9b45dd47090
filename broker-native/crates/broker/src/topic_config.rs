//! Per-topic configuration: the typed values the log reads (`TopicConfig`,
//! shared with each partition), and the rules that turn the overrides a
//! client sets (Kafka names, persisted in the topics catalog) into them.
//!
//! Three kinds of names: those in `DESCRIBED` take effect, those in
//! `ACCEPTED_IGNORED` are real Kafka topic
//! configs we store and report but do not act on, and anything else is
//! INVALID_CONFIG, as Kafka answers an unknown topic config.

use crate::config::FsyncPolicy;
use crate::error::{Error, Result};
use kafka_protocol::ResponseError;
use std::collections::BTreeMap;
use std::time::Duration;

/// How a batch's timestamp is set (`message.timestamp.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimestampType {
    /// The producer's timestamp is kept.
    #[default]
    CreateTime,
    /// The broker stamps each batch with its append time.
    LogAppendTime,
}

/// A topic's effective configuration, defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicConfig {
    /// `retention.ms`; `None` keeps data forever (-1).
    pub retention_ms: Option<i64>,
    /// `retention.bytes` per partition; `None` is unlimited (-1).
    pub retention_bytes: Option<i64>,
    pub segment_bytes: u64,
    /// `segment.ms`: roll the active segment once it is this old.
    pub segment_ms: u64,
    /// `max.message.bytes`: the largest record batch a produce may carry.
    pub max_message_bytes: usize,
    pub timestamp_type: TimestampType,
    pub min_insync_replicas: i32,
    /// `flush.messages`; `None` is Kafka's "never" (i64::MAX). 1 makes
    /// every append wait for fdatasync (see `fsync_policy`).
    pub flush_messages: Option<i64>,
    /// `flush.ms`; `None` is Kafka's "never" (i64::MAX). N syncs written
    /// bytes within N ms (see `fsync_policy`).
    pub flush_ms: Option<i64>,
}

pub const DEFAULT_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;
pub const DEFAULT_SEGMENT_MS: u64 = 7 * 24 * 60 * 60 * 1000;
/// Kafka's default `max.message.bytes` (1 MiB plus the batch overhead).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 1_048_588;

impl Default for TopicConfig {
    fn default() -> Self {
        TopicConfig {
            retention_ms: Some(DEFAULT_RETENTION_MS),
            retention_bytes: None,
            segment_bytes: crate::config::DEFAULT_SEGMENT_BYTES,
            segment_ms: DEFAULT_SEGMENT_MS,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            timestamp_type: TimestampType::CreateTime,
            min_insync_replicas: 1,
            flush_messages: None,
            flush_ms: None,
        }
    }
}

/// The kind of value a config holds, as DescribeConfigs v3+ reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigType {
    Int = 3,
    Long = 5,
    String = 2,
    List = 7,
}

/// A topic config this broker acts on (or reports), with its documentation.
pub struct ConfigDef {
    pub name: &'static str,
    pub kind: ConfigType,
    pub doc: &'static str,
}

/// The configs DescribeConfigs lists for every topic.
pub const DESCRIBED: &[ConfigDef] = &[
    ConfigDef {
        name: "cleanup.policy",
        kind: ConfigType::List,
        doc: "Only \"delete\": compaction is not supported.",
    },
    ConfigDef {
        name: "flush.messages",
        kind: ConfigType::Long,
        doc: "1: every append waits for fdatasync (like fsync policy batch); other values: the broker's fsync policy decides.",
    },
    ConfigDef {
        name: "flush.ms",
        kind: ConfigType::Long,
        doc: "N: written bytes are fdatasynced within N ms (like fsync policy interval:N).",
    },
    ConfigDef {
        name: "max.message.bytes",
        kind: ConfigType::Int,
        doc: "Largest record batch a produce may carry.",
    },
    ConfigDef {
        name: "message.timestamp.type",
        kind: ConfigType::String,
        doc: "CreateTime or LogAppendTime.",
    },
    ConfigDef {
        name: "min.insync.replicas",
        kind: ConfigType::Int,
        doc: "Replicas that must have a batch before acks=all succeeds.",
    },
    ConfigDef {
        name: "retention.bytes",
        kind: ConfigType::Long,
        doc: "Bytes kept per partition; -1 is unlimited.",
    },
    ConfigDef {
        name: "retention.ms",
        kind: ConfigType::Long,
        doc: "Age after which a segment may be deleted; -1 keeps forever.",
    },
    ConfigDef {
        name: "segment.bytes",
        kind: ConfigType::Int,
        doc: "Segment size at which the log rolls.",
    },
    ConfigDef {
        name: "segment.ms",
        kind: ConfigType::Long,
        doc: "Segment age at which the log rolls.",
    },
];

/// Real Kafka topic configs that are stored and reported but have no effect here.
pub const ACCEPTED_IGNORED: &[&str] = &[
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.type",
    "compression.zstd.level",
    "delete.retention.ms",
    "file.delete.delay.ms",
    "follower.replication.throttled.replicas",
    "index.interval.bytes",
    "leader.replication.throttled.replicas",
    "local.retention.bytes",
    "local.retention.ms",
    "max.compaction.lag.ms",
    "message.downconversion.enable",
    "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms",
    "message.timestamp.difference.max.ms",
    "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms",
    "preallocate",
    "remote.log.copy.disable",
    "remote.log.delete.on.disable",
    "remote.storage.enable",
    "segment.index.bytes",
    "segment.jitter.ms",
    "unclean.leader.election.enable",
];

/// Config names a client set explicitly, with their normalised values.
pub type TopicOverrides = BTreeMap<String, String>;

fn invalid(message: String) -> Error {
    Error::kafka(ResponseError::InvalidConfig, message)
}

fn parse_long(name: &str, value: &str, min: i64) -> Result<i64> {
    match value.trim().parse::<i64>() {
        Ok(v) if v >= min => Ok(v),
        _ => Err(invalid(format!(
            "invalid value {value:?} for configuration {name}: must be an integer >= {min}"
        ))),
    }
}

fn parse_int(name: &str, value: &str, min: i64) -> Result<i64> {
    let v = parse_long(name, value, min)?;
    if v > i64::from(i32::MAX) {
        return Err(invalid(format!(
            "invalid value {value:?} for configuration {name}: must fit in 32 bits"
        )));
    }
    Ok(v)
}

/// Checks one name/value pair and returns the value as it will be stored.
pub fn validate(name: &str, value: Option<&str>) -> Result<String> {
    let Some(value) = value else {
        return Err(invalid(format!("null value for configuration {name}")));
    };
    let normalised = match name {
        "retention.ms" | "retention.bytes" => parse_long(name, value, -1)?.to_string(),
        "segment.bytes" => parse_int(name, value, 14)?.to_string(),
        "segment.ms" | "flush.messages" => parse_long(name, value, 1)?.to_string(),
        "flush.ms" => parse_long(name, value, 0)?.to_string(),
        "max.message.bytes" => parse_int(name, value, 0)?.to_string(),
        "min.insync.replicas" => parse_int(name, value, 1)?.to_string(),
        "message.timestamp.type" => match value.trim() {
            "CreateTime" | "LogAppendTime" => value.trim().to_string(),
            _ => {
                return Err(invalid(format!(
                    "invalid value {value:?} for configuration {name}: CreateTime or LogAppendTime"
                )))
            }
        },
        "cleanup.policy" => {
            let policies: Vec<&str> = value.split(',').map(str::trim).collect();
            if policies != ["delete"] {
                return Err(invalid(format!(
                    "cleanup.policy {value:?} is not supported: only \"delete\" (no compaction)"
                )));
            }
            "delete".to_string()
        }
        _ if ACCEPTED_IGNORED.contains(&name) => value.to_string(),
        _ => return Err(invalid(format!("unknown topic config name: {name}"))),
    };
    Ok(normalised)
}

/// Validates a whole set of overrides (as given to CreateTopics).
pub fn validate_all<'a>(
    configs: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> Result<TopicOverrides> {
    let mut out = TopicOverrides::new();
    for (name, value) in configs {
        out.insert(name.to_string(), validate(name, value)?);
    }
    Ok(out)
}

impl TopicConfig {
    /// `base` (the broker's defaults) with `overrides` applied. Overrides
    /// are assumed validated; an unparsable one keeps the default.
    pub fn resolve(base: &TopicConfig, overrides: &TopicOverrides) -> TopicConfig {
        let mut c = *base;
        let long = |name: &str| overrides.get(name).and_then(|v| v.parse::<i64>().ok());
        let unlimited = |v: i64| if v < 0 { None } else { Some(v) };
        if let Some(v) = long("retention.ms") {
            c.retention_ms = unlimited(v);
        }
        if let Some(v) = long("retention.bytes") {
            c.retention_bytes = unlimited(v);
        }
        if let Some(v) = long("segment.bytes") {
            c.segment_bytes = v.max(14) as u64;
        }
        if let Some(v) = long("segment.ms") {
            c.segment_ms = v.max(1) as u64;
        }
        if let Some(v) = long("max.message.bytes") {
            c.max_message_bytes = v.max(0) as usize;
        }
        if let Some(v) = long("min.insync.replicas") {
            c.min_insync_replicas = v.clamp(1, i64::from(i32::MAX)) as i32;
        }
        if let Some(v) = long("flush.messages") {
            c.flush_messages = Some(v);
        }
        if let Some(v) = long("flush.ms") {
            c.flush_ms = Some(v);
        }
        match overrides.get("message.timestamp.type").map(String::as_str) {
            Some("LogAppendTime") => c.timestamp_type = TimestampType::LogAppendTime,
            Some("CreateTime") => c.timestamp_type = TimestampType::CreateTime,
            _ => {}
        }
        c
    }

    /// The fsync policy this topic's partitions follow: `flush.messages=1`
    /// is `Batch`, else `flush.ms=N` is `Interval(N ms)`, else the broker's.
    /// (Other `flush.messages` values are reported only.)
    pub fn fsync_policy(&self, broker: FsyncPolicy) -> FsyncPolicy {
        if self.flush_messages == Some(1) {
            return FsyncPolicy::Batch;
        }
        match self.flush_ms {
            // i64::MAX is Kafka's "never" (its default), as if unset.
            Some(ms) if ms < i64::MAX => {
                FsyncPolicy::Interval(Duration::from_millis(ms.max(0) as u64))
            }
            _ => broker,
        }
    }

    /// The value DescribeConfigs reports for `name` (a `DESCRIBED` name).
    pub fn value_of(&self, name: &str) -> Option<String> {
        let or_minus_one = |v: Option<i64>| v.unwrap_or(-1).to_string();
        let or_max = |v: Option<i64>| v.unwrap_or(i64::MAX).to_string();
        Some(match name {
            "cleanup.policy" => "delete".to_string(),
            "retention.ms" => or_minus_one(self.retention_ms),
            "retention.bytes" => or_minus_one(self.retention_bytes),
            "segment.bytes" => self.segment_bytes.to_string(),
            "segment.ms" => self.segment_ms.to_string(),
            "max.message.bytes" => self.max_message_bytes.to_string(),
            "min.insync.replicas" => self.min_insync_replicas.to_string(),
            "flush.messages" => or_max(self.flush_messages),
            "flush.ms" => or_max(self.flush_ms),
            "message.timestamp.type" => match self.timestamp_type {
                TimestampType::CreateTime => "CreateTime".to_string(),
                TimestampType::LogAppendTime => "LogAppendTime".to_string(),
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(result: Result<String>) -> i16 {
        result.unwrap_err().code()
    }

    #[test]
    fn defaults_match_kafka() {
        let c = TopicConfig::default();
        assert_eq!(c.retention_ms, Some(604_800_000));
        assert_eq!(c.retention_bytes, None);
        assert_eq!(c.segment_bytes, 1 << 30);
        assert_eq!(c.max_message_bytes, 1_048_588);
        assert_eq!(c.timestamp_type, TimestampType::CreateTime);
        assert_eq!(c.min_insync_replicas, 1);
    }

    #[test]
    fn overrides_resolve_to_typed_values() {
        let overrides = validate_all([
            ("retention.ms", Some("-1")),
            ("retention.bytes", Some("1000")),
            ("segment.bytes", Some("4096")),
            ("segment.ms", Some("60000")),
            ("max.message.bytes", Some("200")),
            ("message.timestamp.type", Some("LogAppendTime")),
            ("min.insync.replicas", Some("2")),
        ])
        .unwrap();
        let c = TopicConfig::resolve(&TopicConfig::default(), &overrides);
        assert_eq!(c.retention_ms, None);
        assert_eq!(c.retention_bytes, Some(1000));
        assert_eq!((c.segment_bytes, c.segment_ms), (4096, 60_000));
        assert_eq!(c.max_message_bytes, 200);
        assert_eq!(c.timestamp_type, TimestampType::LogAppendTime);
        assert_eq!(c.min_insync_replicas, 2);
    }

    #[test]
    fn flush_configs_override_the_broker_fsync_policy() {
        let broker = FsyncPolicy::Interval(Duration::from_secs(1));
        let resolve = |pairs: &[(&str, &str)]| {
            let overrides = validate_all(pairs.iter().map(|(k, v)| (*k, Some(*v)))).unwrap();
            TopicConfig::resolve(&TopicConfig::default(), &overrides).fsync_policy(broker)
        };
        assert_eq!(resolve(&[]), broker);
        assert_eq!(resolve(&[("flush.messages", "1")]), FsyncPolicy::Batch);
        assert_eq!(
            resolve(&[("flush.messages", "1"), ("flush.ms", "50")]),
            FsyncPolicy::Batch
        );
        assert_eq!(
            resolve(&[("flush.ms", "50")]),
            FsyncPolicy::Interval(Duration::from_millis(50))
        );
        assert_eq!(resolve(&[("flush.messages", "1000")]), broker);
        assert_eq!(resolve(&[("flush.ms", &i64::MAX.to_string())]), broker);
    }

    #[test]
    fn compaction_is_invalid_config() {
        assert_eq!(code(validate("cleanup.policy", Some("compact"))), 40);
        assert_eq!(code(validate("cleanup.policy", Some("compact,delete"))), 40);
        assert_eq!(
            validate("cleanup.policy", Some("delete")).unwrap(),
            "delete"
        );
    }

    #[test]
    fn unknown_name_is_invalid_config_naming_it() {
        let err = validate("no.such.config", Some("1")).unwrap_err();
        assert_eq!(err.code(), ResponseError::InvalidConfig.code());
        assert!(err.to_string().contains("no.such.config"));
    }

    #[test]
    fn well_known_kafka_configs_are_accepted_as_given() {
        assert_eq!(validate("compression.type", Some("lz4")).unwrap(), "lz4");
    }

    #[test]
    fn bad_numbers_are_invalid_config() {
        assert_eq!(code(validate("retention.ms", Some("soon"))), 40);
        assert_eq!(code(validate("segment.bytes", Some("10"))), 40);
        assert_eq!(code(validate("min.insync.replicas", Some("0"))), 40);
        assert_eq!(code(validate("message.timestamp.type", Some("Now"))), 40);
        assert_eq!(code(validate("retention.ms", None)), 40);
    }
}
