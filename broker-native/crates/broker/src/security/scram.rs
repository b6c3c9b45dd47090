//! SCRAM-SHA-256 and SCRAM-SHA-512, the server's side (RFC 5802, RFC 7677),
//! without I/O: the client's first message in, the server's first out; the
//! client's final message in, the server's final out, or a refusal.
//!
//! A password is kept only as its salted keys (PBKDF2-HMAC, at least
//! [`ITERATIONS`] rounds); a proof is checked in constant time. An unknown
//! user gets a made-up salt that is the same every time (so the first reply
//! does not tell who exists) and fails at the proof, like a wrong password.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use ring::{digest, hmac, pbkdf2};
use std::num::NonZeroU32;
use subtle::ConstantTimeEq;

/// PBKDF2 rounds for stored keys: Kafka's minimum for SCRAM credentials.
pub const ITERATIONS: u32 = 4096;
/// Bytes of salt per credential and of server nonce per exchange.
const SALT_BYTES: usize = 16;
const NONCE_BYTES: usize = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    Sha256,
    Sha512,
}

impl Hash {
    fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            Hash::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            Hash::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }

    fn hmac(self) -> hmac::Algorithm {
        match self {
            Hash::Sha256 => hmac::HMAC_SHA256,
            Hash::Sha512 => hmac::HMAC_SHA512,
        }
    }

    fn digest(self) -> &'static digest::Algorithm {
        match self {
            Hash::Sha256 => &digest::SHA256,
            Hash::Sha512 => &digest::SHA512,
        }
    }

    fn len(self) -> usize {
        self.digest().output_len()
    }

    fn mac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        hmac::sign(&hmac::Key::new(self.hmac(), key), data)
            .as_ref()
            .to_vec()
    }

    fn salted_password(self, password: &str, salt: &[u8], iterations: u32) -> Vec<u8> {
        let mut out = vec![0; self.len()];
        let rounds = NonZeroU32::new(iterations.max(1)).expect("at least one round");
        pbkdf2::derive(self.pbkdf2(), rounds, salt, password.as_bytes(), &mut out);
        out
    }
}

/// What the server keeps of one user's password for one hash.
#[derive(Clone)]
pub struct Credential {
    pub salt: Vec<u8>,
    pub iterations: u32,
    pub stored_key: Vec<u8>,
    pub server_key: Vec<u8>,
}

impl Credential {
    /// Salts `password` with a fresh random salt.
    pub fn new(hash: Hash, password: &str) -> Credential {
        let mut salt = vec![0; SALT_BYTES];
        random(&mut salt);
        Credential::with_salt(hash, password, salt, ITERATIONS)
    }

    pub fn with_salt(hash: Hash, password: &str, salt: Vec<u8>, iterations: u32) -> Credential {
        let salted = hash.salted_password(password, &salt, iterations);
        let client_key = hash.mac(&salted, b"Client Key");
        Credential {
            stored_key: digest::digest(hash.digest(), &client_key).as_ref().to_vec(),
            server_key: hash.mac(&salted, b"Server Key"),
            salt,
            iterations,
        }
    }

    /// Whether `password` is the one this credential was made from (for
    /// SASL PLAIN), compared in constant time.
    pub fn matches(&self, hash: Hash, password: &str) -> bool {
        let again = Credential::with_salt(hash, password, self.salt.clone(), self.iterations);
        bool::from(again.stored_key.ct_eq(&self.stored_key))
    }
}

/// A credential for a user who does not exist: its salt depends only on the
/// name and a per-process secret, and no password matches it.
pub fn decoy(hash: Hash, secret: &hmac::Key, user: &str) -> Credential {
    let salt = hmac::sign(secret, user.as_bytes()).as_ref()[..SALT_BYTES].to_vec();
    let mut stored_key = vec![0; hash.len()];
    random(&mut stored_key);
    Credential {
        salt,
        iterations: ITERATIONS,
        server_key: stored_key.clone(),
        stored_key,
    }
}

pub(crate) fn random(out: &mut [u8]) {
    SystemRandom::new()
        .fill(out)
        .expect("the system's random source");
}

/// An exchange between the server's first message and the client's final.
pub struct Exchange {
    hash: Hash,
    user: String,
    credential: Credential,
    gs2_header: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
}

