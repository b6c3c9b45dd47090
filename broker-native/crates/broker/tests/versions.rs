//! Every advertised version of every API this crate answers itself encodes
//! a response that decodes again, on both the success and the error paths.

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use kbench_broker_core::broker::Broker;
use kbench_broker_core::codec::{DecodedRequest, Request};
use kbench_broker_core::handlers::dispatch;
use kbench_broker_core::BrokerConfig;

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

fn batch() -> Bytes {
    let record = Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence: 0,
        timestamp: 1_700_000_000_000,
        key: Some(Bytes::from_static(b"k")),
        value: Some(Bytes::from_static(b"v")),
        headers: IndexMap::new(),
    };
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        [&record],
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    buf.freeze()
}

/// A request for `topic` (which may not exist) in the given API.
fn request(api_key: ApiKey, version: i16, topic: &str) -> Request {
    match api_key {
        ApiKey::ApiVersions => Request::ApiVersions(ApiVersionsRequest::default()),
        ApiKey::Metadata => {
            let mut t = MetadataRequestTopic::default();
            t.name = Some(name(topic));
            let mut r = MetadataRequest::default();
            r.topics = Some(vec![t]);
            Request::Metadata(r)
        }
        ApiKey::CreateTopics => {
            let mut t = CreatableTopic::default();
            t.name = name(topic);
            t.num_partitions = 1;
            t.replication_factor = 1;
            let mut r = CreateTopicsRequest::default();
            r.topics = vec![t];
            Request::CreateTopics(r)
        }
        ApiKey::Produce => {
            let mut p = PartitionProduceData::default();
            p.records = Some(batch());
            let mut t = TopicProduceData::default();
            t.name = name(topic);
            t.partition_data = vec![p];
            let mut r = ProduceRequest::default();
            r.acks = 1;
            r.topic_data = vec![t];
            Request::Produce(r)
        }
        ApiKey::Fetch => {
            let mut p = FetchPartition::default();
            p.partition_max_bytes = 1 << 20;
            let mut t = FetchTopic::default();
            t.topic = name(topic);
            t.partitions = vec![p];
            let mut r = FetchRequest::default();
            r.max_bytes = 1 << 20;
            r.session_epoch = -1;
            r.topics = vec![t];
            Request::Fetch(r)
        }
        ApiKey::ListOffsets => {
            let mut p = ListOffsetsPartition::default();
            p.timestamp = -2;
            let mut t = ListOffsetsTopic::default();
            t.name = name(topic);
            t.partitions = vec![p];
            let mut r = ListOffsetsRequest::default();
            r.topics = vec![t];
            Request::ListOffsets(r)
        }
        ApiKey::FindCoordinator => {
            let mut r = FindCoordinatorRequest::default();
            if version >= 4 {
                r.coordinator_keys = vec![StrBytes::from_static_str("g")];
            } else {
                r.key = StrBytes::from_static_str("g");
            }
            Request::FindCoordinator(r)
        }
        ApiKey::DeleteTopics => {
            let mut r = DeleteTopicsRequest::default();
            if version >= 6 {
                let mut t = delete_topics_request::DeleteTopicState::default();
                t.name = Some(name(topic));
                r.topics = vec![t];
            } else {
                r.topic_names = vec![name(topic)];
            }
            Request::DeleteTopics(r)
        }
        ApiKey::CreatePartitions => {
            let mut t = create_partitions_request::CreatePartitionsTopic::default();
            t.name = name(topic);
            t.count = 2;
            let mut r = CreatePartitionsRequest::default();
            r.topics = vec![t];
            r.validate_only = true;
            Request::CreatePartitions(r)
        }
        ApiKey::DescribeConfigs => {
            let mut res = describe_configs_request::DescribeConfigsResource::default();
            res.resource_type = 2;
            res.resource_name = StrBytes::from_string(topic.to_string());
            let mut r = DescribeConfigsRequest::default();
            r.resources = vec![res];
            r.include_synonyms = true;
            r.include_documentation = true;
            Request::DescribeConfigs(r)
        }
        ApiKey::IncrementalAlterConfigs => {
            let mut c = incremental_alter_configs_request::AlterableConfig::default();
            c.name = StrBytes::from_static_str("retention.ms");
            c.value = Some(StrBytes::from_static_str("60000"));
            let mut res = incremental_alter_configs_request::AlterConfigsResource::default();
            res.resource_type = 2;
            res.resource_name = StrBytes::from_string(topic.to_string());
            res.configs = vec![c];
            let mut r = IncrementalAlterConfigsRequest::default();
            r.resources = vec![res];
            Request::IncrementalAlterConfigs(r)
        }
        ApiKey::InitProducerId => {
            let mut r = InitProducerIdRequest::default();
            r.transactional_id = None;
            Request::InitProducerId(r)
        }
        ApiKey::DescribeCluster => Request::DescribeCluster(DescribeClusterRequest::default()),
        other => panic!("no request builder for {other:?}"),
    }
}

