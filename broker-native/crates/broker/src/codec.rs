//! Framing and request/response encoding, without I/O: a frame is a 4-byte
//! big-endian size followed by a request header and body.
//!
//! Responses are [`Frame`]s: one buffer for most APIs, a list of chunks for
//! Fetch, whose record data is referenced rather than copied ([`fetch`]).

pub mod bounds;
pub mod fetch;
pub mod frame;

pub use fetch::encode_fetch_response;
pub use frame::Frame;

use crate::error::{Error, Result};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable};

/// The size prefix of the next frame in `buf`, or `None` until 4 bytes
/// have arrived. A size above `max_frame_bytes` (or negative) is an error.
pub fn peek_frame_size(buf: &[u8], max_frame_bytes: usize) -> Result<Option<usize>> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let size = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    if size < 0 || size as usize > max_frame_bytes {
        return Err(Error::FrameTooLarge {
            size: size.max(0) as usize,
            max: max_frame_bytes,
        });
    }
    Ok(Some(size as usize))
}

/// A decoded request body, for the APIs this broker understands.
#[derive(Debug)]
pub enum Request {
    ApiVersions(ApiVersionsRequest),
    Metadata(MetadataRequest),
    CreateTopics(CreateTopicsRequest),
    Produce(ProduceRequest),
    Fetch(FetchRequest),
    ListOffsets(ListOffsetsRequest),
    FindCoordinator(FindCoordinatorRequest),
    JoinGroup(JoinGroupRequest),
    SyncGroup(SyncGroupRequest),
    Heartbeat(HeartbeatRequest),
    LeaveGroup(LeaveGroupRequest),
    OffsetCommit(OffsetCommitRequest),
    OffsetFetch(OffsetFetchRequest),
    ListGroups(ListGroupsRequest),
    DescribeGroups(DescribeGroupsRequest),
    DeleteTopics(DeleteTopicsRequest),
    CreatePartitions(CreatePartitionsRequest),
    DescribeConfigs(DescribeConfigsRequest),
    IncrementalAlterConfigs(IncrementalAlterConfigsRequest),
    AlterConfigs(AlterConfigsRequest),
    InitProducerId(InitProducerIdRequest),
    DescribeCluster(DescribeClusterRequest),
    SaslHandshake(SaslHandshakeRequest),
    SaslAuthenticate(SaslAuthenticateRequest),
    /// An ApiVersions request of a version we do not speak: answered with
    /// UNSUPPORTED_VERSION in a v0 response, as Kafka does.
    UnsupportedApiVersions,
}

#[derive(Debug)]
pub struct DecodedRequest {
    pub header: RequestHeader,
    pub api_key: ApiKey,
    pub body: Request,
}

/// Which versions of which APIs the broker accepts.
pub trait VersionTable {
    fn supports(&self, api_key: ApiKey, version: i16) -> bool;
}

/// Decodes one frame body (without its size prefix).
pub fn decode_request(mut frame: Bytes, versions: &impl VersionTable) -> Result<DecodedRequest> {
    if frame.len() < 4 {
        return Err(Error::Malformed(
            "frame shorter than a request header".into(),
        ));
    }
    let raw_key = i16::from_be_bytes([frame[0], frame[1]]);
    let version = i16::from_be_bytes([frame[2], frame[3]]);
    let unsupported = Error::UnsupportedApi {
        api_key: raw_key,
        version,
    };
    let api_key = ApiKey::try_from(raw_key).map_err(|_| unsupported)?;
    if !versions.supports(api_key, version) {
        if api_key == ApiKey::ApiVersions && version >= 0 {
            // Header v1 is a prefix of v2: enough for correlation id and client id.
            let header = RequestHeader::decode(&mut frame, 1).map_err(malformed)?;
            return Ok(DecodedRequest {
                header,
                api_key,
                body: Request::UnsupportedApiVersions,
            });
        }
        return Err(Error::UnsupportedApi {
            api_key: raw_key,
            version,
        });
    }
    let header = RequestHeader::decode(&mut frame, api_key.request_header_version(version))
        .map_err(malformed)?;
    // No count from the wire reaches the decoder unchecked (see `bounds`).
    bounds::check(raw_key, version, &frame)
        .map_err(|e| Error::Malformed(format!("{api_key:?} v{version}: {e}")))?;
    let body = decode_body(api_key, &mut frame, version)?;
    if frame.has_remaining() {
        // Apache Kafka reads what the schema names and ignores the rest, and
        // clients rely on it: librdkafka 2.16 sends Metadata v12 with 3 bytes
        // past the body (confluent-kafka's list_topics failed here).
        tracing::debug!(
            "{} trailing bytes after {api_key:?} v{version} ignored",
            frame.remaining()
        );
    }
    Ok(DecodedRequest {
        header,
        api_key,
        body,
    })
}

