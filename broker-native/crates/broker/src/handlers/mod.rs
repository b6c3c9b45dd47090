//! One module per Kafka API. Handlers take decoded requests and return
//! response messages; they never touch sockets.

pub mod alter_configs;
pub mod api_versions;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_topics;
pub mod describe_cluster;
pub mod describe_configs;
pub mod fetch;
pub mod find_coordinator;
pub mod groups;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod list_offsets;
pub mod metadata;
pub mod produce;
pub mod sasl_authenticate;
pub mod sasl_handshake;

use crate::broker::Broker;
use crate::codec::{
    encode_fetch_response, encode_response, encode_response_with_header_version, DecodedRequest,
    Frame, Request,
};
use crate::error::{Error, Result};
use crate::security::sasl::{Handshake, Session};
use bytes::BytesMut;
use kafka_protocol::messages::ApiKey;
use kafka_protocol::ResponseError;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

/// Runs one request and returns its encoded response frame (`None` for
/// Produce with acks=0, which gets no response). Fetch responses come back
/// in chunks that reference the record data read from the log; every other
/// response is one buffer.
pub async fn dispatch(
    broker: &Broker,
    request: DecodedRequest,
    peer: SocketAddr,
) -> Result<Option<Frame>> {
    let DecodedRequest {
        header,
        api_key,
        body,
    } = request;
    let version = header.request_api_version;
    let correlation_id = header.correlation_id;
    let encode = |body: &dyn ErasedEncodable| body.encode_frame(correlation_id, api_key, version);
    let frame = match body {
        Request::UnsupportedApiVersions => {
            let response = api_versions::unsupported_version_response(broker);
            // Always a v0 body under a v0 header, so any client can read it.
            encode_response_with_header_version(correlation_id, 0, 0, &response)?
        }
        Request::ApiVersions(req) => encode(&api_versions::response(broker, req, version))?,
        Request::Metadata(req) => encode(&metadata::response(broker, req, version).await)?,
        Request::CreateTopics(req) => encode(&create_topics::response(broker, req, version).await)?,
        Request::Produce(req) => match produce::response(broker, req, version).await {
            Some(response) => encode(&response)?,
            None => return Ok(None),
        },
        Request::Fetch(req) => {
            let response = fetch::response(broker, req, version).await;
            return encode_fetch_response(correlation_id, version, &response).map(Some);
        }
        Request::ListOffsets(req) => encode(&list_offsets::response(broker, req, version))?,
        Request::FindCoordinator(req) => encode(&find_coordinator::response(broker, req, version))?,
        Request::DeleteTopics(req) => encode(&delete_topics::response(broker, req, version).await)?,
        Request::CreatePartitions(req) => {
            encode(&create_partitions::response(broker, req, version).await)?
        }
        Request::DescribeConfigs(req) => encode(&describe_configs::response(broker, req, version))?,
        Request::IncrementalAlterConfigs(req) => {
            encode(&incremental_alter_configs::response(broker, req, version))?
        }
        Request::AlterConfigs(req) => encode(&alter_configs::response(broker, req, version))?,
        Request::InitProducerId(req) => encode(&init_producer_id::response(broker, req, version))?,
        Request::DescribeCluster(req) => encode(&describe_cluster::response(broker, req, version))?,
        // Past authentication (the server handles them before it).
        Request::SaslHandshake(_) => encode(&sasl_handshake::out_of_order())?,
        Request::SaslAuthenticate(_) => encode(&sasl_authenticate::out_of_order())?,
        group_request => groups::dispatch(broker, &header, group_request, peer, encode).await?,
    };
    Ok(Some(frame.into()))
}

/// A response still in the making after its request was taken in: the
/// connection reads its next requests meanwhile and writes the responses
/// in request order.
pub type Deferred = Pin<Box<dyn Future<Output = Result<Option<Frame>>> + Send>>;

