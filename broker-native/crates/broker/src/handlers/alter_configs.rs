//! AlterConfigs (the legacy, replace-everything form kafkajs uses): the
//! given configs become the topic's whole set of overrides.

use super::describe_configs::require_topic_resource;
use crate::broker::Broker;
use crate::error::Result;
use crate::topic_config::validate_all;
use kafka_protocol::messages::alter_configs_request::AlterConfigsResource;
use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{AlterConfigsRequest, AlterConfigsResponse};
use kafka_protocol::protocol::StrBytes;

pub fn response(broker: &Broker, req: AlterConfigsRequest, _version: i16) -> AlterConfigsResponse {
    let mut response = AlterConfigsResponse::default();
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
    let overrides = validate_all(
        resource
            .configs
            .iter()
            .map(|c| (c.name.as_str(), c.value.as_deref())),
    )?;
    broker
        .admin
        .set_topic_overrides(&resource.resource_name, overrides, validate_only)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::describe_configs::RESOURCE_TOPIC;
    use crate::handlers::test_support::broker;
    use kafka_protocol::messages::alter_configs_request::AlterableConfig;
    use kafka_protocol::ResponseError;

    fn request(topic: &str, configs: &[(&str, &str)]) -> AlterConfigsRequest {
        let mut r = AlterConfigsResource::default();
        r.resource_type = RESOURCE_TOPIC;
        r.resource_name = StrBytes::from_string(topic.to_string());
        r.configs = configs
            .iter()
            .map(|(k, v)| {
                let mut c = AlterableConfig::default();
                c.name = StrBytes::from_string(k.to_string());
                c.value = Some(StrBytes::from_string(v.to_string()));
                c
            })
            .collect();
        let mut req = AlterConfigsRequest::default();
        req.resources = vec![r];
        req
    }

    #[tokio::test]
    async fn replaces_the_whole_set_of_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        response(&broker, request("t", &[("retention.ms", "1000")]), 1);
        let r = response(&broker, request("t", &[("segment.ms", "2000")]), 1);
        assert_eq!(r.responses[0].error_code, 0);
        let topic = broker.log.topic("t").unwrap();
        let overrides = topic.overrides.read().unwrap().clone();
        assert_eq!(overrides.keys().collect::<Vec<_>>(), vec!["segment.ms"]);
    }

    #[tokio::test]
    async fn unknown_config_is_invalid_config() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(&broker, request("t", &[("bogus", "1")]), 2);
        assert_eq!(
            r.responses[0].error_code,
            ResponseError::InvalidConfig.code()
        );
    }

    #[tokio::test]
    async fn unknown_topic_is_unknown_topic_or_partition() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let r = response(&broker, request("nope", &[("retention.ms", "1")]), 0);
        assert_eq!(
            r.responses[0].error_code,
            ResponseError::UnknownTopicOrPartition.code()
        );
    }
}
