//! DescribeConfigs: topic configs (effective values, overrides marked as
//! such) and a small read-only set for this broker.

use crate::broker::Broker;
use crate::topic_config::{ConfigDef, ConfigType, TopicConfig, ACCEPTED_IGNORED, DESCRIBED};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;

pub const RESOURCE_TOPIC: i8 = 2;
pub const RESOURCE_BROKER: i8 = 4;

/// Only topic configs can change here; broker configs are read-only (the one rule of both
/// AlterConfigs and IncrementalAlterConfigs).
pub fn require_topic_resource(resource_type: i8) -> crate::error::Result<()> {
    match resource_type {
        RESOURCE_TOPIC => Ok(()),
        RESOURCE_BROKER => Err(crate::error::Error::kafka(
            kafka_protocol::ResponseError::InvalidRequest,
            "broker configs are read-only on this broker",
        )),
        other => Err(crate::error::Error::kafka(
            kafka_protocol::ResponseError::InvalidRequest,
            format!("resource type {other} is not supported"),
        )),
    }
}

/// Kafka's ConfigSource values.
const SOURCE_DYNAMIC_TOPIC: i8 = 1;
const SOURCE_STATIC_BROKER: i8 = 4;
const SOURCE_DEFAULT: i8 = 5;

/// One config as reported.
struct Entry {
    name: String,
    value: String,
    source: i8,
    kind: ConfigType,
    doc: &'static str,
    read_only: bool,
    /// The value underneath an override, for synonyms.
    default: Option<String>,
}

pub fn response(
    broker: &Broker,
    req: DescribeConfigsRequest,
    version: i16,
) -> DescribeConfigsResponse {
    let mut response = DescribeConfigsResponse::default();
    // A resource named twice is described once: each answer lists every config, so a few
    // bytes a name must not buy a copy each (160 KB naming one topic 20,000 times got 13 MB).
    let mut named = std::collections::HashSet::new();
    response.results = req
        .resources
        .into_iter()
        .filter(|r| named.insert((r.resource_type, r.resource_name.clone())))
        .map(|resource| {
            describe(
                broker,
                resource,
                req.include_synonyms,
                req.include_documentation,
                version,
            )
        })
        .collect();
    response
}

fn describe(
    broker: &Broker,
    resource: DescribeConfigsResource,
    synonyms: bool,
    documentation: bool,
    version: i16,
) -> DescribeConfigsResult {
    let mut result = DescribeConfigsResult::default();
    result.resource_type = resource.resource_type;
    result.resource_name = resource.resource_name.clone();
    let entries = match resource.resource_type {
        RESOURCE_TOPIC => topic_entries(broker, &resource.resource_name),
        RESOURCE_BROKER => broker_entries(broker, &resource.resource_name),
        other => Err((
            ResponseError::InvalidRequest,
            format!("resource type {other} is not supported"),
        )),
    };
    match entries {
        Ok(entries) => {
            let wanted = resource.configuration_keys.as_ref();
            result.configs = entries
                .into_iter()
                .filter(|e| wanted.is_none_or(|keys| keys.iter().any(|k| k.as_str() == e.name)))
                .map(|e| encode(e, synonyms, documentation, version))
                .collect();
        }
        Err((code, message)) => {
            result.error_code = code.code();
            result.error_message = Some(StrBytes::from_string(message));
        }
    }
    result
}

fn encode(
    e: Entry,
    synonyms: bool,
    documentation: bool,
    version: i16,
) -> DescribeConfigsResourceResult {
    let mut out = DescribeConfigsResourceResult::default();
    out.name = StrBytes::from_string(e.name.clone());
    out.value = Some(StrBytes::from_string(e.value.clone()));
    out.read_only = e.read_only;
    out.config_source = e.source;
    if synonyms {
        let synonym = |value: &str, source: i8| {
            let mut s = DescribeConfigsSynonym::default();
            s.name = StrBytes::from_string(e.name.clone());
            s.value = Some(StrBytes::from_string(value.to_string()));
            s.source = source;
            s
        };
        out.synonyms.push(synonym(&e.value, e.source));
        if let Some(default) = &e.default {
            out.synonyms.push(synonym(default, SOURCE_DEFAULT));
        }
    }
    if version >= 3 {
        out.config_type = e.kind as i8;
        if documentation {
            out.documentation = Some(StrBytes::from_static_str(e.doc));
        }
    }
    out
}