/// Reads the client's first message. `lookup` finds the user's credential
/// (`None`: an unknown user, who gets `decoy`'s). Returns the exchange and
/// the server's first message, or why the message is refused.
pub fn client_first(
    hash: Hash,
    message: &[u8],
    lookup: impl FnOnce(&str) -> Option<Credential>,
    decoy: impl FnOnce(&str) -> Credential,
) -> Result<(Exchange, Vec<u8>), String> {
    let text = std::str::from_utf8(message).map_err(|_| "client-first is not UTF-8")?;
    // gs2-header: a channel-binding flag, an optional authzid, then the bare message.
    let (flag, rest) = text
        .split_once(',')
        .ok_or("client-first has no gs2 header")?;
    match flag {
        "n" | "y" => {}
        f if f.starts_with("p=") => return Err("channel binding is not supported".into()),
        _ => return Err(format!("bad channel-binding flag {flag:?}")),
    }
    let (authzid, bare) = rest
        .split_once(',')
        .ok_or("client-first has no gs2 header")?;
    let gs2_header = &text[..flag.len() + 1 + authzid.len() + 1];
    let mut attributes = bare.split(',');
    let user = attributes
        .next()
        .and_then(|a| a.strip_prefix("n="))
        .ok_or("client-first has no user name")?;
    let user = sasl_name(user)?;
    let client_nonce = attributes
        .next()
        .and_then(|a| a.strip_prefix("r="))
        .ok_or("client-first has no nonce")?;
    if client_nonce.is_empty() || !client_nonce.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Err("client nonce is empty or not printable".into());
    }
    for extension in attributes {
        // Kafka's delegation tokens (tokenauth=true) are not served here.
        if extension.starts_with("tokenauth=") && extension != "tokenauth=false" {
            return Err("delegation tokens are not supported".into());
        }
    }
    if !authzid.is_empty() {
        let authzid = authzid
            .strip_prefix("a=")
            .ok_or("bad authorization id in the gs2 header")?;
        if sasl_name(authzid)? != user {
            return Err("the authorization id is not the user name".into());
        }
    }
    let credential = match lookup(&user) {
        Some(credential) => credential,
        None => decoy(&user),
    };
    let mut server_nonce = [0u8; NONCE_BYTES];
    random(&mut server_nonce);
    let nonce = format!("{client_nonce}{}", BASE64.encode(server_nonce));
    let server_first = format!(
        "r={nonce},s={},i={}",
        BASE64.encode(&credential.salt),
        credential.iterations
    );
    let reply = server_first.clone().into_bytes();
    Ok((
        Exchange {
            hash,
            user,
            credential,
            gs2_header: gs2_header.to_string(),
            client_first_bare: bare.to_string(),
            server_first,
            nonce,
        },
        reply,
    ))
}

impl Exchange {
    pub fn hash(&self) -> Hash {
        self.hash
    }

    /// The user the exchange is for (not yet proven).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// Checks the client's final message: the channel binding, the nonce
    /// and the proof. On success, the server's final message.
    pub fn client_final(self, message: &[u8]) -> Result<Vec<u8>, String> {
        let text = std::str::from_utf8(message).map_err(|_| "client-final is not UTF-8")?;
        let (without_proof, proof) = text.rsplit_once(",p=").ok_or("client-final has no proof")?;
        let mut attributes = without_proof.split(',');
        let binding = attributes
            .next()
            .and_then(|a| a.strip_prefix("c="))
            .ok_or("client-final has no channel binding")?;
        if BASE64.decode(binding).ok().as_deref() != Some(self.gs2_header.as_bytes()) {
            return Err("the channel binding does not match the gs2 header".into());
        }
        let nonce = attributes
            .next()
            .and_then(|a| a.strip_prefix("r="))
            .ok_or("client-final has no nonce")?;
        // Kafka accepts a nonce that ends with the server's (the whole
        // client + server nonce): librdkafka up to 2.0 sends its own nonce
        // once more in front of it. The server's random part is still bound.
        if !nonce.ends_with(self.nonce.as_str()) {
            return Err("the nonce is not the one the server sent".into());
        }
        let proof = BASE64
            .decode(proof)
            .map_err(|_| "the proof is not base64")?;
        let hash = self.hash;
        if proof.len() != hash.len() {
            return Err("the proof has the wrong length".into());
        }
        let auth_message = format!(
            "{},{},{without_proof}",
            self.client_first_bare, self.server_first
        );
        let client_signature = hash.mac(&self.credential.stored_key, auth_message.as_bytes());
        let client_key: Vec<u8> = proof
            .iter()
            .zip(&client_signature)
            .map(|(p, s)| p ^ s)
            .collect();
        let stored_key = digest::digest(hash.digest(), &client_key);
        if !bool::from(stored_key.as_ref().ct_eq(&self.credential.stored_key)) {
            return Err("invalid credentials".into());
        }
        let server_signature = hash.mac(&self.credential.server_key, auth_message.as_bytes());
        Ok(format!("v={}", BASE64.encode(server_signature)).into_bytes())
    }
}

