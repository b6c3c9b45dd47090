//! Produce: validate each partition's batches and append them as sent.

use crate::broker::Broker;
use crate::stats::Stats;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;

/// `None` when acks=0: the client expects no response at all.
pub fn response(broker: &Broker, req: ProduceRequest, version: i16) -> Option<ProduceResponse> {
    Stats::add(&broker.stats.produce_requests, 1);
    // On a single node, acks=all is satisfied as soon as the leader has it.
    let acks_valid = matches!(req.acks, -1..=1);
    let responses = req
        .topic_data
        .into_iter()
        .map(|topic| {
            let mut out = TopicProduceResponse::default();
            out.partition_responses = topic
                .partition_data
                .into_iter()
                .map(|data| {
                    let mut p = PartitionProduceResponse::default();
                    p.index = data.index;
                    p.log_append_time_ms = -1;
                    let partition = broker.log.partition(&topic.name, data.index);
                    let result = match (&partition, data.records) {
                        _ if !acks_valid => Err((ResponseError::InvalidRequiredAcks.code(), None)),
                        (None, _) => Err((ResponseError::UnknownTopicOrPartition.code(), None)),
                        (Some(_), None) => Err((ResponseError::CorruptMessage.code(), None)),
                        (Some(partition), Some(records)) => partition
                            .append(&records)
                            .map_err(|e| (e.code(), Some(e.to_string()))),
                    };
                    match result {
                        Ok(appended) => p.base_offset = appended.base_offset,
                        Err((code, message)) => {
                            p.error_code = code;
                            p.base_offset = -1;
                            if version >= 8 {
                                p.error_message = message.map(StrBytes::from_string);
                            }
                        }
                    }
                    if version >= 5 {
                        p.log_start_offset = partition.map_or(-1, |p| p.log_start_offset());
                    }
                    p
                })
                .collect();
            out.name = topic.name;
            out
        })
        .collect();
    if req.acks == 0 {
        return None;
    }
    let mut response = ProduceResponse::default();
    response.responses = responses;
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use crate::storage::batch::test_support::batch;
    use bytes::Bytes;
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::TopicName;

    fn request(topic: &str, partition: i32, records: Vec<u8>, acks: i16) -> ProduceRequest {
        let mut data = PartitionProduceData::default();
        data.index = partition;
        data.records = Some(Bytes::from(records));
        let mut t = TopicProduceData::default();
        t.name = TopicName(StrBytes::from_string(topic.to_string()));
        t.partition_data = vec![data];
        let mut req = ProduceRequest::default();
        req.acks = acks;
        req.timeout_ms = 1000;
        req.topic_data = vec![t];
        req
    }

    fn first(response: &ProduceResponse) -> &PartitionProduceResponse {
        &response.responses[0].partition_responses[0]
    }

    #[tokio::test]
    async fn appends_and_returns_base_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r1 = response(&broker, request("t", 0, batch(5, 10), 1), 7).unwrap();
        let r2 = response(&broker, request("t", 0, batch(5, 10), -1), 7).unwrap();
        assert_eq!((first(&r1).error_code, first(&r1).base_offset), (0, 0));
        assert_eq!((first(&r2).error_code, first(&r2).base_offset), (0, 5));
    }

    #[tokio::test]
    async fn acks_zero_appends_without_a_response() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        assert!(response(&broker, request("t", 0, batch(3, 10), 0), 7).is_none());
        assert_eq!(broker.log.partition("t", 0).unwrap().high_watermark(), 3);
    }

    #[tokio::test]
    async fn corrupt_batch_is_a_partition_error() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let mut bad = batch(3, 10);
        let last = bad.len() - 1;
        bad[last] ^= 0x55;
        let r = response(&broker, request("t", 0, bad, 1), 7).unwrap();
        assert_eq!(first(&r).error_code, ResponseError::CorruptMessage.code());
    }

    #[tokio::test]
    async fn unknown_partition_is_unknown_topic_or_partition() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(&broker, request("t", 4, batch(1, 10), 1), 7).unwrap();
        assert_eq!(
            first(&r).error_code,
            ResponseError::UnknownTopicOrPartition.code()
        );
    }
}