fn decode_body(api_key: ApiKey, buf: &mut Bytes, version: i16) -> Result<Request> {
    fn d<T: Decodable>(buf: &mut Bytes, version: i16) -> Result<T> {
        T::decode(buf, version).map_err(malformed)
    }
    Ok(match api_key {
        ApiKey::ApiVersions => Request::ApiVersions(d(buf, version)?),
        ApiKey::Metadata => Request::Metadata(d(buf, version)?),
        ApiKey::CreateTopics => Request::CreateTopics(d(buf, version)?),
        ApiKey::Produce => Request::Produce(d(buf, version)?),
        ApiKey::Fetch => Request::Fetch(d(buf, version)?),
        ApiKey::ListOffsets => Request::ListOffsets(d(buf, version)?),
        ApiKey::FindCoordinator => Request::FindCoordinator(d(buf, version)?),
        ApiKey::JoinGroup => Request::JoinGroup(d(buf, version)?),
        ApiKey::SyncGroup => Request::SyncGroup(d(buf, version)?),
        ApiKey::Heartbeat => Request::Heartbeat(d(buf, version)?),
        ApiKey::LeaveGroup => Request::LeaveGroup(d(buf, version)?),
        ApiKey::OffsetCommit => Request::OffsetCommit(d(buf, version)?),
        ApiKey::OffsetFetch => Request::OffsetFetch(d(buf, version)?),
        ApiKey::ListGroups => Request::ListGroups(d(buf, version)?),
        ApiKey::DescribeGroups => Request::DescribeGroups(d(buf, version)?),
        ApiKey::DeleteTopics => Request::DeleteTopics(d(buf, version)?),
        ApiKey::CreatePartitions => Request::CreatePartitions(d(buf, version)?),
        ApiKey::DescribeConfigs => Request::DescribeConfigs(d(buf, version)?),
        ApiKey::IncrementalAlterConfigs => Request::IncrementalAlterConfigs(d(buf, version)?),
        ApiKey::InitProducerId => Request::InitProducerId(d(buf, version)?),
        ApiKey::AlterConfigs => Request::AlterConfigs(d(buf, version)?),
        ApiKey::DescribeCluster => Request::DescribeCluster(d(buf, version)?),
        ApiKey::SaslHandshake => Request::SaslHandshake(d(buf, version)?),
        ApiKey::SaslAuthenticate => Request::SaslAuthenticate(d(buf, version)?),
        other => {
            return Err(Error::UnsupportedApi {
                api_key: other as i16,
                version,
            })
        }
    })
}

/// Encodes a whole response frame: size, response header, body.
pub fn encode_response<R: Encodable>(
    correlation_id: i32,
    api_key: ApiKey,
    version: i16,
    body: &R,
) -> Result<BytesMut> {
    let header_version = api_key.response_header_version(version);
    encode_response_with_header_version(correlation_id, header_version, version, body)
}

pub fn encode_response_with_header_version<R: Encodable>(
    correlation_id: i32,
    header_version: i16,
    version: i16,
    body: &R,
) -> Result<BytesMut> {
    let mut header = ResponseHeader::default();
    header.correlation_id = correlation_id;
    let size = header
        .compute_size(header_version)
        .and_then(|h| Ok(h + body.compute_size(version)?))
        .map_err(|e| Error::Malformed(format!("sizing response: {e}")))?;
    // A frame's size prefix is an i32: a larger answer cannot be sent, and is refused before
    // anything of it is allocated rather than sent with a wrong size.
    let prefix = i32::try_from(size).map_err(|_| {
        Error::Malformed(format!(
            "a response of {size} bytes exceeds the i32 size prefix"
        ))
    })?;
    let mut buf = BytesMut::with_capacity(4 + size);
    buf.put_i32(prefix);
    header
        .encode(&mut buf, header_version)
        .and_then(|_| body.encode(&mut buf, version))
        .map_err(|e| Error::Malformed(format!("encoding response: {e}")))?;
    Ok(buf)
}

