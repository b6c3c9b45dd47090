//! SaslAuthenticate: one token of the chosen mechanism in, the server's
//! token out; SASL_AUTHENTICATION_FAILED with the reason when it fails.

use crate::security::sasl::{Session, Step};
use bytes::Bytes;
use kafka_protocol::messages::{SaslAuthenticateRequest, SaslAuthenticateResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;

/// Where the connection is after a token.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    /// More tokens to come.
    Continue,
    /// The client is this user: serve it.
    Authenticated(String),
    /// Send the response and close.
    Refused,
}

pub fn response(
    session: &mut Session,
    req: SaslAuthenticateRequest,
) -> (SaslAuthenticateResponse, Progress) {
    let mut response = SaslAuthenticateResponse::default();
    let progress = match session.authenticate(&req.auth_bytes) {
        Step::Continue(token) => {
            response.auth_bytes = Bytes::from(token);
            Progress::Continue
        }
        Step::Authenticated { user, token } => {
            response.auth_bytes = Bytes::from(token);
            Progress::Authenticated(user)
        }
        Step::Failed(message) => {
            response.error_code = ResponseError::SaslAuthenticationFailed.code();
            response.error_message = Some(StrBytes::from_string(message));
            Progress::Refused
        }
        Step::OutOfOrder => {
            response.error_code = ResponseError::IllegalSaslState.code();
            response.error_message = Some(StrBytes::from_static_str(
                "SaslAuthenticate without a SaslHandshake before it",
            ));
            Progress::Refused
        }
    };
    (response, progress)
}

/// A token on a connection that is past authentication (or on a listener
/// without SASL): ILLEGAL_SASL_STATE (re-authentication is not offered).
pub fn out_of_order() -> SaslAuthenticateResponse {
    let mut response = SaslAuthenticateResponse::default();
    response.error_code = ResponseError::IllegalSaslState.code();
    response.error_message = Some(StrBytes::from_static_str(
        "already authenticated: re-authentication is not supported",
    ));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{SaslMechanism, SaslUsers};
    use crate::security::sasl::Authenticator;
    use std::sync::Arc;

    fn plain_session() -> Session {
        let users = SaslUsers {
            mechanisms: vec![SaslMechanism::Plain],
            users: vec![("u".into(), "p".into())],
        };
        let mut session = Session::new(Arc::new(Authenticator::new(&users).unwrap()));
        session.handshake("PLAIN");
        session
    }

    #[test]
    fn a_wrong_password_is_sasl_authentication_failed_with_a_message() {
        let mut req = SaslAuthenticateRequest::default();
        req.auth_bytes = Bytes::from_static(b"\0u\0wrong");
        let (response, progress) = response(&mut plain_session(), req);
        assert_eq!(response.error_code, 58);
        assert!(response
            .error_message
            .unwrap()
            .contains("invalid credentials"));
        assert_eq!(progress, Progress::Refused);
    }

    #[test]
    fn the_right_password_authenticates() {
        let mut req = SaslAuthenticateRequest::default();
        req.auth_bytes = Bytes::from_static(b"\0u\0p");
        let (response, progress) = response(&mut plain_session(), req);
        assert_eq!(response.error_code, 0);
        assert_eq!(progress, Progress::Authenticated("u".into()));
    }
}
