//! ListOffsets: earliest (-2), latest (-1), or the first batch at or after a
//! timestamp (found by scanning batch headers; no time index yet).

use crate::broker::Broker;
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::{ListOffsetsRequest, ListOffsetsResponse};
use kafka_protocol::ResponseError;

pub const LATEST: i64 = -1;
pub const EARLIEST: i64 = -2;

pub fn response(broker: &Broker, req: ListOffsetsRequest, version: i16) -> ListOffsetsResponse {
    let mut response = ListOffsetsResponse::default();
    response.topics = req
        .topics
        .into_iter()
        .map(|topic| {
            let mut out = ListOffsetsTopicResponse::default();
            out.partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let mut r = ListOffsetsPartitionResponse::default();
                    r.partition_index = p.partition_index;
                    r.timestamp = -1;
                    r.offset = -1;
                    let Some(partition) = broker.log.partition(&topic.name, p.partition_index)
                    else {
                        r.error_code = ResponseError::UnknownTopicOrPartition.code();
                        return r;
                    };
                    let asked = (version >= 4).then_some(p.current_leader_epoch);
                    let epoch = match broker
                        .admin
                        .leadership(&topic.name, p.partition_index, asked)
                    {
                        Ok(lead) => lead.map_or(0, |(_, epoch)| epoch),
                        Err(code) => {
                            r.error_code = code.code();
                            return r;
                        }
                    };
                    if version >= 4 {
                        r.leader_epoch = epoch;
                    }
                    match p.timestamp {
                        LATEST => r.offset = partition.high_watermark(),
                        EARLIEST => r.offset = partition.log_start_offset(),
                        ts if ts >= 0 => match partition.offset_for_timestamp(ts) {
                            Ok(Some(offset)) => {
                                r.offset = offset;
                                r.timestamp = ts;
                            }
                            Ok(None) => {}
                            Err(e) => r.error_code = e.code(),
                        },
                        _ => r.error_code = ResponseError::InvalidRequest.code(),
                    }
                    r
                })
                .collect();
            out.name = topic.name;
            out
        })
        .collect();
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use crate::storage::batch::test_support::batch;
    use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
    use kafka_protocol::messages::TopicName;
    use kafka_protocol::protocol::StrBytes;

    fn request(topic: &str, timestamp: i64) -> ListOffsetsRequest {
        let mut p = ListOffsetsPartition::default();
        p.partition_index = 0;
        p.timestamp = timestamp;
        let mut t = ListOffsetsTopic::default();
        t.name = TopicName(StrBytes::from_string(topic.to_string()));
        t.partitions = vec![p];
        let mut req = ListOffsetsRequest::default();
        req.topics = vec![t];
        req
    }

    fn offset(response: &ListOffsetsResponse) -> (i16, i64) {
        let p = &response.topics[0].partitions[0];
        (p.error_code, p.offset)
    }

    #[tokio::test]
    async fn earliest_and_latest() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        broker
            .log
            .partition("t", 0)
            .unwrap()
            .append(&batch(7, 10))
            .unwrap();
        assert_eq!(
            offset(&response(&broker, request("t", EARLIEST), 3)),
            (0, 0)
        );
        assert_eq!(offset(&response(&broker, request("t", LATEST), 3)), (0, 7));
    }

    #[tokio::test]
    async fn by_timestamp_finds_the_batch() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let p = broker.log.partition("t", 0).unwrap();
        p.append(&batch(2, 10)).unwrap();
        assert_eq!(offset(&response(&broker, request("t", 0), 3)), (0, 0));
        assert_eq!(
            offset(&response(&broker, request("t", i64::MAX), 3)),
            (0, -1)
        );
    }

    #[tokio::test]
    async fn unknown_topic_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        assert_eq!(
            offset(&response(&broker, request("nope", LATEST), 3)).0,
            ResponseError::UnknownTopicOrPartition.code()
        );
    }
}
