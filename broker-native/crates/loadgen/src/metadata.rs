//! Bootstrap, ApiVersions negotiation and topic metadata (leaders per partition).

use std::collections::HashMap;
use std::time::Duration;

use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{ApiVersionsRequest, MetadataRequest, MetadataResponse, TopicName};
use kafka_protocol::protocol::{Message, Request, StrBytes};
use uuid::Uuid;

use crate::error::{Error, Result};
use kbench_client::{Security, SimpleClient};

/// Error codes after which a client refreshes metadata and retries.
pub fn is_retriable(code: i16) -> bool {
    matches!(
        code,
        3   // UNKNOWN_TOPIC_OR_PARTITION
        | 5 // LEADER_NOT_AVAILABLE
        | 6 // NOT_LEADER_OR_FOLLOWER
        | 7 // REQUEST_TIMED_OUT
        | 13 // NETWORK_EXCEPTION
        | 19 // NOT_ENOUGH_REPLICAS
        | 20 // NOT_ENOUGH_REPLICAS_AFTER_APPEND
        | 74 // FENCED_LEADER_EPOCH
        | 75 // UNKNOWN_LEADER_EPOCH
    )
}

/// The version range of each API a broker supports.
#[derive(Debug, Clone, Default)]
pub struct ApiVersions(HashMap<i16, (i16, i16)>);

impl ApiVersions {
    /// The highest version both this client (the `kafka-protocol` crate) and the broker support.
    pub fn pick<R: Request + Message>(&self) -> Result<i16> {
        let (broker_min, broker_max) = *self.0.get(&R::KEY).ok_or_else(|| {
            Error::Protocol(format!("broker does not support API key {}", R::KEY))
        })?;
        let version = broker_max.min(R::VERSIONS.max);
        if version < broker_min.max(R::VERSIONS.min) {
            return Err(Error::Protocol(format!(
                "no common version for API key {}: broker {broker_min}-{broker_max}, client {}-{}",
                R::KEY,
                R::VERSIONS.min,
                R::VERSIONS.max
            )));
        }
        Ok(version)
    }
}

#[derive(Debug, Clone)]
pub struct TopicMetadata {
    pub name: String,
    pub id: Uuid,
    /// Leader node id per partition index; -1 while a partition has none.
    pub leaders: Vec<i32>,
}

#[derive(Debug, Clone, Default)]
pub struct ClusterMetadata {
    /// host:port per node id; every leader in `topics` has one (see `to_cluster`).
    pub brokers: HashMap<i32, String>,
    /// In the order the topics were asked for.
    pub topics: Vec<TopicMetadata>,
}

impl ClusterMetadata {
    pub fn leader_addr(&self, node: i32) -> Option<&str> {
        self.brokers.get(&node).map(String::as_str)
    }
}

/// A connection to one bootstrap broker for metadata and setup calls.
#[derive(Debug)]
pub struct MetadataClient {
    bootstrap: Vec<String>,
    client: Option<SimpleClient>,
    /// The bootstrap address of the connection made, or being made (a handshake can hang too).
    asking: Option<String>,
    /// How long a Metadata request may go unanswered (`set_request_timeout`); None: no limit.
    request_timeout: Option<Duration>,
    versions: ApiVersions,
    /// How every connection of the client using this one is secured.
    security: Security,
}

impl MetadataClient {
    /// Connects to the first reachable bootstrap broker and negotiates API versions.
    pub async fn connect(bootstrap: &[String]) -> Result<MetadataClient> {
        Self::connect_with(bootstrap, &Security::default()).await
    }

    /// Like `connect`, over TLS and/or SASL as `security` says.
    pub async fn connect_with(bootstrap: &[String], security: &Security) -> Result<MetadataClient> {
        if bootstrap.is_empty() {
            return Err(Error::Config("bootstrap is empty".into()));
        }
        let mut client = MetadataClient {
            bootstrap: bootstrap.to_vec(),
            client: None,
            asking: None,
            request_timeout: None,
            versions: ApiVersions::default(),
            security: security.clone(),
        };
        client.reconnect().await?;
        Ok(client)
    }