fn topic_entries(broker: &Broker, name: &str) -> Result<Vec<Entry>, (ResponseError, String)> {
    let Some(topic) = broker.log.topic(name) else {
        return Err((
            ResponseError::UnknownTopicOrPartition,
            format!("topic '{name}' does not exist"),
        ));
    };
    let effective: TopicConfig = *topic.config.read().expect("topic config lock");
    let defaults = broker.log.topic_defaults();
    let overrides = topic.overrides.read().expect("overrides lock").clone();
    let mut entries: Vec<Entry> = DESCRIBED
        .iter()
        .map(|ConfigDef { name, kind, doc }| {
            let overridden = overrides.contains_key(*name);
            Entry {
                name: name.to_string(),
                value: effective.value_of(name).unwrap_or_default(),
                source: if overridden {
                    SOURCE_DYNAMIC_TOPIC
                } else {
                    SOURCE_DEFAULT
                },
                kind: *kind,
                doc,
                read_only: false,
                default: overridden.then(|| defaults.value_of(name).unwrap_or_default()),
            }
        })
        .collect();
    entries.extend(
        overrides
            .iter()
            .filter(|(k, _)| ACCEPTED_IGNORED.contains(&k.as_str()))
            .map(|(k, v)| Entry {
                name: k.clone(),
                value: v.clone(),
                source: SOURCE_DYNAMIC_TOPIC,
                kind: ConfigType::String,
                doc: "Accepted and stored; has no effect on this broker.",
                read_only: false,
                default: None,
            }),
    );
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

fn broker_entries(broker: &Broker, name: &str) -> Result<Vec<Entry>, (ResponseError, String)> {
    let node_id = broker.config.node_id;
    if !name.is_empty() && name != node_id.to_string() {
        return Err((
            ResponseError::InvalidRequest,
            format!("unexpected broker id {name}, this is broker {node_id}"),
        ));
    }
    let c = &broker.config;
    let defaults = broker.log.topic_defaults();
    let entry = |name: &str, value: String, source: i8, kind: ConfigType| Entry {
        name: name.to_string(),
        value,
        source,
        kind,
        doc: "Read-only on this broker.",
        read_only: true,
        default: None,
    };
    use ConfigType::{Int, Long};
    let s = SOURCE_STATIC_BROKER;
    let d = SOURCE_DEFAULT;
    Ok(vec![
        entry(
            "auto.create.topics.enable",
            c.auto_create_topics.to_string(),
            s,
            ConfigType::String,
        ),
        entry("broker.id", node_id.to_string(), s, Int),
        entry("default.replication.factor", "1".into(), d, Int),
        entry(
            "log.dirs",
            c.data_dir.display().to_string(),
            s,
            ConfigType::String,
        ),
        entry(
            "log.message.timestamp.type",
            "CreateTime".into(),
            d,
            ConfigType::String,
        ),
        entry("log.retention.bytes", "-1".into(), d, Long),
        entry(
            "log.retention.ms",
            defaults.value_of("retention.ms").unwrap_or_default(),
            d,
            Long,
        ),
        entry(
            "log.segment.bytes",
            defaults.segment_bytes.to_string(),
            s,
            Int,
        ),
        entry(
            "message.max.bytes",
            defaults.max_message_bytes.to_string(),
            d,
            Int,
        ),
        entry("min.insync.replicas", "1".into(), d, Int),
        entry("node.id", node_id.to_string(), s, Int),
        entry("num.partitions", c.default_partitions.to_string(), s, Int),
        entry("offsets.topic.replication.factor", "1".into(), d, Int),
        entry(
            "socket.request.max.bytes",
            c.limits.max_frame_bytes.to_string(),
            s,
            Int,
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use crate::topic_config::validate_all;

    fn request(resource_type: i8, name: &str, keys: Option<&[&str]>) -> DescribeConfigsRequest {
        let mut r = DescribeConfigsResource::default();
        r.resource_type = resource_type;
        r.resource_name = StrBytes::from_string(name.to_string());
        r.configuration_keys = keys.map(|k| {
            k.iter()
                .map(|s| StrBytes::from_string(s.to_string()))
                .collect()
        });
        let mut req = DescribeConfigsRequest::default();
        req.resources = vec![r];
        req
    }

    fn find<'a>(r: &'a DescribeConfigsResponse, name: &str) -> &'a DescribeConfigsResourceResult {
        r.results[0]
            .configs
            .iter()
            .find(|c| c.name.as_str() == name)
            .unwrap()
    }

    #[tokio::test]
    async fn a_resource_named_many_times_is_described_once() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let mut req = request(RESOURCE_TOPIC, "t", None);
        req.resources = vec![req.resources[0].clone(); 20_000];
        assert_eq!(response(&broker, req, 4).results.len(), 1);
    }

    #[tokio::test]
    async fn topic_defaults_are_reported_as_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(&broker, request(RESOURCE_TOPIC, "t", None), 4);
        assert_eq!(r.results[0].error_code, 0);
        let retention = find(&r, "retention.ms");
        assert_eq!(retention.value.as_deref(), Some("604800000"));
        assert_eq!(retention.config_source, SOURCE_DEFAULT);
        assert_eq!(retention.config_type, ConfigType::Long as i8);
        assert_eq!(find(&r, "cleanup.policy").value.as_deref(), Some("delete"));
    }

    #[tokio::test]
    async fn overrides_are_dynamic_topic_configs_with_synonyms() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let overrides = validate_all([
            ("retention.ms", Some("1000")),
            ("compression.type", Some("lz4")),
        ])
        .unwrap();
        broker
            .log
            .create_topic_with_configs("t", 1, overrides, false)
            .unwrap();
        let mut req = request(RESOURCE_TOPIC, "t", None);
        req.include_synonyms = true;
        let r = response(&broker, req, 4);
        let retention = find(&r, "retention.ms");
        assert_eq!(retention.value.as_deref(), Some("1000"));
        assert_eq!(retention.config_source, SOURCE_DYNAMIC_TOPIC);
        assert_eq!(retention.synonyms.len(), 2);
        assert_eq!(find(&r, "compression.type").value.as_deref(), Some("lz4"));
    }

    #[tokio::test]
    async fn configuration_keys_filter_the_list() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(
            &broker,
            request(RESOURCE_TOPIC, "t", Some(&["segment.bytes"])),
            2,
        );
        assert_eq!(r.results[0].configs.len(), 1);
        assert_eq!(r.results[0].configs[0].name.as_str(), "segment.bytes");
    }

    #[tokio::test]
    async fn unknown_topic_is_unknown_topic_or_partition() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let r = response(&broker, request(RESOURCE_TOPIC, "nope", None), 4);
        assert_eq!(
            r.results[0].error_code,
            ResponseError::UnknownTopicOrPartition.code()
        );
    }

    #[tokio::test]
    async fn broker_configs_are_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let r = response(&broker, request(RESOURCE_BROKER, "1", None), 4);
        assert_eq!(r.results[0].error_code, 0);
        assert!(r.results[0].configs.iter().all(|c| c.read_only));
        assert_eq!(find(&r, "node.id").value.as_deref(), Some("1"));
    }

    #[tokio::test]
    async fn another_broker_id_is_invalid_request() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let r = response(&broker, request(RESOURCE_BROKER, "2", None), 4);
        assert_eq!(
            r.results[0].error_code,
            ResponseError::InvalidRequest.code()
        );
    }
}
