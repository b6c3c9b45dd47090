//! CreateTopics, including validate_only.

use crate::admin::NewTopic;
use crate::broker::Broker;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse};
use kafka_protocol::protocol::StrBytes;

pub async fn response(
    broker: &Broker,
    req: CreateTopicsRequest,
    version: i16,
) -> CreateTopicsResponse {
    let mut response = CreateTopicsResponse::default();
    for topic in req.topics {
        let partitions = requested_partitions(broker, &topic);
        let configs: Vec<(&str, Option<&str>)> = topic
            .configs
            .iter()
            .map(|c| (c.name.as_str(), c.value.as_deref()))
            .collect();
        let new = NewTopic {
            name: &topic.name,
            partitions,
            replication_factor: topic.replication_factor,
            configs: &configs,
        };
        let outcome = broker.admin.create_topic(new, req.validate_only).await;
        response.topics.push(result_of(
            topic.name.clone(),
            outcome.map_err(|e| (e.code(), e.to_string())),
            partitions,
            req.validate_only,
            version,
        ));
    }
    response
}

fn requested_partitions(broker: &Broker, topic: &CreatableTopic) -> i32 {
    if !topic.assignments.is_empty() {
        topic.assignments.len() as i32
    } else if topic.num_partitions == -1 {
        broker.config.default_partitions
    } else {
        topic.num_partitions
    }
}

