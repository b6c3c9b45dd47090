//! InitProducerId for idempotent producers: a fresh producer id, epoch 0.
//!
//! Transactions are not supported: a request naming a transactional id gets
//! INVALID_REQUEST (a fatal error for the Java producer, not one it retries).

use crate::broker::Broker;
use kafka_protocol::messages::{InitProducerIdRequest, InitProducerIdResponse, ProducerId};
use kafka_protocol::ResponseError;

pub fn response(
    broker: &Broker,
    req: InitProducerIdRequest,
    _version: i16,
) -> InitProducerIdResponse {
    let mut response = InitProducerIdResponse::default();
    response.producer_id = ProducerId(-1);
    response.producer_epoch = -1;
    if req.transactional_id.is_some() {
        response.error_code = ResponseError::InvalidRequest.code();
        return response;
    }
    // Like Kafka, a producer asking to bump its epoch (v3+, KIP-360) without
    // a transactional id simply gets a new id.
    match broker.producer_ids.allocate() {
        Ok(id) => {
            response.producer_id = ProducerId(id);
            response.producer_epoch = 0;
        }
        Err(e) => response.error_code = e.code(),
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use kafka_protocol::messages::TransactionalId;
    use kafka_protocol::protocol::StrBytes;

    fn idempotent() -> InitProducerIdRequest {
        let mut req = InitProducerIdRequest::default();
        req.transactional_id = None;
        req.producer_id = ProducerId(-1);
        req.producer_epoch = -1;
        req
    }

    #[tokio::test]
    async fn allocates_distinct_ids_at_epoch_zero() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let a = response(&broker, idempotent(), 4);
        let b = response(&broker, idempotent(), 4);
        assert_eq!((a.error_code, a.producer_epoch), (0, 0));
        assert!(a.producer_id.0 >= 0);
        assert_ne!(a.producer_id, b.producer_id);
    }

    #[tokio::test]
    async fn ids_are_not_reused_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let first = response(&broker(dir.path()), idempotent(), 5);
        let second = response(&broker(dir.path()), idempotent(), 5);
        assert!(second.producer_id.0 > first.producer_id.0);
    }

    #[tokio::test]
    async fn transactional_id_is_invalid_request() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let mut req = idempotent();
        req.transactional_id = Some(TransactionalId(StrBytes::from_static_str("tx")));
        let r = response(&broker, req, 5);
        assert_eq!(r.error_code, ResponseError::InvalidRequest.code());
        assert_eq!(r.producer_id.0, -1);
    }
}
