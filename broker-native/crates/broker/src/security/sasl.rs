//! SASL on a listener: the users (as salted keys), the mechanisms offered,
//! and one connection's progress through SaslHandshake and
//! SaslAuthenticate (PLAIN in one step, SCRAM in two).

use super::scram::{self, Credential, Hash};
use crate::config::{SaslMechanism, SaslUsers};
use crate::error::{Error, Result};
use ring::hmac;
use std::collections::HashMap;
use std::sync::Arc;

/// The users of one listener; passwords are kept only as salted keys.
pub struct Authenticator {
    mechanisms: Vec<SaslMechanism>,
    /// Per user, a credential per hash the offered mechanisms need.
    users: HashMap<String, Keys>,
    /// Salts for unknown users (see `scram::decoy`).
    decoy_secret: hmac::Key,
}

#[derive(Default)]
struct Keys {
    sha256: Option<Credential>,
    sha512: Option<Credential>,
}

impl Keys {
    fn get(&self, hash: Hash) -> Option<&Credential> {
        match hash {
            Hash::Sha256 => self.sha256.as_ref(),
            Hash::Sha512 => self.sha512.as_ref(),
        }
    }
}

impl Authenticator {
    pub fn new(config: &SaslUsers) -> Result<Authenticator> {
        if config.mechanisms.is_empty() {
            return Err(Error::InvalidOption {
                name: "sasl",
                message: "no mechanism given".into(),
            });
        }
        if config.users.is_empty() {
            return Err(Error::InvalidOption {
                name: "user",
                message: "a SASL listener needs at least one NAME:PASSWORD".into(),
            });
        }
        let offers = |m| config.mechanisms.contains(&m);
        // PLAIN checks a password against the SHA-256 keys, or the SHA-512 ones if only those exist.
        let sha512 = offers(SaslMechanism::ScramSha512);
        let sha256 =
            offers(SaslMechanism::ScramSha256) || (offers(SaslMechanism::Plain) && !sha512);
        let mut users = HashMap::new();
        for (name, password) in &config.users {
            users.insert(
                name.clone(),
                Keys {
                    sha256: sha256.then(|| Credential::new(Hash::Sha256, password)),
                    sha512: sha512.then(|| Credential::new(Hash::Sha512, password)),
                },
            );
        }
        let mut secret = [0u8; 32];
        scram::random(&mut secret);
        Ok(Authenticator {
            mechanisms: config.mechanisms.clone(),
            users,
            decoy_secret: hmac::Key::new(hmac::HMAC_SHA256, &secret),
        })
    }

    /// The mechanisms offered, by their SASL names.
    pub fn mechanism_names(&self) -> Vec<&'static str> {
        self.mechanisms.iter().map(|m| m.name()).collect()
    }

    fn plain(&self, message: &[u8]) -> std::result::Result<String, String> {
        // authzid NUL authcid NUL password (RFC 4616).
        let mut parts = message.split(|b| *b == 0);
        let (Some(authzid), Some(user), Some(password), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("a PLAIN message is authzid NUL user NUL password".into());
        };
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| "not UTF-8".to_string());
        let (authzid, user, password) = (text(authzid)?, text(user)?, text(password)?);
        if !authzid.is_empty() && authzid != user {
            return Err("the authorization id is not the user name".into());
        }
        let keys = self.users.get(&user);
        let matched = keys
            .and_then(|k| k.sha256.as_ref().map(|c| (Hash::Sha256, c)))
            .or_else(|| keys.and_then(|k| k.sha512.as_ref().map(|c| (Hash::Sha512, c))))
            .is_some_and(|(hash, credential)| credential.matches(hash, &password));
        if matched {
            Ok(user)
        } else {
            Err("invalid credentials".into())
        }
    }
}

/// Where one connection is in its authentication.
enum State {
    /// Waiting for SaslHandshake.
    Start,
    /// The handshake chose this mechanism; waiting for its first token.
    Chosen(SaslMechanism),
    /// SCRAM: the server's first message is out; waiting for the client's final one.
    ScramFinal(Box<scram::Exchange>),
    /// Authenticated, or failed: nothing more is accepted.
    Over,
}

/// One connection's authentication.
pub struct Session {
    authenticator: Arc<Authenticator>,
    state: State,
}

/// What a SaslHandshake leads to.
#[derive(Debug, PartialEq, Eq)]
pub enum Handshake {
    Accepted,
    /// Not offered here: the client is told which are (and the connection closes).
    Unsupported,
    /// A second handshake on one connection.
    OutOfOrder,
}

/// What a SaslAuthenticate token leads to.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Send this token back and wait for the next.
    Continue(Vec<u8>),
    /// The client is `user`; send this last token.
    Authenticated { user: String, token: Vec<u8> },
    /// Authentication failed (SASL_AUTHENTICATION_FAILED), with the reason.
    Failed(String),
    /// A token before a handshake, or after the end (ILLEGAL_SASL_STATE).
    OutOfOrder,
}

impl Session {
    pub fn new(authenticator: Arc<Authenticator>) -> Session {
        Session {
            authenticator,
            state: State::Start,
        }
    }

