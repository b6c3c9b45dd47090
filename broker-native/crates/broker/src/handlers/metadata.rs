//! Metadata: the live brokers, the controller, and each partition's leader,
//! replicas and in-sync replicas (this node alone on a lone broker; the
//! cluster state on a cluster node), as topic administration tells them.

use crate::admin::NewTopic;
use crate::broker::Broker;
use crate::error::Error;
use crate::storage::Topic;
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{BrokerId, MetadataRequest, MetadataResponse, TopicName};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;
use std::sync::Arc;
use uuid::Uuid;

pub async fn response(broker: &Broker, req: MetadataRequest, version: i16) -> MetadataResponse {
    let mut response = MetadataResponse::default();
    response.brokers = broker
        .admin
        .advertised_nodes()
        .into_iter()
        .map(|(id, host, port)| {
            let mut b = MetadataResponseBroker::default();
            b.node_id = BrokerId(id);
            b.host = StrBytes::from_string(host);
            b.port = i32::from(port);
            b
        })
        .collect();
    if version >= 2 {
        response.cluster_id = Some(StrBytes::from_string(broker.config.cluster_id.clone()));
    }
    if version >= 1 {
        response.controller_id = BrokerId(broker.admin.controller_id());
    }

    // v0 has no null array: an empty list there means "all topics".
    let requested = match req.topics {
        Some(topics) if !(version == 0 && topics.is_empty()) => Some(topics),
        _ => None,
    };
    response.topics = match requested {
        None => broker
            .log
            .topics()
            .iter()
            .map(|t| topic_metadata(broker, t, version))
            .collect(),
        Some(topics) => {
            // Before v4 there is no flag and the broker setting alone decides.
            let allow_create = version < 4 || req.allow_auto_topic_creation;
            // A topic named (or identified) twice is answered once, as Kafka answers a set:
            // each answer can be as large as its partitions, so a few bytes a name must not
            // buy a copy each (a 5 KB request naming one 10,000-partition topic a thousand
            // times got a 260 MB answer).
            let mut names = std::collections::HashSet::new();
            let mut ids = std::collections::HashSet::new();
            let mut out = Vec::new();
            for t in topics {
                out.push(match t.name {
                    Some(name) if names.insert(name.clone()) => {
                        by_name(broker, name, allow_create, version).await
                    }
                    None if ids.insert(t.topic_id) => by_id(broker, t.topic_id, version),
                    _ => continue,
                });
            }
            out
        }
    };
    response
}

async fn by_name(
    broker: &Broker,
    name: TopicName,
    allow_create: bool,
    version: i16,
) -> MetadataResponseTopic {
    if let Some(topic) = broker.log.topic(&name) {
        return topic_metadata(broker, &topic, version);
    }
    if allow_create && broker.config.auto_create_topics {
        // Kafka's auto.create.topics.enable: the default partition count and
        // replication factor 1, through the same path as CreateTopics.
        let new = NewTopic {
            name: &name,
            partitions: broker.config.default_partitions,
            replication_factor: -1,
            configs: &[],
        };
        let created = broker.admin.create_topic(new, false).await.map(|_| ());
        match created {
            Ok(())
            | Err(Error::Kafka {
                code: ResponseError::TopicAlreadyExists,
                ..
            }) => {
                if let Some(topic) = broker.log.topic(&name) {
                    return topic_metadata(broker, &topic, version);
                }
                // Created in the cluster but not applied here yet: the
                // client asks again, as it does for a new topic in Kafka.
                return error_topic(
                    Some(name),
                    Uuid::nil(),
                    ResponseError::LeaderNotAvailable.code(),
                );
            }
            Err(e) => return error_topic(Some(name), Uuid::nil(), e.code()),
        }
    }
    error_topic(
        Some(name),
        Uuid::nil(),
        ResponseError::UnknownTopicOrPartition.code(),
    )
}

fn by_id(broker: &Broker, id: Uuid, version: i16) -> MetadataResponseTopic {
    match broker.log.topic_by_id(id) {
        Some(topic) => topic_metadata(broker, &topic, version),
        None => error_topic(None, id, ResponseError::UnknownTopicId.code()),
    }
}

