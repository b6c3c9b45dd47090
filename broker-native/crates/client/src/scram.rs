//! SCRAM-SHA-256 and SCRAM-SHA-512, the client's side (RFC 5802, RFC 7677), without I/O: the
//! first message out; the server's first in, the final message out; the server's final in,
//! checked against the signature the password predicts (so a server that does not know the
//! password is not believed).

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use ring::{digest, hmac, pbkdf2};
use std::num::NonZeroU32;

/// Kafka's bounds on a credential's PBKDF2 rounds: fewer is refused (a server must not talk a
/// client into a weak proof), more would let a server make each connect cost seconds of CPU.
const MIN_ITERATIONS: u32 = 4096;
const MAX_ITERATIONS: u32 = 16384;
/// Random bytes in the client's nonce (base64: no comma, all printable).
const NONCE_BYTES: usize = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScramHash {
    Sha256,
    Sha512,
}

impl ScramHash {
    /// Kafka's name for the mechanism.
    pub fn mechanism(self) -> &'static str {
        match self {
            ScramHash::Sha256 => "SCRAM-SHA-256",
            ScramHash::Sha512 => "SCRAM-SHA-512",
        }
    }

    fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            ScramHash::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            ScramHash::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }

    fn hmac(self) -> hmac::Algorithm {
        match self {
            ScramHash::Sha256 => hmac::HMAC_SHA256,
            ScramHash::Sha512 => hmac::HMAC_SHA512,
        }
    }

    fn digest(self) -> &'static digest::Algorithm {
        match self {
            ScramHash::Sha256 => &digest::SHA256,
            ScramHash::Sha512 => &digest::SHA512,
        }
    }

    fn mac(self, key: &[u8], data: &[u8]) -> hmac::Tag {
        hmac::sign(&hmac::Key::new(self.hmac(), key), data)
    }
}

/// One exchange: [`ScramClient::first`], then [`ScramClient::last`] with the server's first
/// message, then [`ScramClient::verify`] with its final one.
pub struct ScramClient {
    hash: ScramHash,
    password: String,
    nonce: String,
    first_bare: String,
    /// The signature the server must send, once the final message is written.
    server_signature: Option<Vec<u8>>,
}

impl std::fmt::Debug for ScramClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramClient")
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