    pub fn mechanism_names(&self) -> Vec<&'static str> {
        self.authenticator.mechanism_names()
    }

    pub fn handshake(&mut self, mechanism: &str) -> Handshake {
        if !matches!(self.state, State::Start) {
            return Handshake::OutOfOrder;
        }
        let offered = self
            .authenticator
            .mechanisms
            .iter()
            .find(|m| m.name() == mechanism);
        match offered {
            Some(m) => {
                self.state = State::Chosen(*m);
                Handshake::Accepted
            }
            None => {
                self.state = State::Over;
                Handshake::Unsupported
            }
        }
    }

    pub fn authenticate(&mut self, token: &[u8]) -> Step {
        let state = std::mem::replace(&mut self.state, State::Over);
        let auth = &self.authenticator;
        let failed = |mechanism: SaslMechanism, why: String| {
            Step::Failed(format!(
                "Authentication failed during authentication due to invalid credentials with SASL mechanism {} ({why})",
                mechanism.name()
            ))
        };
        match state {
            State::Start | State::Over => Step::OutOfOrder,
            State::Chosen(SaslMechanism::Plain) => match auth.plain(token) {
                Ok(user) => Step::Authenticated {
                    user,
                    token: Vec::new(),
                },
                Err(why) => failed(SaslMechanism::Plain, why),
            },
            State::Chosen(mechanism) => {
                let hash = scram_hash(mechanism);
                let first = scram::client_first(
                    hash,
                    token,
                    |user| auth.users.get(user).and_then(|k| k.get(hash)).cloned(),
                    |user| scram::decoy(hash, &auth.decoy_secret, user),
                );
                match first {
                    Ok((exchange, reply)) => {
                        self.state = State::ScramFinal(Box::new(exchange));
                        Step::Continue(reply)
                    }
                    Err(why) => failed(mechanism, why),
                }
            }
            State::ScramFinal(exchange) => {
                let mechanism = match exchange.hash() {
                    Hash::Sha256 => SaslMechanism::ScramSha256,
                    Hash::Sha512 => SaslMechanism::ScramSha512,
                };
                let user = exchange.user().to_string();
                match exchange.client_final(token) {
                    Ok(token) => Step::Authenticated { user, token },
                    Err(why) => failed(mechanism, why),
                }
            }
        }
    }
}

fn scram_hash(mechanism: SaslMechanism) -> Hash {
    match mechanism {
        SaslMechanism::ScramSha512 => Hash::Sha512,
        _ => Hash::Sha256,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn authenticator(mechanisms: &[SaslMechanism]) -> Arc<Authenticator> {
        Arc::new(
            Authenticator::new(&SaslUsers {
                mechanisms: mechanisms.to_vec(),
                users: vec![("alice".into(), "pw:with:colons".into())],
            })
            .unwrap(),
        )
    }

    #[test]
    fn plain_takes_the_right_password_and_refuses_a_wrong_one() {
        let auth = authenticator(&[SaslMechanism::Plain]);
        let mut ok = Session::new(auth.clone());
        assert_eq!(ok.handshake("PLAIN"), Handshake::Accepted);
        assert_eq!(
            ok.authenticate(b"\0alice\0pw:with:colons"),
            Step::Authenticated {
                user: "alice".into(),
                token: vec![]
            }
        );
        assert_eq!(
            ok.authenticate(b"\0alice\0pw:with:colons"),
            Step::OutOfOrder
        );
        let mut bad = Session::new(auth);
        bad.handshake("PLAIN");
        assert!(
            matches!(bad.authenticate(b"\0alice\0nope"), Step::Failed(m) if m.contains("PLAIN"))
        );
    }

    #[test]
    fn a_mechanism_not_offered_is_unsupported() {
        let mut session = Session::new(authenticator(&[SaslMechanism::ScramSha512]));
        assert_eq!(session.handshake("PLAIN"), Handshake::Unsupported);
        assert_eq!(session.mechanism_names(), ["SCRAM-SHA-512"]);
    }

    #[test]
    fn scram_sha_512_runs_both_steps() {
        let mut session = Session::new(authenticator(&[SaslMechanism::ScramSha512]));
        assert_eq!(session.handshake("SCRAM-SHA-512"), Handshake::Accepted);
        let first = scram::client::first("alice", "nonce1");
        let Step::Continue(server_first) = session.authenticate(first.as_bytes()) else {
            panic!("no server-first");
        };
        let server_first = String::from_utf8(server_first).unwrap();
        let (last, expected) =
            scram::client::last(Hash::Sha512, "pw:with:colons", &first, &server_first);
        assert_eq!(
            session.authenticate(last.as_bytes()),
            Step::Authenticated {
                user: "alice".into(),
                token: expected
            }
        );
    }

    #[test]
    fn a_token_before_the_handshake_is_out_of_order() {
        let mut session = Session::new(authenticator(&[SaslMechanism::Plain]));
        assert_eq!(session.authenticate(b"\0alice\0x"), Step::OutOfOrder);
    }
}
