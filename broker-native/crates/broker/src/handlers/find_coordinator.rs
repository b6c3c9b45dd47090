//! FindCoordinator: one node coordinates every group (this node on a lone
//! broker; the lowest live node of a cluster).

use crate::broker::Broker;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::{BrokerId, FindCoordinatorRequest, FindCoordinatorResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;

const KEY_TYPE_GROUP: i8 = 0;

pub fn response(
    broker: &Broker,
    req: FindCoordinatorRequest,
    version: i16,
) -> FindCoordinatorResponse {
    let coordinator = broker.admin.controller_id();
    let (node_id, host, port) = broker
        .admin
        .advertised_nodes()
        .into_iter()
        .find(|(id, _, _)| *id == coordinator)
        .map(|(id, host, port)| (BrokerId(id), StrBytes::from_string(host), i32::from(port)))
        .unwrap_or_else(|| {
            (
                BrokerId(broker.config.node_id),
                StrBytes::from_string(broker.config.host.clone()),
                i32::from(broker.port),
            )
        });
    // Transactions are not supported: a fatal INVALID_REQUEST rather than
    // COORDINATOR_NOT_AVAILABLE, which clients would retry until timeout.
    let error = if req.key_type == KEY_TYPE_GROUP {
        None
    } else {
        Some(ResponseError::InvalidRequest)
    };
    let mut response = FindCoordinatorResponse::default();
    if version >= 4 {
        response.coordinators = req
            .coordinator_keys
            .into_iter()
            .map(|key| {
                let mut c = Coordinator::default();
                c.key = key;
                match error {
                    None => {
                        c.node_id = node_id;
                        c.host = host.clone();
                        c.port = port;
                    }
                    Some(e) => {
                        c.error_code = e.code();
                        c.node_id = BrokerId(-1);
                        c.port = -1;
                    }
                }
                c
            })
            .collect();
        return response;
    }
    match error {
        None => {
            response.node_id = node_id;
            response.host = host;
            response.port = port;
        }
        Some(e) => {
            response.error_code = e.code();
            response.node_id = BrokerId(-1);
            response.port = -1;
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;

    #[tokio::test]
    async fn group_coordinator_is_this_node() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let mut req = FindCoordinatorRequest::default();
        req.key = StrBytes::from_static_str("g");
        let response = response(&broker, req, 2);
        assert_eq!(
            (response.error_code, response.node_id, response.port),
            (0, BrokerId(1), 9092)
        );
    }

    #[tokio::test]
    async fn v4_answers_each_key() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let mut req = FindCoordinatorRequest::default();
        req.coordinator_keys = vec![
            StrBytes::from_static_str("a"),
            StrBytes::from_static_str("b"),
        ];
        let response = response(&broker, req, 4);
        assert_eq!(response.coordinators.len(), 2);
        assert_eq!(response.coordinators[1].node_id, BrokerId(1));
    }

    #[tokio::test]
    async fn transaction_coordinator_is_an_invalid_request() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let mut req = FindCoordinatorRequest::default();
        req.key_type = 1;
        let response = response(&broker, req, 2);
        assert_eq!(response.error_code, ResponseError::InvalidRequest.code());
    }
}