/// A saslname with `=2C` and `=3D` turned back into `,` and `=`.
fn sasl_name(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('=') {
        out.push_str(&rest[..at]);
        match rest.get(at..at + 3) {
            Some("=2C") => out.push(','),
            Some("=3D") => out.push('='),
            _ => return Err("bad escape in a user name".into()),
        }
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    if out.is_empty() {
        return Err("empty user name".into());
    }
    Ok(out)
}

/// The client's side, for tests: RFC 5802's computation from the password.
#[cfg(test)]
pub(crate) mod client {
    use super::*;

    pub fn first(user: &str, nonce: &str) -> String {
        format!("n,,n={user},r={nonce}")
    }

    /// The client's final message for `server_first`, and the server
    /// signature the client expects back.
    pub fn last(
        hash: Hash,
        password: &str,
        client_first: &str,
        server_first: &str,
    ) -> (String, Vec<u8>) {
        let nonce = server_first
            .split(',')
            .find_map(|a| a.strip_prefix("r="))
            .unwrap_or_default();
        last_with_nonce(hash, password, client_first, server_first, nonce)
    }

    /// `last`, sending `nonce` (as a client may) in place of the server's.
    pub fn last_with_nonce(
        hash: Hash,
        password: &str,
        client_first: &str,
        server_first: &str,
        nonce: &str,
    ) -> (String, Vec<u8>) {
        let mut salt = Vec::new();
        let mut iterations = 0;
        for attribute in server_first.split(',') {
            if let Some(v) = attribute.strip_prefix("s=") {
                salt = BASE64.decode(v).unwrap();
            } else if let Some(v) = attribute.strip_prefix("i=") {
                iterations = v.parse().unwrap();
            }
        }
        let salted = hash.salted_password(password, &salt, iterations);
        let client_key = hash.mac(&salted, b"Client Key");
        let stored_key = digest::digest(hash.digest(), &client_key);
        let without_proof = format!("c={},r={nonce}", BASE64.encode("n,,"));
        let bare = &client_first[3..];
        let auth_message = format!("{bare},{server_first},{without_proof}");
        let signature = hash.mac(stored_key.as_ref(), auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hash.mac(&salted, b"Server Key");
        let expected = hash.mac(&server_key, auth_message.as_bytes());
        (
            format!("{without_proof},p={}", BASE64.encode(proof)),
            format!("v={}", BASE64.encode(expected)).into_bytes(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's SCRAM-SHA-256 example: user "user", password "pencil".
    #[test]
    fn the_rfc_7677_example_gives_the_rfc_server_signature() {
        let salt = BASE64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let credential = Credential::with_salt(Hash::Sha256, "pencil", salt, 4096);
        let bare = "n=user,r=rOprNGfwEbeRWgbNEkqO";
        let server_first =
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let exchange = Exchange {
            hash: Hash::Sha256,
            user: "user".into(),
            credential,
            gs2_header: "n,,".into(),
            client_first_bare: bare.into(),
            server_first: server_first.into(),
            nonce: "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0".into(),
        };
        let final_message = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
        let reply = exchange.client_final(final_message.as_bytes()).unwrap();
        assert_eq!(
            reply,
            b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=".to_vec()
        );
    }

    fn exchange(hash: Hash, password: &str, given: &str) -> Result<(), String> {
        let credential = Credential::new(hash, password);
        let first = client::first("alice", "fyko+d2lbbFgONRv9qkxdawL");
        let (exchange, server_first) = client_first(
            hash,
            first.as_bytes(),
            |u| (u == "alice").then(|| credential.clone()),
            |u| decoy(hash, &hmac::Key::new(hmac::HMAC_SHA256, b"k"), u),
        )?;
        let server_first = String::from_utf8(server_first).unwrap();
        let (last, expected) = client::last(hash, given, &first, &server_first);
        let reply = exchange.client_final(last.as_bytes())?;
        assert_eq!(reply, expected);
        Ok(())
    }

    #[test]
    fn the_right_password_passes_with_either_hash() {
        exchange(Hash::Sha256, "s3cret", "s3cret").unwrap();
        exchange(Hash::Sha512, "s3cret", "s3cret").unwrap();
    }

    #[test]
    fn a_wrong_password_is_refused() {
        assert_eq!(
            exchange(Hash::Sha512, "s3cret", "guess"),
            Err("invalid credentials".into())
        );
    }

    #[test]
    fn a_changed_nonce_is_refused() {
        let hash = Hash::Sha512;
        let credential = Credential::new(hash, "pw");
        let first = client::first("alice", "abc");
        let (exchange, server_first) = client_first(
            hash,
            first.as_bytes(),
            |_| Some(credential.clone()),
            |_| unreachable!(),
        )
        .unwrap();
        let server_first = String::from_utf8(server_first).unwrap();
        let (last, _) = client::last(hash, "pw", &first, &server_first);
        let forged = last.replacen(",r=abc", ",r=abcX", 1);
        assert_eq!(
            exchange.client_final(forged.as_bytes()),
            Err("the nonce is not the one the server sent".into())
        );
    }

    #[test]
    fn an_unknown_user_gets_the_same_salt_every_time() {
        let secret = hmac::Key::new(hmac::HMAC_SHA256, b"secret");
        let salt = |user: &str| {
            let (_, reply) = client_first(
                Hash::Sha256,
                client::first(user, "n1").as_bytes(),
                |_| None,
                |u| decoy(Hash::Sha256, &secret, u),
            )
            .unwrap();
            String::from_utf8(reply)
                .unwrap()
                .split(',')
                .nth(1)
                .unwrap()
                .to_string()
        };
        assert_eq!(salt("mallory"), salt("mallory"));
        assert_ne!(salt("mallory"), salt("eve"));
    }

    #[test]
    fn malformed_first_messages_are_refused() {
        for message in [
            &b"\xff\xfe"[..],
            b"",
            b"n,,",
            b"p=tls-unique,,n=a,r=b",
            b"n,,n=,r=abc",
            b"n,,n=a=2X,r=abc",
            b"n,,n=a",
            b"n,,n=a,r=",
            b"n,a=bob,n=alice,r=abc",
            b"n,,n=a,r=abc,tokenauth=true",
        ] {
            let result = client_first(
                Hash::Sha256,
                message,
                |_| None,
                |u| decoy(Hash::Sha256, &hmac::Key::new(hmac::HMAC_SHA256, b"k"), u),
            );
            assert!(result.is_err(), "{:?}", String::from_utf8_lossy(message));
        }
    }

    /// librdkafka 2.0 puts its nonce in front of the server's once more;
    /// Kafka's server accepts that (it checks that the nonce ends with its
    /// own), and so does this one, with the proof still checked.
    #[test]
    fn a_client_nonce_repeated_in_front_is_accepted_as_kafka_does() {
        let hash = Hash::Sha512;
        let credential = Credential::new(hash, "pw");
        let first = client::first("alice", "abc");
        let (exchange, server_first) = client_first(
            hash,
            first.as_bytes(),
            |_| Some(credential.clone()),
            |_| unreachable!(),
        )
        .unwrap();
        let server_first = String::from_utf8(server_first).unwrap();
        let nonce = server_first
            .split(',')
            .next()
            .unwrap()
            .strip_prefix("r=")
            .unwrap();
        let (last, expected) =
            client::last_with_nonce(hash, "pw", &first, &server_first, &format!("abc{nonce}"));
        assert!(last.contains(&format!(",r=abc{nonce},")));
        assert_eq!(exchange.client_final(last.as_bytes()), Ok(expected));
    }

    #[test]
    fn escaped_user_names_are_decoded() {
        assert_eq!(sasl_name("a=2Cb=3Dc").unwrap(), "a,b=c");
    }

    #[test]
    fn plain_passwords_are_checked_against_the_salted_keys() {
        let credential = Credential::new(Hash::Sha256, "pw");
        assert!(credential.matches(Hash::Sha256, "pw"));
        assert!(!credential.matches(Hash::Sha256, "pW"));
        assert!(credential.iterations >= 4096);
    }
}
