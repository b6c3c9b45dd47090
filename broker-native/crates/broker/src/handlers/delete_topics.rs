//! DeleteTopics: by name (v1+) or by topic id (v6), metadata and data.

use crate::broker::Broker;
use crate::error::Error;
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{DeleteTopicsRequest, DeleteTopicsResponse, TopicName};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;
use uuid::Uuid;

pub async fn response(
    broker: &Broker,
    req: DeleteTopicsRequest,
    version: i16,
) -> DeleteTopicsResponse {
    let mut response = DeleteTopicsResponse::default();
    if version >= 6 {
        for t in req.topics {
            let result = match (t.name, t.topic_id) {
                (Some(name), id) if id.is_nil() => by_name(broker, name, version).await,
                (None, id) if !id.is_nil() => by_id(broker, id, version).await,
                (name, id) => failed(
                    name,
                    id,
                    Error::kafka(
                        ResponseError::InvalidRequest,
                        "name a topic by exactly one of name and id",
                    ),
                    version,
                ),
            };
            response.responses.push(result);
        }
    } else {
        for name in req.topic_names {
            response
                .responses
                .push(by_name(broker, name, version).await);
        }
    }
    response
}

async fn by_name(broker: &Broker, name: TopicName, version: i16) -> DeletableTopicResult {
    let outcome = broker.admin.delete_topic(&name).await;
    match outcome {
        Ok(id) => {
            let mut r = DeletableTopicResult::default();
            r.name = Some(name);
            if version >= 6 {
                r.topic_id = id;
            }
            r
        }
        Err(e) => failed(Some(name), Uuid::nil(), e, version),
    }
}

async fn by_id(broker: &Broker, id: Uuid, version: i16) -> DeletableTopicResult {
    let outcome = broker.admin.delete_topic_by_id(id).await;
    match outcome {
        Ok(name) => {
            let mut r = DeletableTopicResult::default();
            r.name = Some(TopicName(StrBytes::from_string(name)));
            r.topic_id = id;
            r
        }
        Err(e) => failed(None, id, e, version),
    }
}

fn failed(name: Option<TopicName>, id: Uuid, e: Error, version: i16) -> DeletableTopicResult {
    let mut r = DeletableTopicResult::default();
    r.name = name;
    r.topic_id = id;
    r.error_code = e.code();
    if version >= 5 {
        r.error_message = Some(StrBytes::from_string(e.to_string()));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use kafka_protocol::messages::delete_topics_request::DeleteTopicState;

    fn name(s: &str) -> TopicName {
        TopicName(StrBytes::from_string(s.to_string()))
    }

    fn by_names(names: &[&str]) -> DeleteTopicsRequest {
        let mut req = DeleteTopicsRequest::default();
        req.topic_names = names.iter().map(|n| name(n)).collect();
        req
    }

    #[tokio::test]
    async fn deletes_by_name_before_v6() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 2, false).unwrap();
        let r = response(&broker, by_names(&["t"]), 4).await;
        assert_eq!(r.responses[0].error_code, 0);
        assert!(broker.log.topic("t").is_none());
        assert!(!dir.path().join("t-0").exists());
    }

    #[tokio::test]
    async fn deletes_by_id_in_v6() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let id = broker.log.create_topic("t", 1, false).unwrap().id;
        let mut state = DeleteTopicState::default();
        state.topic_id = id;
        let mut req = DeleteTopicsRequest::default();
        req.topics = vec![state];
        let r = response(&broker, req, 6).await;
        assert_eq!(r.responses[0].error_code, 0);
        assert_eq!(r.responses[0].name.as_ref().map(|n| n.as_str()), Some("t"));
        assert!(broker.log.topic("t").is_none());
    }

    #[tokio::test]
    async fn unknown_name_is_unknown_topic_or_partition() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let r = response(&broker, by_names(&["nope"]), 5).await;
        assert_eq!(
            r.responses[0].error_code,
            ResponseError::UnknownTopicOrPartition.code()
        );
        assert!(r.responses[0].error_message.is_some());
    }

    #[tokio::test]
    async fn unknown_id_is_unknown_topic_id() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let mut state = DeleteTopicState::default();
        state.topic_id = Uuid::new_v4();
        let mut req = DeleteTopicsRequest::default();
        req.topics = vec![state];
        let r = response(&broker, req, 6).await;
        assert_eq!(
            r.responses[0].error_code,
            ResponseError::UnknownTopicId.code()
        );
    }
}