/// Takes in a Produce request now (validated and appended, in the order
/// the connection read it) and answers later, once its acks are met (the
/// sync under fsync `batch`, the replicas for acks=all): the returned
/// future encodes the response (`None` for acks=0). Any other request
/// comes back as it is, for [`dispatch`].
pub fn begin(
    broker: &Broker,
    request: DecodedRequest,
) -> std::result::Result<Deferred, Box<DecodedRequest>> {
    let DecodedRequest {
        header,
        api_key,
        body,
    } = request;
    match body {
        Request::Produce(req) => {
            let version = header.request_api_version;
            let correlation_id = header.correlation_id;
            let pending = produce::start(broker, req, version);
            Ok(Box::pin(async move {
                match pending.finish().await {
                    Some(response) => Ok(Some(
                        response
                            .encode_frame(correlation_id, api_key, version)?
                            .into(),
                    )),
                    None => Ok(None),
                }
            }))
        }
        body => Err(Box::new(DecodedRequest {
            header,
            api_key,
            body,
        })),
    }
}

/// Where a connection is in its SASL authentication after a request.
pub enum AuthProgress {
    /// Keep going: more requests of the exchange to come.
    Continue,
    /// The client is this user: serve it from now on.
    Authenticated(String),
    /// The response says why; then close the connection.
    Refused,
}

/// Runs one request of a connection that has not authenticated yet:
/// ApiVersions, SaslHandshake or SaslAuthenticate. Anything else is an
/// error, and the server closes the connection without a response, as
/// Kafka does.
pub fn authenticate(
    broker: &Broker,
    session: &mut Session,
    request: DecodedRequest,
) -> Result<(Frame, AuthProgress)> {
    let DecodedRequest {
        header,
        api_key,
        body,
    } = request;
    let version = header.request_api_version;
    let correlation_id = header.correlation_id;
    let (frame, progress) = match body {
        Request::UnsupportedApiVersions => {
            let response = api_versions::unsupported_version_response(broker);
            let frame = encode_response_with_header_version(correlation_id, 0, 0, &response)?;
            (frame, AuthProgress::Continue)
        }
        Request::ApiVersions(req) => {
            let response = api_versions::response(broker, req, version);
            let frame = encode_response(correlation_id, api_key, version, &response)?;
            (frame, AuthProgress::Continue)
        }
        Request::SaslHandshake(req) => {
            let (response, outcome) = sasl_handshake::response(session, req);
            let progress = match outcome {
                Handshake::Accepted => AuthProgress::Continue,
                Handshake::Unsupported | Handshake::OutOfOrder => AuthProgress::Refused,
            };
            let frame = encode_response(correlation_id, api_key, version, &response)?;
            (frame, progress)
        }
        Request::SaslAuthenticate(req) => {
            let (response, progress) = sasl_authenticate::response(session, req);
            let progress = match progress {
                sasl_authenticate::Progress::Continue => AuthProgress::Continue,
                sasl_authenticate::Progress::Authenticated(user) => {
                    AuthProgress::Authenticated(user)
                }
                sasl_authenticate::Progress::Refused => AuthProgress::Refused,
            };
            let frame = encode_response(correlation_id, api_key, version, &response)?;
            (frame, progress)
        }
        _ => {
            return Err(Error::kafka(
                ResponseError::IllegalSaslState,
                format!("{api_key:?} before SASL authentication"),
            ))
        }
    };
    Ok((frame.into(), progress))
}

/// Lets one closure encode any response type.
pub(crate) trait ErasedEncodable {
    fn encode_frame(&self, correlation_id: i32, api_key: ApiKey, version: i16) -> Result<BytesMut>;
}

impl<T: kafka_protocol::protocol::Encodable> ErasedEncodable for T {
    fn encode_frame(&self, correlation_id: i32, api_key: ApiKey, version: i16) -> Result<BytesMut> {
        encode_response(correlation_id, api_key, version, self)
    }
}

/// Helpers shared by handler tests: a broker over a temp dir, no sockets.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::broker::Broker;
    use crate::config::BrokerConfig;

    pub fn broker(dir: &std::path::Path) -> Broker {
        Broker::open(BrokerConfig::new(dir), 9092).unwrap()
    }
}