impl ScramClient {
    /// A fresh exchange with a random nonce.
    pub fn new(hash: ScramHash, username: &str, password: &str) -> Result<ScramClient, String> {
        let mut bytes = [0u8; NONCE_BYTES];
        SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| "no randomness for the SCRAM nonce".to_string())?;
        Ok(Self::with_nonce(
            hash,
            username,
            password,
            &BASE64.encode(bytes),
        ))
    }

    /// An exchange with a given nonce (tests replay RFC 7677's).
    pub fn with_nonce(hash: ScramHash, username: &str, password: &str, nonce: &str) -> ScramClient {
        let name = username.replace('=', "=3D").replace(',', "=2C");
        ScramClient {
            hash,
            password: password.to_string(),
            nonce: nonce.to_string(),
            first_bare: format!("n={name},r={nonce}"),
            server_signature: None,
        }
    }

    /// client-first-message: no channel binding, no authorization identity.
    pub fn first(&self) -> Vec<u8> {
        format!("n,,{}", self.first_bare).into_bytes()
    }

    /// client-final-message for the server's first message.
    pub fn last(&mut self, server_first: &[u8]) -> Result<Vec<u8>, String> {
        let server_first = std::str::from_utf8(server_first)
            .map_err(|_| "the server's first SCRAM message is not UTF-8".to_string())?;
        let (mut nonce, mut salt, mut iterations) = (None, None, None);
        for field in server_first.split(',') {
            match field.split_once('=') {
                Some(("r", v)) => nonce = Some(v),
                Some(("s", v)) => salt = Some(v),
                Some(("i", v)) => iterations = Some(v),
                Some(("e", v)) => return Err(format!("the server refused: {v}")),
                _ => {}
            }
        }
        let nonce = nonce.ok_or("the server's first SCRAM message has no nonce")?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err("the server's SCRAM nonce does not extend the client's".into());
        }
        let salt = BASE64
            .decode(salt.ok_or("the server's first SCRAM message has no salt")?)
            .map_err(|_| "the server's SCRAM salt is not base64".to_string())?;
        let iterations: u32 = iterations
            .ok_or("the server's first SCRAM message has no iteration count")?
            .parse()
            .map_err(|_| "the server's SCRAM iteration count is not a number".to_string())?;
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return Err(format!(
                "the server asks for {iterations} SCRAM iterations (accepted: {MIN_ITERATIONS} to {MAX_ITERATIONS})"
            ));
        }
        let hash = self.hash;
        let mut salted = vec![0u8; hash.digest().output_len()];
        let rounds = NonZeroU32::new(iterations).expect("checked above");
        pbkdf2::derive(
            hash.pbkdf2(),
            rounds,
            &salt,
            self.password.as_bytes(),
            &mut salted,
        );
        let client_key = hash.mac(&salted, b"Client Key");
        let stored_key = digest::digest(hash.digest(), client_key.as_ref());
        // "biws" is base64 of "n,,": the GS2 header, no channel binding.
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.first_bare);
        let signature = hash.mac(stored_key.as_ref(), auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .as_ref()
            .iter()
            .zip(signature.as_ref())
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hash.mac(&salted, b"Server Key");
        self.server_signature = Some(
            hash.mac(server_key.as_ref(), auth_message.as_bytes())
                .as_ref()
                .to_vec(),
        );
        Ok(format!("{without_proof},p={}", BASE64.encode(proof)).into_bytes())
    }

    /// Checks the server's final message: its signature proves it knows the password too.
    pub fn verify(&self, server_final: &[u8]) -> Result<(), String> {
        let expected = self
            .server_signature
            .as_ref()
            .ok_or("the server's final SCRAM message came before the client's")?;
        let text = std::str::from_utf8(server_final)
            .map_err(|_| "the server's final SCRAM message is not UTF-8".to_string())?;
        if let Some(error) = text.strip_prefix("e=") {
            return Err(format!("the server refused: {error}"));
        }
        let signature = text
            .split(',')
            .find_map(|f| f.strip_prefix("v="))
            .ok_or("the server's final SCRAM message has no signature")?;
        let signature = BASE64
            .decode(signature)
            .map_err(|_| "the server's SCRAM signature is not base64".to_string())?;
        // Not secret: the server sent it, and a mismatch ends the exchange.
        if signature != *expected {
            return Err(
                "the server's SCRAM signature is wrong: it does not know the password".into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 7677, section 3: user "user", password "pencil".
    const NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
    const SERVER_FIRST: &str =
        "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    const CLIENT_FINAL: &str = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    const SERVER_FINAL: &str = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

    #[test]
    fn scram_sha_256_matches_rfc_7677_example() {
        let mut client = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil", NONCE);
        assert_eq!(client.first(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let last = client.last(SERVER_FIRST.as_bytes()).unwrap();
        assert_eq!(String::from_utf8(last).unwrap(), CLIENT_FINAL);
        client.verify(SERVER_FINAL.as_bytes()).unwrap();
    }

    #[test]
    fn a_wrong_server_signature_is_refused() {
        let mut client = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil", NONCE);
        client.last(SERVER_FIRST.as_bytes()).unwrap();
        let forged = "v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";
        assert!(client
            .verify(forged.as_bytes())
            .unwrap_err()
            .contains("does not know the password"));
        assert!(client
            .verify(b"e=invalid-proof")
            .unwrap_err()
            .contains("invalid-proof"));
    }

    #[test]
    fn a_server_nonce_not_extending_the_clients_is_refused() {
        let mut client = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil", NONCE);
        let err = client
            .last(b"r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
            .unwrap_err();
        assert!(err.contains("nonce"), "{err}");
    }

    #[test]
    fn iteration_counts_outside_kafkas_bounds_are_refused() {
        for i in ["1", "4095", "16385", "4000000000", "x"] {
            let mut client = ScramClient::with_nonce(ScramHash::Sha512, "user", "pencil", NONCE);
            let first = format!("r={NONCE}abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i={i}");
            assert!(client.last(first.as_bytes()).is_err(), "i={i}");
        }
    }

    #[test]
    fn user_names_escape_equals_and_comma() {
        let client = ScramClient::with_nonce(ScramHash::Sha512, "a=b,c", "pw", "n0");
        assert_eq!(client.first(), b"n,,n=a=3Db=2Cc,r=n0");
    }

    #[test]
    fn fresh_nonces_differ() {
        let a = ScramClient::new(ScramHash::Sha512, "u", "p").unwrap();
        let b = ScramClient::new(ScramHash::Sha512, "u", "p").unwrap();
        assert_ne!(a.first(), b.first());
    }
}