fn error_topic(name: Option<TopicName>, id: Uuid, code: i16) -> MetadataResponseTopic {
    let mut topic = MetadataResponseTopic::default();
    topic.error_code = code;
    topic.name = name;
    topic.topic_id = id;
    topic
}

fn topic_metadata(broker: &Broker, topic: &Arc<Topic>, version: i16) -> MetadataResponseTopic {
    let mut out = MetadataResponseTopic::default();
    out.name = Some(TopicName(StrBytes::from_string(topic.name.clone())));
    if version >= 10 {
        out.topic_id = topic.id;
    }
    let Some(placement) = broker.admin.placement(topic) else {
        out.error_code = ResponseError::UnknownTopicOrPartition.code();
        return out;
    };
    let ids = |v: &[i32]| v.iter().map(|r| BrokerId(*r)).collect::<Vec<_>>();
    out.partitions = placement
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let mut p = MetadataResponsePartition::default();
            p.partition_index = index as i32;
            p.leader_id = BrokerId(s.leader);
            if s.leader < 0 {
                p.error_code = ResponseError::LeaderNotAvailable.code();
            }
            if version >= 7 {
                p.leader_epoch = s.leader_epoch;
            }
            p.replica_nodes = ids(&s.replicas);
            p.isr_nodes = ids(&s.isr);
            if version >= 5 {
                p.offline_replicas = ids(&s.offline);
            }
            p
        })
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use kafka_protocol::messages::metadata_request::MetadataRequestTopic;

    fn request(names: &[&str]) -> MetadataRequest {
        let mut req = MetadataRequest::default();
        req.topics = Some(
            names
                .iter()
                .map(|n| {
                    let mut t = MetadataRequestTopic::default();
                    t.name = Some(TopicName(StrBytes::from_string(n.to_string())));
                    t
                })
                .collect(),
        );
        req.allow_auto_topic_creation = true;
        req
    }

    #[tokio::test]
    async fn known_topic_has_this_node_as_leader_and_replica() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 2, false).unwrap();
        let response = response(&broker, request(&["t"]), 9).await;
        assert_eq!(response.brokers[0].port, 9092);
        assert_eq!(response.controller_id, BrokerId(1));
        let topic = &response.topics[0];
        assert_eq!(topic.error_code, 0);
        assert_eq!(topic.partitions.len(), 2);
        assert_eq!(topic.partitions[1].leader_id, BrokerId(1));
        assert_eq!(topic.partitions[1].isr_nodes, vec![BrokerId(1)]);
    }

    #[tokio::test]
    async fn a_topic_named_many_times_is_answered_once() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 3, false).unwrap();
        broker.log.create_topic("u", 1, false).unwrap();
        let names: Vec<&str> = std::iter::repeat_n("t", 1000).chain(["u", "t"]).collect();
        let response = response(&broker, request(&names), 9).await;
        let answered: Vec<_> = response
            .topics
            .iter()
            .map(|t| t.name.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(answered, ["t", "u"]);
        assert_eq!(response.topics[0].partitions.len(), 3);
    }

    #[tokio::test]
    async fn unknown_topic_is_not_created_by_default() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let response = response(&broker, request(&["nope"]), 9).await;
        assert_eq!(
            response.topics[0].error_code,
            ResponseError::UnknownTopicOrPartition.code()
        );
        assert!(broker.log.topic("nope").is_none());
    }

    #[tokio::test]
    async fn unknown_topic_is_created_when_the_broker_allows_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = crate::config::BrokerConfig::new(dir.path());
        config.auto_create_topics = true;
        let broker = Broker::open(config, 9092).unwrap();
        let response = response(&broker, request(&["auto"]), 9).await;
        assert_eq!(response.topics[0].error_code, 0);
        assert_eq!(response.topics[0].partitions.len(), 1);
    }

    #[tokio::test]
    async fn v0_empty_list_means_all_topics() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("a", 1, false).unwrap();
        broker.log.create_topic("b", 1, false).unwrap();
        assert_eq!(response(&broker, request(&[]), 0).await.topics.len(), 2);
        assert_eq!(response(&broker, request(&[]), 1).await.topics.len(), 0);
    }
}
