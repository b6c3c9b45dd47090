//! CreatePartitions: grow a topic's partition count (never shrink it).

use crate::broker::Broker;
use crate::error::Error;
use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::{CreatePartitionsRequest, CreatePartitionsResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;

pub async fn response(
    broker: &Broker,
    req: CreatePartitionsRequest,
    _version: i16,
) -> CreatePartitionsResponse {
    let mut response = CreatePartitionsResponse::default();
    for topic in req.topics {
        response
            .results
            .push(grow(broker, topic, req.validate_only).await);
    }
    response
}

async fn grow(
    broker: &Broker,
    topic: CreatePartitionsTopic,
    validate_only: bool,
) -> CreatePartitionsTopicResult {
    let mut result = CreatePartitionsTopicResult::default();
    let outcome = match check_assignments(broker, &topic) {
        Err(e) => Err(e),
        Ok(()) => {
            broker
                .admin
                .create_partitions(&topic.name, topic.count, validate_only)
                .await
        }
    };
    if let Err(e) = outcome {
        result.error_code = e.code();
        result.error_message = Some(StrBytes::from_string(e.to_string()));
    }
    result.name = topic.name;
    result
}

/// Manual assignments may only name this node, one replica per new partition.
fn check_assignments(broker: &Broker, topic: &CreatePartitionsTopic) -> Result<(), Error> {
    let assignments = match &topic.assignments {
        Some(a) if !a.is_empty() => a,
        _ => return Ok(()),
    };
    let invalid = |message: String| Error::kafka(ResponseError::InvalidReplicaAssignment, message);
    let current = broker
        .log
        .topic(&topic.name)
        .map_or(0, |t| t.partitions.len() as i32);
    if current > 0 && assignments.len() as i32 != topic.count - current {
        return Err(invalid(format!(
            "{} assignments for {} new partitions",
            assignments.len(),
            topic.count - current
        )));
    }
    for a in assignments {
        if a.broker_ids.iter().any(|id| id.0 != broker.config.node_id) || a.broker_ids.len() != 1 {
            return Err(invalid(format!(
                "only broker {} exists, with one replica per partition",
                broker.config.node_id
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use kafka_protocol::messages::create_partitions_request::CreatePartitionsAssignment;
    use kafka_protocol::messages::{BrokerId, TopicName};

    fn request(name: &str, count: i32, validate_only: bool) -> CreatePartitionsRequest {
        let mut t = CreatePartitionsTopic::default();
        t.name = TopicName(StrBytes::from_string(name.to_string()));
        t.count = count;
        let mut req = CreatePartitionsRequest::default();
        req.topics = vec![t];
        req.validate_only = validate_only;
        req
    }

    #[tokio::test]
    async fn grows_the_topic() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(&broker, request("t", 4, false), 3).await;
        assert_eq!(r.results[0].error_code, 0);
        assert_eq!(broker.log.topic("t").unwrap().partitions.len(), 4);
    }

    #[tokio::test]
    async fn validate_only_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(&broker, request("t", 4, true), 0).await;
        assert_eq!(r.results[0].error_code, 0);
        assert_eq!(broker.log.topic("t").unwrap().partitions.len(), 1);
    }

    #[tokio::test]
    async fn same_or_lower_count_is_invalid_partitions() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 2, false).unwrap();
        for count in [1, 2] {
            let r = response(&broker, request("t", count, false), 2).await;
            assert_eq!(
                r.results[0].error_code,
                ResponseError::InvalidPartitions.code()
            );
        }
    }

    #[tokio::test]
    async fn unknown_topic_is_unknown_topic_or_partition() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let r = response(&broker, request("nope", 2, false), 1).await;
        assert_eq!(
            r.results[0].error_code,
            ResponseError::UnknownTopicOrPartition.code()
        );
    }

    fn limited_broker(dir: &std::path::Path, per_topic: i32, total: usize) -> Broker {
        let mut config = crate::BrokerConfig::new(dir);
        config.limits.max_partitions_per_topic = per_topic;
        config.limits.max_partitions = total;
        Broker::open(config, 9092).unwrap()
    }

    fn partition_dirs(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("t-")
            })
            .count()
    }

    /// One mutated CreatePartitions once made 1.27 million directories.
    #[tokio::test]
    async fn growth_beyond_the_limits_is_refused_and_makes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let broker = limited_broker(dir.path(), 100, 150);
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(&broker, request("t", 1_000_000, false), 3).await;
        assert_eq!(
            r.results[0].error_code,
            ResponseError::InvalidPartitions.code()
        );
        assert!(r.results[0]
            .error_message
            .as_deref()
            .unwrap()
            .contains("max.partitions.per.topic"));
        broker.log.create_topic("u", 100, false).unwrap();
        let r = response(&broker, request("t", 60, false), 3).await;
        assert_eq!(
            r.results[0].error_code,
            ResponseError::PolicyViolation.code()
        );
        assert_eq!(broker.log.topic("t").unwrap().partitions.len(), 1);
        assert_eq!(partition_dirs(dir.path()), 0);
        // Within both limits it grows; a partition's directory comes with
        // its first write.
        let r = response(&broker, request("t", 50, false), 3).await;
        assert_eq!(r.results[0].error_code, 0);
        assert_eq!(broker.log.topic("t").unwrap().partitions.len(), 50);
        assert_eq!(partition_dirs(dir.path()), 0);
        broker
            .log
            .partition("t", 49)
            .unwrap()
            .append(&crate::storage::batch::test_support::batch(1, 10))
            .unwrap();
        assert_eq!(partition_dirs(dir.path()), 1);
    }

    #[tokio::test]
    async fn a_create_that_fails_part_way_leaves_no_directory_behind() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        // A file where partition 3's directory must go: the 4th open fails.
        std::fs::write(dir.path().join("t-3"), b"in the way").unwrap();
        let r = response(&broker, request("t", 6, false), 3).await;
        assert_ne!(r.results[0].error_code, 0);
        assert_eq!(broker.log.topic("t").unwrap().partitions.len(), 1);
        std::fs::remove_file(dir.path().join("t-3")).unwrap();
        assert_eq!(partition_dirs(dir.path()), 0, "no directory left behind");
        // Nothing half-made stands in the way of a retry.
        let r = response(&broker, request("t", 6, false), 3).await;
        assert_eq!(r.results[0].error_code, 0);
    }

    #[tokio::test]
    async fn assignment_to_another_broker_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let mut req = request("t", 2, false);
        let mut a = CreatePartitionsAssignment::default();
        a.broker_ids = vec![BrokerId(7)];
        req.topics[0].assignments = Some(vec![a]);
        let r = response(&broker, req, 1).await;
        assert_eq!(
            r.results[0].error_code,
            ResponseError::InvalidReplicaAssignment.code()
        );
    }
}
