//! ApiVersions: the APIs and version ranges this broker implements.

use crate::broker::Broker;
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kafka_protocol::ResponseError;

pub fn response(broker: &Broker, _req: ApiVersionsRequest, _version: i16) -> ApiVersionsResponse {
    let mut response = ApiVersionsResponse::default();
    response.api_keys = api_keys(broker);
    response
}

/// Kafka's answer to an ApiVersions version it does not know: the error plus
/// the supported list, so the client can retry with a version we speak.
pub fn unsupported_version_response(broker: &Broker) -> ApiVersionsResponse {
    let mut response = ApiVersionsResponse::default();
    response.error_code = ResponseError::UnsupportedVersion.code();
    response.api_keys = api_keys(broker);
    response
}

fn api_keys(broker: &Broker) -> Vec<ApiVersion> {
    broker
        .apis
        .iter()
        .map(|(key, min, max)| {
            let mut v = ApiVersion::default();
            v.api_key = *key as i16;
            v.min_version = *min;
            v.max_version = *max;
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use kafka_protocol::messages::ApiKey;

    #[tokio::test]
    async fn lists_produce_and_fetch_with_their_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let response = response(&broker, ApiVersionsRequest::default(), 3);
        assert_eq!(response.error_code, 0);
        let produce = response
            .api_keys
            .iter()
            .find(|k| k.api_key == ApiKey::Produce as i16)
            .unwrap();
        assert_eq!((produce.min_version, produce.max_version), (3, 11));
        assert!(response
            .api_keys
            .iter()
            .any(|k| k.api_key == ApiKey::JoinGroup as i16));
    }

    #[tokio::test]
    async fn unsupported_version_carries_error_and_list() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let response = unsupported_version_response(&broker);
        assert_eq!(response.error_code, 35);
        assert!(!response.api_keys.is_empty());
    }
}