fn decode_response(api_key: ApiKey, version: i16, mut frame: BytesMut) {
    let size = frame.get_i32() as usize;
    assert_eq!(size, frame.len());
    ResponseHeader::decode(&mut frame, api_key.response_header_version(version)).unwrap();
    let result = match api_key {
        ApiKey::ApiVersions => ApiVersionsResponse::decode(&mut frame, version).map(drop),
        ApiKey::Metadata => MetadataResponse::decode(&mut frame, version).map(drop),
        ApiKey::CreateTopics => CreateTopicsResponse::decode(&mut frame, version).map(drop),
        ApiKey::Produce => ProduceResponse::decode(&mut frame, version).map(drop),
        ApiKey::Fetch => FetchResponse::decode(&mut frame, version).map(drop),
        ApiKey::ListOffsets => ListOffsetsResponse::decode(&mut frame, version).map(drop),
        ApiKey::FindCoordinator => FindCoordinatorResponse::decode(&mut frame, version).map(drop),
        ApiKey::DeleteTopics => DeleteTopicsResponse::decode(&mut frame, version).map(drop),
        ApiKey::CreatePartitions => CreatePartitionsResponse::decode(&mut frame, version).map(drop),
        ApiKey::DescribeConfigs => DescribeConfigsResponse::decode(&mut frame, version).map(drop),
        ApiKey::IncrementalAlterConfigs => {
            IncrementalAlterConfigsResponse::decode(&mut frame, version).map(drop)
        }
        ApiKey::InitProducerId => InitProducerIdResponse::decode(&mut frame, version).map(drop),
        ApiKey::DescribeCluster => DescribeClusterResponse::decode(&mut frame, version).map(drop),
        other => panic!("no decoder for {other:?}"),
    };
    result.unwrap_or_else(|e| panic!("{api_key:?} v{version}: {e}"));
    assert!(
        !frame.has_remaining(),
        "{api_key:?} v{version}: trailing bytes"
    );
}

const OWN_APIS: [ApiKey; 13] = [
    ApiKey::ApiVersions,
    ApiKey::Metadata,
    ApiKey::CreateTopics,
    ApiKey::Produce,
    ApiKey::Fetch,
    ApiKey::ListOffsets,
    ApiKey::FindCoordinator,
    ApiKey::CreatePartitions,
    ApiKey::DescribeConfigs,
    ApiKey::IncrementalAlterConfigs,
    ApiKey::InitProducerId,
    ApiKey::DescribeCluster,
    // Last: it deletes the topic the others use.
    ApiKey::DeleteTopics,
];

async fn sweep(topic: &str, fresh_topic_per_create: bool) {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::open(BrokerConfig::new(dir.path()), 9092).unwrap();
    broker.log.create_topic("t", 1, false).unwrap();
    let supported: Vec<_> = broker.apis.iter().copied().collect();
    let peer = "127.0.0.1:1".parse().unwrap();
    for api_key in OWN_APIS {
        let (_, min, max) = *supported.iter().find(|(k, _, _)| *k == api_key).unwrap();
        for version in min..=max {
            let mut header = RequestHeader::default();
            header.request_api_key = api_key as i16;
            header.request_api_version = version;
            header.correlation_id = i32::from(version);
            let topic = if fresh_topic_per_create && api_key == ApiKey::CreateTopics {
                format!("new-{version}")
            } else {
                topic.to_string()
            };
            if fresh_topic_per_create && api_key == ApiKey::DeleteTopics {
                // Each version deletes an existing topic on the success path.
                let _ = broker.log.create_topic(&topic, 1, false);
            }
            let body = request(api_key, version, &topic);
            let frame = dispatch(
                &broker,
                DecodedRequest {
                    header,
                    api_key,
                    body,
                },
                peer,
            )
            .await
            .unwrap_or_else(|e| panic!("{api_key:?} v{version}: {e}"))
            .expect("a response");
            decode_response(api_key, version, frame.to_contiguous());
        }
    }
}

#[tokio::test]
async fn every_version_encodes_on_the_success_path() {
    sweep("t", true).await;
}

#[tokio::test]
async fn every_version_encodes_on_the_error_path() {
    // Unknown topic everywhere; CreateTopics of an existing one.
    sweep("missing", false).await;
    sweep("t", false).await;
}
