//! DescribeCluster: the live brokers and the controller.

use crate::broker::Broker;
use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::{BrokerId, DescribeClusterRequest, DescribeClusterResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;

/// `endpoint_type` values (v1+): brokers, or KRaft controllers.
const ENDPOINT_BROKERS: i8 = 1;
/// Kafka's "authorized operations not requested" marker.
const OPERATIONS_OMITTED: i32 = i32::MIN;

pub fn response(
    broker: &Broker,
    req: DescribeClusterRequest,
    version: i16,
) -> DescribeClusterResponse {
    let mut response = DescribeClusterResponse::default();
    response.cluster_id = StrBytes::from_string(broker.config.cluster_id.clone());
    response.controller_id = BrokerId(broker.admin.controller_id());
    response.cluster_authorized_operations = OPERATIONS_OMITTED;
    if version >= 1 {
        response.endpoint_type = ENDPOINT_BROKERS;
        if req.endpoint_type != ENDPOINT_BROKERS {
            // We have no separate controller endpoints to list.
            response.error_code = ResponseError::UnsupportedEndpointType.code();
            response.error_message = Some(StrBytes::from_static_str(
                "only the broker endpoint type is served",
            ));
            response.controller_id = BrokerId(-1);
            return response;
        }
    }
    response.brokers = broker
        .admin
        .advertised_nodes()
        .into_iter()
        .map(|(id, host, port)| {
            let mut b = DescribeClusterBroker::default();
            b.broker_id = BrokerId(id);
            b.host = StrBytes::from_string(host);
            b.port = i32::from(port);
            b
        })
        .collect();
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;

    fn request() -> DescribeClusterRequest {
        let mut req = DescribeClusterRequest::default();
        req.endpoint_type = ENDPOINT_BROKERS;
        req
    }

    #[tokio::test]
    async fn lists_this_node_as_broker_and_controller() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        for version in 0..=2 {
            let r = response(&broker, request(), version);
            assert_eq!(r.error_code, 0);
            assert_eq!(r.brokers.len(), 1);
            assert_eq!(r.brokers[0].port, 9092);
            assert_eq!(r.controller_id, BrokerId(1));
            assert_eq!(r.cluster_id.as_str(), "kbench-cluster");
        }
    }

    #[tokio::test]
    async fn controller_endpoint_type_is_unsupported() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let mut req = request();
        req.endpoint_type = 2;
        let r = response(&broker, req, 1);
        assert_eq!(r.error_code, ResponseError::UnsupportedEndpointType.code());
    }
}
