//! SaslHandshake: the client names its mechanism; the answer lists the
//! mechanisms offered, with UNSUPPORTED_SASL_MECHANISM if its is not one.

use crate::security::sasl::{Handshake, Session};
use kafka_protocol::messages::{SaslHandshakeRequest, SaslHandshakeResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;

/// The response, and whether the connection goes on.
pub fn response(
    session: &mut Session,
    req: SaslHandshakeRequest,
) -> (SaslHandshakeResponse, Handshake) {
    let outcome = session.handshake(req.mechanism.as_str());
    let mut response = SaslHandshakeResponse::default();
    response.mechanisms = session
        .mechanism_names()
        .into_iter()
        .map(StrBytes::from_static_str)
        .collect();
    response.error_code = match outcome {
        Handshake::Accepted => 0,
        Handshake::Unsupported => ResponseError::UnsupportedSaslMechanism.code(),
        Handshake::OutOfOrder => ResponseError::IllegalSaslState.code(),
    };
    (response, outcome)
}

/// A handshake on a connection that is past authentication (or on a
/// listener without SASL): Kafka answers ILLEGAL_SASL_STATE.
pub fn out_of_order() -> SaslHandshakeResponse {
    let mut response = SaslHandshakeResponse::default();
    response.error_code = ResponseError::IllegalSaslState.code();
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{SaslMechanism, SaslUsers};
    use crate::security::sasl::Authenticator;
    use std::sync::Arc;

    fn session() -> Session {
        let users = SaslUsers {
            mechanisms: vec![SaslMechanism::ScramSha512, SaslMechanism::Plain],
            users: vec![("u".into(), "p".into())],
        };
        Session::new(Arc::new(Authenticator::new(&users).unwrap()))
    }

    #[test]
    fn an_offered_mechanism_is_accepted_and_all_are_listed() {
        let mut req = SaslHandshakeRequest::default();
        req.mechanism = StrBytes::from_static_str("SCRAM-SHA-512");
        let (response, outcome) = response(&mut session(), req);
        assert_eq!((response.error_code, outcome), (0, Handshake::Accepted));
        assert_eq!(response.mechanisms.len(), 2);
    }

    #[test]
    fn another_mechanism_is_unsupported() {
        let mut req = SaslHandshakeRequest::default();
        req.mechanism = StrBytes::from_static_str("GSSAPI");
        let (response, outcome) = response(&mut session(), req);
        assert_eq!(response.error_code, 33);
        assert_eq!(outcome, Handshake::Unsupported);
    }
}
