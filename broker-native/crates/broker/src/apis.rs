//! The APIs this broker implements and the versions of each: what
//! ApiVersions answers and what the codec agrees to decode.

use crate::codec::VersionTable;
use kafka_protocol::messages::ApiKey;
use kbench_group::GroupCoordinator;

#[derive(Debug, Clone)]
pub struct SupportedApis(Vec<(ApiKey, i16, i16)>);

impl SupportedApis {
    /// Our own handlers plus whatever the group coordinator implements.
    pub fn new() -> SupportedApis {
        let mut apis = vec![
            (ApiKey::Produce, 3, 11),
            (ApiKey::Fetch, 4, 12),
            (ApiKey::ListOffsets, 1, 6),
            (ApiKey::Metadata, 0, 12),
            (ApiKey::FindCoordinator, 0, 4),
            (ApiKey::ApiVersions, 0, 4),
            (ApiKey::CreateTopics, 2, 7),
            (ApiKey::DeleteTopics, 1, 6),
            (ApiKey::CreatePartitions, 0, 3),
            (ApiKey::DescribeConfigs, 1, 4),
            (ApiKey::IncrementalAlterConfigs, 0, 1),
            (ApiKey::AlterConfigs, 0, 2),
            (ApiKey::InitProducerId, 0, 5),
            (ApiKey::DescribeCluster, 0, 2),
        ];
        for (key, min, max) in GroupCoordinator::supported_versions() {
            if let Ok(key) = ApiKey::try_from(key) {
                apis.push((key, min, max));
            }
        }
        apis.sort_by_key(|(key, _, _)| *key as i16);
        SupportedApis(apis)
    }

    /// `new`, plus SaslHandshake and SaslAuthenticate, for a SASL listener.
    /// SaslHandshake v0 is advertised (librdkafka looks for it before it
    /// will authenticate at all) but tokens must then come in
    /// SaslAuthenticate requests, as every client that sees it sends them;
    /// v0's raw unframed tokens are not read.
    pub fn with_sasl() -> SupportedApis {
        let mut apis = SupportedApis::new().0;
        apis.push((ApiKey::SaslHandshake, 0, 1));
        apis.push((ApiKey::SaslAuthenticate, 0, 2));
        apis.sort_by_key(|(key, _, _)| *key as i16);
        SupportedApis(apis)
    }

    pub fn iter(&self) -> impl Iterator<Item = &(ApiKey, i16, i16)> {
        self.0.iter()
    }
}

impl Default for SupportedApis {
    fn default() -> Self {
        SupportedApis::new()
    }
}

impl VersionTable for SupportedApis {
    fn supports(&self, api_key: ApiKey, version: i16) -> bool {
        self.0
            .iter()
            .any(|(key, min, max)| *key == api_key && (*min..=*max).contains(&version))
    }
}