fn malformed(e: anyhow::Error) -> Error {
    Error::Malformed(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct All;
    impl VersionTable for All {
        fn supports(&self, api_key: ApiKey, version: i16) -> bool {
            let range = api_key.valid_versions();
            version >= range.min && version <= range.max && api_key != ApiKey::ApiVersions
                || api_key == ApiKey::ApiVersions && (0..=3).contains(&version)
        }
    }

    /// ApiVersions v3 as librdkafka 2.0 sends it (after the size prefix).
    const API_VERSIONS_V3_REQUEST: &[u8] = b"\x00\x12\x00\x03\x00\x00\x00\x01\x00\x07rdkafka\x00\
\x0blibrdkafka\x062.0.2\x00";

    /// Metadata v1 for topic "t" with client id "kafkajs".
    const METADATA_V1_REQUEST: &[u8] =
        b"\x00\x03\x00\x01\x00\x00\x00\x02\x00\x07kafkajs\x00\x00\x00\x01\x00\x01t";

    #[test]
    fn api_versions_request_v3() {
        let decoded = decode_request(Bytes::from_static(API_VERSIONS_V3_REQUEST), &All).unwrap();
        assert_eq!(decoded.api_key, ApiKey::ApiVersions);
        assert_eq!(decoded.header.correlation_id, 1);
        assert_eq!(decoded.header.client_id.as_deref(), Some("rdkafka"));
        let Request::ApiVersions(body) = decoded.body else {
            panic!("not ApiVersions: {:?}", decoded.body);
        };
        assert_eq!(body.client_software_name.as_str(), "librdkafka");
        assert_eq!(body.client_software_version.as_str(), "2.0.2");
    }

    #[test]
    fn metadata_request_v1() {
        let decoded = decode_request(Bytes::from_static(METADATA_V1_REQUEST), &All).unwrap();
        let Request::Metadata(body) = decoded.body else {
            panic!("not Metadata");
        };
        let topics = body.topics.unwrap();
        assert_eq!(topics.len(), 1);
        assert_eq!(topics[0].name.as_ref().unwrap().as_str(), "t");
    }

    #[test]
    fn api_versions_request_of_unknown_version_is_flagged_not_rejected() {
        let mut frame = API_VERSIONS_V3_REQUEST.to_vec();
        frame[3] = 9;
        let decoded = decode_request(Bytes::from(frame), &All).unwrap();
        assert!(matches!(decoded.body, Request::UnsupportedApiVersions));
        assert_eq!(decoded.header.correlation_id, 1);
    }

    #[test]
    fn unknown_api_key_is_an_error() {
        let frame = Bytes::from_static(b"\x7f\x00\x00\x00\x00\x00\x00\x01\x00\x00");
        assert!(matches!(
            decode_request(frame, &All),
            Err(Error::UnsupportedApi {
                api_key: 0x7f00,
                ..
            })
        ));
    }

    #[test]
    fn truncated_body_is_malformed() {
        let frame = Bytes::from_static(&METADATA_V1_REQUEST[..METADATA_V1_REQUEST.len() - 1]);
        assert!(matches!(
            decode_request(frame, &All),
            Err(Error::Malformed(_))
        ));
    }

    /// As Apache Kafka does: librdkafka 2.16.0 (confluent-kafka 2.16.1)
    /// sends this Metadata v12 request, 3 bytes longer than its body.
    #[test]
    fn trailing_bytes_are_ignored_as_kafka_does() {
        let librdkafka =
            b"\x00\x03\x00\x0c\x00\x00\x00\x0a\x00\x07rdkafka\x00\x00\x00\x00\x00\x01\x00\x00";
        let decoded = decode_request(Bytes::from_static(librdkafka), &All).unwrap();
        let Request::Metadata(body) = decoded.body else {
            panic!("not Metadata");
        };
        assert!(body.topics.is_none());
        assert_eq!(decoded.header.correlation_id, 10);
    }

    #[test]
    fn frame_size_waits_for_four_bytes_and_enforces_the_maximum() {
        assert_eq!(peek_frame_size(&[0, 0, 1], 100).unwrap(), None);
        assert_eq!(peek_frame_size(&[0, 0, 0, 100, 9], 100).unwrap(), Some(100));
        assert!(matches!(
            peek_frame_size(&[0, 0, 0, 101], 100),
            Err(Error::FrameTooLarge {
                size: 101,
                max: 100
            })
        ));
        assert!(peek_frame_size(&[0xff, 0xff, 0xff, 0xff], 100).is_err());
    }

    #[test]
    fn api_versions_response_v0_golden_bytes() {
        let mut response = ApiVersionsResponse::default();
        response.error_code = 35;
        let frame = encode_response(7, ApiKey::ApiVersions, 0, &response).unwrap();
        // size 10, correlation id 7, error 35, empty api_keys array.
        assert_eq!(
            &frame[..],
            b"\x00\x00\x00\x0a\x00\x00\x00\x07\x00\x23\x00\x00\x00\x00"
        );
    }

    #[test]
    fn flexible_response_has_a_tagged_header() {
        let response = MetadataResponse::default();
        let frame = encode_response(5, ApiKey::Metadata, 9, &response).unwrap();
        // correlation id, then the empty tagged-field section of header v1.
        assert_eq!(&frame[4..9], b"\x00\x00\x00\x05\x00");
    }
}
