//! IncrementalAlterConfigs for topic configs (SET, DELETE, and APPEND /
//! SUBTRACT on list configs). Broker configs are read-only.

use super::describe_configs::require_topic_resource;
use crate::broker::Broker;
use crate::error::{Error, Result};
use crate::topic_config::{validate, TopicOverrides, ACCEPTED_IGNORED, DESCRIBED};
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;
use std::collections::HashSet;

const OP_SET: i8 = 0;
const OP_DELETE: i8 = 1;
const OP_APPEND: i8 = 2;
const OP_SUBTRACT: i8 = 3;

/// List-valued configs, the only ones APPEND and SUBTRACT apply to.
const LIST_CONFIGS: &[&str] = &[
    "cleanup.policy",
    "follower.replication.throttled.replicas",
    "leader.replication.throttled.replicas",
];

pub fn response(
    broker: &Broker,
    req: IncrementalAlterConfigsRequest,
    _version: i16,
) -> IncrementalAlterConfigsResponse {
    let mut response = IncrementalAlterConfigsResponse::default();
    response.responses = req
        .resources
        .into_iter()
        .map(|resource| {
            let mut out = AlterConfigsResourceResponse::default();
            out.resource_type = resource.resource_type;
            out.resource_name = resource.resource_name.clone();
            if let Err(e) = alter(broker, resource, req.validate_only) {
                out.error_code = e.code();
                out.error_message = Some(StrBytes::from_string(e.to_string()));
            }
            out
        })
        .collect();
    response
}

fn alter(broker: &Broker, resource: AlterConfigsResource, validate_only: bool) -> Result<()> {
    require_topic_resource(resource.resource_type)?;
    let name = resource.resource_name.as_str();
    let topic = broker.log.topic(name).ok_or_else(|| {
        Error::kafka(
            ResponseError::UnknownTopicOrPartition,
            format!("topic '{name}' does not exist"),
        )
    })?;
    let mut seen = HashSet::new();
    if !resource
        .configs
        .iter()
        .all(|c| seen.insert(c.name.as_str()))
    {
        return Err(Error::kafka(
            ResponseError::InvalidRequest,
            "a config key appears more than once",
        ));
    }
    let mut overrides = topic.overrides.read().expect("overrides lock").clone();
    for change in &resource.configs {
        apply(&mut overrides, change)?;
    }
    broker
        .admin
        .set_topic_overrides(name, overrides, validate_only)
}

fn apply(overrides: &mut TopicOverrides, change: &AlterableConfig) -> Result<()> {
    let key = change.name.as_str();
    let value = change.value.as_deref();
    let is_list = LIST_CONFIGS.contains(&key);
    match change.config_operation {
        OP_SET => {
            overrides.insert(key.to_string(), validate(key, value)?);
        }
        OP_DELETE => {
            if !DESCRIBED.iter().any(|d| d.name == key) && !ACCEPTED_IGNORED.contains(&key) {
                return Err(Error::kafka(
                    ResponseError::InvalidConfig,
                    format!("unknown topic config name: {key}"),
                ));
            }
            overrides.remove(key);
        }
        OP_APPEND | OP_SUBTRACT if is_list => {
            let current = overrides.get(key).cloned().unwrap_or_else(|| {
                if key == "cleanup.policy" {
                    "delete".to_string()
                } else {
                    String::new()
                }
            });
            let mut items: Vec<String> = current
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            for item in value
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                if change.config_operation == OP_APPEND {
                    if !items.iter().any(|i| i == item) {
                        items.push(item.to_string());
                    }
                } else {
                    items.retain(|i| i != item);
                }
            }
            let joined = items.join(",");
            overrides.insert(key.to_string(), validate(key, Some(&joined))?);
        }
        OP_APPEND | OP_SUBTRACT => {
            return Err(Error::kafka(
                ResponseError::InvalidConfig,
                format!("{key} is not a list config: APPEND and SUBTRACT do not apply"),
            ))
        }
        other => {
            return Err(Error::kafka(
                ResponseError::InvalidRequest,
                format!("unknown config operation {other}"),
            ))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::describe_configs::RESOURCE_TOPIC;
    use crate::handlers::test_support::broker;

    fn request(
        topic: &str,
        changes: &[(&str, i8, Option<&str>)],
        validate_only: bool,
    ) -> IncrementalAlterConfigsRequest {
        let mut r = AlterConfigsResource::default();
        r.resource_type = RESOURCE_TOPIC;
        r.resource_name = StrBytes::from_string(topic.to_string());
        r.configs = changes
            .iter()
            .map(|(name, op, value)| {
                let mut c = AlterableConfig::default();
                c.name = StrBytes::from_string(name.to_string());
                c.config_operation = *op;
                c.value = value.map(|v| StrBytes::from_string(v.to_string()));
                c
            })
            .collect();
        let mut req = IncrementalAlterConfigsRequest::default();
        req.resources = vec![r];
        req.validate_only = validate_only;
        req
    }

    fn retention_ms(broker: &Broker) -> Option<i64> {
        broker
            .log
            .topic("t")
            .unwrap()
            .config
            .read()
            .unwrap()
            .retention_ms
    }

    #[tokio::test]
    async fn set_then_delete_reaches_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(
            &broker,
            request("t", &[("retention.ms", OP_SET, Some("5000"))], false),
            1,
        );
        assert_eq!(r.responses[0].error_code, 0);
        assert_eq!(retention_ms(&broker), Some(5000));
        response(
            &broker,
            request("t", &[("retention.ms", OP_DELETE, None)], false),
            1,
        );
        assert_eq!(
            retention_ms(&broker),
            Some(crate::topic_config::DEFAULT_RETENTION_MS)
        );
    }

    #[tokio::test]
    async fn validate_only_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(
            &broker,
            request("t", &[("retention.ms", OP_SET, Some("5000"))], true),
            0,
        );
        assert_eq!(r.responses[0].error_code, 0);
        assert_eq!(
            retention_ms(&broker),
            Some(crate::topic_config::DEFAULT_RETENTION_MS)
        );
    }

    #[tokio::test]
    async fn compact_is_invalid_config() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        for op in [OP_SET, OP_APPEND] {
            let r = response(
                &broker,
                request("t", &[("cleanup.policy", op, Some("compact"))], false),
                1,
            );
            assert_eq!(
                r.responses[0].error_code,
                ResponseError::InvalidConfig.code()
            );
        }
    }

    #[tokio::test]
    async fn append_to_a_scalar_is_invalid_config() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(
            &broker,
            request("t", &[("retention.ms", OP_APPEND, Some("1"))], false),
            1,
        );
        assert_eq!(
            r.responses[0].error_code,
            ResponseError::InvalidConfig.code()
        );
    }

    #[tokio::test]
    async fn unknown_topic_is_unknown_topic_or_partition() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let r = response(
            &broker,
            request("nope", &[("retention.ms", OP_SET, Some("1"))], false),
            1,
        );
        assert_eq!(
            r.responses[0].error_code,
            ResponseError::UnknownTopicOrPartition.code()
        );
    }

    #[tokio::test]
    async fn one_bad_change_applies_none() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let changes = [
            ("retention.ms", OP_SET, Some("5000")),
            ("bogus.key", OP_SET, Some("1")),
        ];
        let r = response(&broker, request("t", &changes, false), 1);
        assert_eq!(
            r.responses[0].error_code,
            ResponseError::InvalidConfig.code()
        );
        assert_eq!(
            retention_ms(&broker),
            Some(crate::topic_config::DEFAULT_RETENTION_MS)
        );
    }
}