fn result_of(
    name: kafka_protocol::messages::TopicName,
    outcome: Result<(crate::storage::topic::TopicMeta, i16), (i16, String)>,
    partitions: i32,
    validate_only: bool,
    version: i16,
) -> CreatableTopicResult {
    let mut result = CreatableTopicResult::default();
    result.name = name;
    match outcome {
        Ok((meta, replication_factor)) => {
            if version >= 7 && !validate_only {
                result.topic_id = meta.id;
            }
            if version >= 5 {
                result.num_partitions = partitions;
                result.replication_factor = replication_factor;
                result.configs = Some(Vec::new());
            }
        }
        Err((code, message)) => {
            result.error_code = code;
            result.error_message = Some(StrBytes::from_string(message));
            if version >= 5 {
                result.configs = None;
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use kafka_protocol::messages::TopicName;
    use kafka_protocol::ResponseError;

    fn request(
        name: &str,
        partitions: i32,
        replication: i16,
        validate_only: bool,
    ) -> CreateTopicsRequest {
        let mut topic = CreatableTopic::default();
        topic.name = TopicName(StrBytes::from_string(name.to_string()));
        topic.num_partitions = partitions;
        topic.replication_factor = replication;
        let mut req = CreateTopicsRequest::default();
        req.topics = vec![topic];
        req.validate_only = validate_only;
        req
    }

    #[tokio::test]
    async fn creates_a_topic_with_its_partitions() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let response = response(&broker, request("t", 3, 1, false), 5).await;
        assert_eq!(response.topics[0].error_code, 0);
        assert_eq!(response.topics[0].num_partitions, 3);
        assert_eq!(broker.log.topic("t").unwrap().partitions.len(), 3);
    }

    #[tokio::test]
    async fn topics_beyond_the_partition_limits_are_refused_and_make_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = crate::BrokerConfig::new(dir.path());
        config.limits.max_partitions_per_topic = 50;
        config.limits.max_partitions = 60;
        let broker = Broker::open(config, 9092).unwrap();
        let r = response(&broker, request("huge", 1_000_000, 1, false), 5).await;
        assert_eq!(
            r.topics[0].error_code,
            ResponseError::InvalidPartitions.code()
        );
        let r = response(&broker, request("a", 40, 1, false), 5).await;
        assert_eq!(r.topics[0].error_code, 0);
        // 40 + 30 is above the broker's 60, even with validate_only.
        for validate_only in [true, false] {
            let r = response(&broker, request("b", 30, 1, validate_only), 5).await;
            assert_eq!(
                r.topics[0].error_code,
                ResponseError::PolicyViolation.code()
            );
            assert!(r.topics[0]
                .error_message
                .as_deref()
                .unwrap()
                .contains("max.partitions"));
        }
        assert!(broker.log.topic("b").is_none() && broker.log.topic("huge").is_none());
        let dirs = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_string_lossy();
                name.starts_with("b-") || name.starts_with("huge-")
            })
            .count();
        assert_eq!(dirs, 0);
        // Deleting gives the room back.
        broker.log.delete_topic("a").unwrap();
        let r = response(&broker, request("b", 30, 1, false), 5).await;
        assert_eq!(r.topics[0].error_code, 0);
    }

    #[tokio::test]
    async fn minus_one_partitions_uses_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        response(&broker, request("t", -1, -1, false), 5).await;
        assert_eq!(broker.log.topic("t").unwrap().partitions.len(), 1);
    }

    #[tokio::test]
    async fn validate_only_reports_success_without_creating() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let response = response(&broker, request("t", 2, 1, true), 3).await;
        assert_eq!(response.topics[0].error_code, 0);
        assert!(broker.log.topic("t").is_none());
    }

    #[tokio::test]
    async fn replication_factor_above_one_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let response = response(&broker, request("t", 1, 3, false), 3).await;
        assert_eq!(
            response.topics[0].error_code,
            ResponseError::InvalidReplicationFactor.code()
        );
    }

    fn with_config(mut req: CreateTopicsRequest, name: &str, value: &str) -> CreateTopicsRequest {
        let mut c =
            kafka_protocol::messages::create_topics_request::CreatableTopicConfig::default();
        c.name = StrBytes::from_string(name.to_string());
        c.value = Some(StrBytes::from_string(value.to_string()));
        req.topics[0].configs.push(c);
        req
    }

    #[tokio::test]
    async fn configs_are_applied_to_the_new_topic() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let req = with_config(request("t", 1, 1, false), "retention.bytes", "4096");
        let response = response(&broker, req, 7).await;
        assert_eq!(response.topics[0].error_code, 0);
        let topic = broker.log.topic("t").unwrap();
        assert_eq!(topic.config.read().unwrap().retention_bytes, Some(4096));
    }

    #[tokio::test]
    async fn unknown_config_is_invalid_config_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let req = with_config(request("t", 1, 1, false), "made.up", "1");
        let response = response(&broker, req, 7).await;
        assert_eq!(
            response.topics[0].error_code,
            ResponseError::InvalidConfig.code()
        );
        assert!(response.topics[0]
            .error_message
            .as_deref()
            .unwrap()
            .contains("made.up"));
        assert!(broker.log.topic("t").is_none());
    }

    /// Thousands of topics, made in CreateTopics requests of 1,000 as the
    /// `topics` benchmark makes its 120,000: each is there with its own id,
    /// in Metadata and after a restart; none costs a directory until it is
    /// written; the node's partition limit still refuses the one too many.
    /// (The limit bounds what the test can make on disk: 3,000 partitions.)
    #[tokio::test]
    async fn thousands_of_topics_stay_correct_and_make_no_directory_until_written() {
        const COUNT: usize = 3_000;
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            let mut config = crate::BrokerConfig::new(dir.path());
            config.limits.max_partitions = COUNT;
            Broker::open(config, 9092).unwrap()
        };
        let name = |i: usize| format!("many-{i:05}");
        let broker = open();
        let mut ids = std::collections::HashMap::new();
        for from in (0..COUNT).step_by(1_000) {
            let mut req = CreateTopicsRequest::default();
            req.topics = (from..from + 1_000)
                .map(|i| request(&name(i), 1, 1, false).topics.remove(0))
                .collect();
            let r = response(&broker, req, 7).await;
            assert_eq!(r.topics.len(), 1_000);
            for t in r.topics {
                assert_eq!(t.error_code, 0, "{}", t.name.as_str());
                ids.insert(t.name.to_string(), t.topic_id);
            }
        }
        assert_eq!(ids.len(), COUNT);
        assert_eq!(
            ids.values().collect::<std::collections::HashSet<_>>().len(),
            COUNT
        );
        let too_many = response(&broker, request("one-too-many", 1, 1, false), 7).await;
        assert_eq!(
            too_many.topics[0].error_code,
            ResponseError::PolicyViolation.code()
        );
        let partition_dirs = || {
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter(|e| e.as_ref().unwrap().path().is_dir())
                .count()
        };
        // The data directory holds the catalog (and the groups' store) only.
        let before = partition_dirs();
        assert!(before <= 1, "{before} directories");
        let mut meta = kafka_protocol::messages::MetadataRequest::default();
        meta.topics = Some(
            [0, 1_234, COUNT - 1]
                .iter()
                .map(|i| {
                    let mut t =
                        kafka_protocol::messages::metadata_request::MetadataRequestTopic::default();
                    t.name = Some(TopicName(StrBytes::from_string(name(*i))));
                    t
                })
                .collect(),
        );
        let described = crate::handlers::metadata::response(&broker, meta, 12).await;
        for t in &described.topics {
            assert_eq!(t.error_code, 0);
            assert_eq!(t.partitions.len(), 1);
            assert_eq!(
                Some(&t.topic_id),
                ids.get(t.name.as_ref().unwrap().as_str())
            );
        }
        // A write makes that partition's directory, and only that one.
        let written = broker.log.partition(&name(1_234), 0).unwrap();
        written
            .append(&crate::storage::batch::test_support::batch(3, 10))
            .unwrap();
        assert_eq!(partition_dirs(), before + 1);
        assert!(dir.path().join(format!("{}-0", name(1_234))).is_dir());
        broker.log.flush().unwrap();
        drop((written, broker));

        let reopened = open();
        assert_eq!(reopened.log.topics().len(), COUNT);
        for (n, id) in &ids {
            assert_eq!(reopened.log.topic(n).unwrap().id, *id, "{n}");
        }
        let p = reopened.log.partition(&name(1_234), 0).unwrap();
        assert_eq!(p.log_end_offset(), 3);
        assert_eq!(
            reopened
                .log
                .partition(&name(0), 0)
                .unwrap()
                .log_end_offset(),
            0
        );
        assert_eq!(partition_dirs(), before + 1);
    }

    #[tokio::test]
    async fn existing_topic_is_topic_already_exists() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        response(&broker, request("t", 1, 1, false), 3).await;
        let again = response(&broker, request("t", 1, 1, false), 3).await;
        assert_eq!(
            again.topics[0].error_code,
            ResponseError::TopicAlreadyExists.code()
        );
    }
}