    async fn reconnect(&mut self) -> Result<()> {
        self.client = None;
        let mut last = None;
        for addr in &self.bootstrap {
            self.asking = Some(addr.clone());
            match Self::handshake(addr, &self.security).await {
                Ok((client, versions)) => {
                    self.client = Some(client);
                    self.versions = versions;
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| Error::NoBroker(self.bootstrap.clone())))
    }

    /// How connections to this cluster are secured.
    pub fn security(&self) -> &Security {
        &self.security
    }

    async fn handshake(addr: &str, security: &Security) -> Result<(SimpleClient, ApiVersions)> {
        let mut client = crate::connect::simple(addr, security).await?;
        let request = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("kbench-native"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
        let mut response = client.call(3, &request).await?;
        if response.error_code == 35 {
            // UNSUPPORTED_VERSION: an old broker answers in v0, which every broker speaks.
            response = client.call(0, &ApiVersionsRequest::default()).await?;
        }
        if response.error_code != 0 {
            return Err(Error::Kafka {
                api: "ApiVersions",
                code: response.error_code,
            });
        }
        let versions = response
            .api_keys
            .iter()
            .map(|k| (k.api_key, (k.min_version, k.max_version)))
            .collect();
        Ok((client, ApiVersions(versions)))
    }

    pub fn versions(&self) -> &ApiVersions {
        &self.versions
    }

    /// One request to the bootstrap broker, reconnecting once if the connection died.
    pub async fn call<R: Request + Message>(&mut self, request: &R) -> Result<R::Response> {
        let version = self.versions.pick::<R>()?;
        if let Some(client) = self.client.as_mut() {
            match client.call(version, request).await.map_err(Error::from) {
                Err(e) if e.is_connection_lost() => {}
                other => return other,
            }
        }
        self.reconnect().await?;
        let version = self.versions.pick::<R>()?;
        let client = self
            .client
            .as_mut()
            .ok_or_else(|| Error::NoBroker(self.bootstrap.clone()))?;
        Ok(client.call(version, request).await?)
    }

    /// How long each Metadata request of `fetch` may go unanswered (the client's
    /// `request.timeout.ms`): past it the connection is dropped, its broker goes to the end of the
    /// bootstrap list, and `fetch` fails. Without it a broker that holds requests (a paused node)
    /// left a client's refresh, and so its whole engine, waiting for good.
    pub fn set_request_timeout(&mut self, timeout: Duration) {
        self.request_timeout = Some(timeout);
    }

    /// One Metadata request, within the request timeout if one is set.
    async fn metadata(&mut self, topics: &[String]) -> Result<MetadataResponse> {
        let request = metadata_request(topics);
        let Some(limit) = self.request_timeout else {
            return self.call(&request).await;
        };
        match tokio::time::timeout(limit, self.call(&request)).await {
            Ok(answer) => answer,
            Err(_) => {
                self.client = None;
                if let Some(addr) = self.asking.take() {
                    self.bootstrap.retain(|a| *a != addr);
                    self.bootstrap.push(addr);
                }
                Err(Error::TimedOut(format!(
                    "no answer to Metadata within request.timeout.ms ({} ms)",
                    limit.as_millis()
                )))
            }
        }
    }

    /// Brokers and partition leaders of `topics`, waiting up to `patience` for every partition of
    /// every topic to have a leader (a topic just created may not have one yet).
    pub async fn fetch(
        &mut self,
        topics: &[String],
        patience: Duration,
    ) -> Result<ClusterMetadata> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let response = self.metadata(topics).await?;
            match to_cluster(response, topics) {
                Ok(cluster) => return Ok(cluster),
                Err(e) if tokio::time::Instant::now() >= deadline => return Err(e),
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }
}

fn metadata_request(topics: &[String]) -> MetadataRequest {
    let topics = topics
        .iter()
        .map(|t| {
            MetadataRequestTopic::default()
                .with_name(Some(TopicName(StrBytes::from_string(t.clone()))))
        })
        .collect();
    MetadataRequest::default()
        .with_topics(Some(topics))
        .with_allow_auto_topic_creation(false)
}

fn to_cluster(response: MetadataResponse, topics: &[String]) -> Result<ClusterMetadata> {
    let brokers = response
        .brokers
        .iter()
        .map(|b| (b.node_id.0, format!("{}:{}", b.host.as_str(), b.port)))
        .collect();
    let mut cluster = ClusterMetadata {
        brokers,
        topics: Vec::with_capacity(topics.len()),
    };
    for name in topics {
        let topic = response
            .topics
            .iter()
            .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == name))
            .ok_or_else(|| Error::Protocol(format!("topic {name} missing from metadata")))?;
        if topic.error_code != 0 {
            return Err(Error::Kafka {
                api: "Metadata",
                code: topic.error_code,
            });
        }
        let mut leaders = vec![-1; topic.partitions.len()];
        for p in &topic.partitions {
            let slot = usize::try_from(p.partition_index)
                .ok()
                .and_then(|i| leaders.get_mut(i))
                .ok_or_else(|| {
                    Error::Protocol(format!(
                        "{name}: partition {} out of range",
                        p.partition_index
                    ))
                })?;
            *slot = p.leader_id.0;
        }
        // A leader the response gives no address for is as good as none: with
        // it the client would have nowhere to send that partition's records.
        // (A cluster answers so while a dead leader's partitions wait to move.)
        if leaders.is_empty()
            || leaders
                .iter()
                .any(|l| *l < 0 || !cluster.brokers.contains_key(l))
        {
            return Err(Error::Kafka {
                api: "Metadata",
                code: 5, // LEADER_NOT_AVAILABLE
            });
        }
        cluster.topics.push(TopicMetadata {
            name: name.clone(),
            id: topic.topic_id,
            leaders,
        });
    }
    Ok(cluster)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::metadata_response::{
        MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };
    use kafka_protocol::messages::BrokerId;

    fn response(brokers: &[i32], leader: i32) -> MetadataResponse {
        let mut r = MetadataResponse::default();
        r.brokers = brokers
            .iter()
            .map(|id| {
                MetadataResponseBroker::default()
                    .with_node_id(BrokerId(*id))
                    .with_host(StrBytes::from_static_str("127.0.0.1"))
                    .with_port(9000 + id)
            })
            .collect();
        let partition = MetadataResponsePartition::default()
            .with_partition_index(0)
            .with_leader_id(BrokerId(leader));
        r.topics = vec![MetadataResponseTopic::default()
            .with_name(Some(TopicName(StrBytes::from_static_str("t"))))
            .with_partitions(vec![partition])];
        r
    }

    #[test]
    fn leaders_come_with_their_addresses() {
        let cluster = to_cluster(response(&[1, 2, 3], 2), &["t".to_string()]).unwrap();
        assert_eq!(cluster.topics[0].leaders, vec![2]);
        assert_eq!(cluster.leader_addr(2), Some("127.0.0.1:9002"));
    }

    /// A cluster that has dropped a dead node from its brokers before moving
    /// its partitions: taken as it is, a producer had a leader it could not
    /// reach and nothing that would make it ask again.
    #[test]
    fn a_leader_without_an_address_is_not_available() {
        for leader in [1, -1] {
            match to_cluster(response(&[2, 3], leader), &["t".to_string()]) {
                Err(Error::Kafka { code: 5, .. }) => {}
                other => panic!("leader {leader}: {other:?}"),
            }
        }
    }
}
