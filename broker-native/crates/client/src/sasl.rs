//! SASL on a fresh connection, before its first request: SaslHandshake (v1) names the mechanism,
//! then SaslAuthenticate (v1) carries its messages, one frame at a time, each answer walked by
//! kbench-wire like any other. PLAIN (RFC 4616), SCRAM-SHA-256/512 (see [`crate::scram`]) and
//! OAUTHBEARER (RFC 7628) with a token read from a file or a command's output at connect.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
use kafka_protocol::protocol::{Request, StrBytes};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::{Error, Result};
use crate::frame::{correlation_id, decode_response, read_frame, Encoder};
use crate::scram::{ScramClient, ScramHash};

const HANDSHAKE_VERSION: i16 = 1;
/// v1: the first version with the session lifetime; every broker with SASL frames (Kafka 2.2+,
/// Redpanda, the bundled broker) serves it.
const AUTHENTICATE_VERSION: i16 = 1;
/// Kafka's error codes the exchange names.
const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
const ILLEGAL_SASL_STATE: i16 = 34;
const SASL_AUTHENTICATION_FAILED: i16 = 58;
/// How long a token command may run.
const TOKEN_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// A SASL mechanism and its credentials.
#[derive(Clone)]
pub enum Sasl {
    Plain {
        username: String,
        password: String,
    },
    Scram {
        hash: ScramHash,
        username: String,
        password: String,
    },
    OauthBearer(TokenSource),
}

/// Where an OAUTHBEARER token comes from, read again at every connect (a token expires).
#[derive(Debug, Clone)]
pub enum TokenSource {
    /// A file holding the token (surrounding white space ignored).
    File(PathBuf),
    /// A shell command (`sh -c`) that prints the token on stdout.
    Command(String),
}

impl std::fmt::Debug for Sasl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sasl::Plain { username, .. } => write!(f, "Plain({username:?})"),
            Sasl::Scram { hash, username, .. } => write!(f, "{hash:?}({username:?})"),
            Sasl::OauthBearer(source) => write!(f, "OauthBearer({source:?})"),
        }
    }
}

impl Sasl {
    /// Kafka's name for the mechanism.
    pub fn mechanism(&self) -> &'static str {
        match self {
            Sasl::Plain { .. } => "PLAIN",
            Sasl::Scram { hash, .. } => hash.mechanism(),
            Sasl::OauthBearer(_) => "OAUTHBEARER",
        }
    }
}

/// The OAUTHBEARER client's first message (RFC 7628 section 3.1): a GS2 header without an
/// authorization identity, then the token as a Bearer auth value.
pub fn oauthbearer_initial_response(token: &str) -> Vec<u8> {
    format!("n,,\x01auth=Bearer {token}\x01\x01").into_bytes()
}

/// A token as RFC 6750 allows one: base64url-ish characters, so it cannot break the framing.
fn check_token(token: &str, from: &str) -> Result<()> {
    let ok = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    if token.is_empty() {
        return Err(Error::Config(format!(
            "sasl: the OAUTHBEARER token from {from} is empty"
        )));
    }
    if !token.chars().all(ok) {
        return Err(Error::Config(format!(
            "sasl: the OAUTHBEARER token from {from} holds characters a bearer token cannot (RFC 6750)"
        )));
    }
    Ok(())
}

/// A bearer token is a few KB (a JWT); a file or a command's output past this is not one, and is
/// never read whole.
const MAX_TOKEN_BYTES: u64 = 64 * 1024;

/// Up to MAX_TOKEN_BYTES of `source` as text; more is an error naming `from`.
async fn read_token_text(source: impl AsyncRead + Unpin, from: &str) -> Result<String> {
    let mut bytes = Vec::new();
    source
        .take(MAX_TOKEN_BYTES + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| Error::Config(format!("sasl: cannot read {from}: {e}")))?;
    if bytes.len() as u64 > MAX_TOKEN_BYTES {
        return Err(Error::Config(format!(
            "sasl: {from} holds more than {MAX_TOKEN_BYTES} bytes, which is no bearer token"
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| Error::Config(format!("sasl: {from} holds no UTF-8 token")))
}

impl TokenSource {
    /// Reads the token now. Errors never quote it.
    pub async fn token(&self) -> Result<String> {
        match self {
            TokenSource::File(path) => {
                let from = format!("tokenFile {}", path.display());
                let file = tokio::fs::File::open(path)
                    .await
                    .map_err(|e| Error::Config(format!("sasl: cannot read {from}: {e}")))?;
                let token = read_token_text(file, &from).await?.trim().to_string();
                check_token(&token, &from)?;
                Ok(token)
            }
            TokenSource::Command(command) => {
                let from = format!("tokenCommand {command:?}");
                let mut child = tokio::process::Command::new("sh")
                    .arg("-c")
                    .arg(command)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .map_err(|e| Error::Config(format!("sasl: cannot start {from}: {e}")))?;
                let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
                // Both outputs are read through a bound, never buffered whole.
                let run = async {
                    let text = match stdout {
                        Some(out) => read_token_text(out, &from).await,
                        None => Ok(String::new()),
                    };
                    let mut message = Vec::new();
                    if let Some(err) = stderr {
                        let _ = err.take(4096).read_to_end(&mut message).await;
                    }
                    let status = child
                        .wait()
                        .await
                        .map_err(|e| Error::Config(format!("sasl: {from}: {e}")))?;
                    Ok::<_, Error>((text, message, status))
                };
                let (text, message, status) = tokio::time::timeout(TOKEN_COMMAND_TIMEOUT, run)
                    .await
                    .map_err(|_| {
                        Error::Config(format!(
                            "sasl: {from} did not finish within {}s",
                            TOKEN_COMMAND_TIMEOUT.as_secs()
                        ))
                    })??;
                // Output past the bound is refused first: the command then dies of a closed pipe.
                let text = text?;
                if !status.success() {
                    let stderr = String::from_utf8_lossy(&message);
                    let stderr: String = stderr.trim().chars().take(300).collect();
                    return Err(Error::Config(format!(
                        "sasl: {from} failed ({status}): {stderr}"
                    )));
                }
                let token = text.trim().to_string();
                check_token(&token, &from)?;
                Ok(token)
            }
        }
    }
}

/// Frames of the exchange: one request, its answer, in the connection's halves (any reader and
/// writer, so this module does not name the transport's types: the transport calls it).
struct Exchange<'a, R, W> {
    read: &'a mut R,
    write: &'a mut W,
    addr: &'a str,
    encoder: Encoder,
    buf: BytesMut,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Exchange<'_, R, W> {
    async fn call<Q: Request>(&mut self, version: i16, request: &Q) -> Result<Q::Response> {
        let asked = self.encoder.encode(version, request)?;
        self.write
            .write_all(self.encoder.frame())
            .await
            .map_err(Error::io(self.addr))?;
        self.write.flush().await.map_err(Error::io(self.addr))?;
        let frame = read_frame(self.read, &mut self.buf, self.addr).await?;
        if correlation_id(&frame) != asked {
            return Err(Error::Protocol(format!(
                "unsolicited correlation id {} from {} during SASL",
                correlation_id(&frame),
                self.addr
            )));
        }
        decode_response::<Q>(frame, version)
    }

    /// One SaslAuthenticate round: `bytes` out, the server's bytes back, or its refusal.
    async fn authenticate(&mut self, mechanism: &str, bytes: Vec<u8>) -> Result<Bytes> {
        let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(bytes));
        let response = self.call(AUTHENTICATE_VERSION, &request).await?;
        if response.error_code != 0 {
            let name = match response.error_code {
                SASL_AUTHENTICATION_FAILED => "SASL_AUTHENTICATION_FAILED",
                ILLEGAL_SASL_STATE => "ILLEGAL_SASL_STATE",
                _ => "error",
            };
            let message = response.error_message.as_deref().unwrap_or("");
            return Err(self.refused(format!(
                "{mechanism} authentication failed: {name} (code {}){}{message}",
                response.error_code,
                if message.is_empty() { "" } else { ": " }
            )));
        }
        Ok(response.auth_bytes)
    }

    fn refused(&self, message: String) -> Error {
        Error::Sasl {
            addr: self.addr.to_string(),
            message,
        }
    }
}

/// Authenticates a fresh connection with `sasl`.
pub(crate) async fn authenticate<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    read: &mut R,
    write: &mut W,
    addr: &str,
    client_id: StrBytes,
    sasl: &Sasl,
) -> Result<()> {
    let mechanism = sasl.mechanism();
    // Read before any byte goes out, so a bad token source fails without a half-done exchange.
    let token = match sasl {
        Sasl::OauthBearer(source) => Some(source.token().await?),
        _ => None,
    };
    let mut x = Exchange {
        read,
        write,
        addr,
        encoder: Encoder::new(client_id),
        buf: BytesMut::with_capacity(4096),
    };
    let handshake =
        SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism));
    let response = x.call(HANDSHAKE_VERSION, &handshake).await?;
    match response.error_code {
        0 => {}
        UNSUPPORTED_SASL_MECHANISM => {
            let offered: Vec<&str> = response.mechanisms.iter().map(|m| m.as_str()).collect();
            return Err(x.refused(format!(
                "the broker does not enable {mechanism} (UNSUPPORTED_SASL_MECHANISM; it offers {offered:?})"
            )));
        }
        ILLEGAL_SASL_STATE => {
            return Err(x.refused(
                "the listener takes no SASL handshake (ILLEGAL_SASL_STATE): is it a SASL listener?"
                    .into(),
            ))
        }
        code => return Err(x.refused(format!("SaslHandshake failed with Kafka error code {code}"))),
    }
    match sasl {
        Sasl::Plain { username, password } => {
            let message = format!("\0{username}\0{password}").into_bytes();
            x.authenticate(mechanism, message).await?;
        }
        Sasl::Scram {
            hash,
            username,
            password,
        } => {
            let mut scram = ScramClient::new(*hash, username, password).map_err(Error::Config)?;
            let server_first = x.authenticate(mechanism, scram.first()).await?;
            let last = scram
                .last(&server_first)
                .map_err(|e| x.refused(format!("{mechanism}: {e}")))?;
            let server_final = x.authenticate(mechanism, last).await?;
            scram
                .verify(&server_final)
                .map_err(|e| x.refused(format!("{mechanism}: {e}")))?;
        }
        Sasl::OauthBearer(_) => {
            let token = token.expect("read above");
            let challenge = x
                .authenticate(mechanism, oauthbearer_initial_response(&token))
                .await?;
            if !challenge.is_empty() {
                // RFC 7628 3.2.2: an error comes as a JSON challenge; the client answers with a
                // lone 0x01 and the server then fails the exchange. Keep the server's JSON.
                let status = String::from_utf8_lossy(&challenge)
                    .chars()
                    .take(300)
                    .collect::<String>();
                return Err(match x.authenticate(mechanism, vec![1]).await {
                    Err(Error::Sasl { message, .. }) => x.refused(format!("{message} ({status})")),
                    Err(other) => other,
                    Ok(_) => x.refused(format!(
                        "{mechanism} authentication failed: SASL_AUTHENTICATION_FAILED ({status})"
                    )),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauthbearer_initial_response_is_rfc_7628_framing() {
        assert_eq!(
            oauthbearer_initial_response("eyJhbGciOi.x-y_z"),
            b"n,,\x01auth=Bearer eyJhbGciOi.x-y_z\x01\x01"
        );
    }

    #[tokio::test]
    async fn a_token_file_is_read_and_trimmed() {
        let dir = std::env::temp_dir().join(format!("kbench-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "  abc.def-ghi \n").unwrap();
        let token = TokenSource::File(file.clone()).token().await.unwrap();
        assert_eq!(token, "abc.def-ghi");
        // A token that would break the framing is refused, and not quoted.
        std::fs::write(&file, "abc\x01auth=evil").unwrap();
        let err = TokenSource::File(file)
            .token()
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("RFC 6750"), "{err}");
        assert!(!err.contains("evil"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn a_token_command_prints_the_token_and_its_failure_is_named() {
        let token = TokenSource::Command("printf 'tok.en\\n'".into())
            .token()
            .await
            .unwrap();
        assert_eq!(token, "tok.en");
        let err = TokenSource::Command("echo nope >&2; exit 3".into())
            .token()
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("tokenCommand") && err.contains("nope"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_token_file_or_command_output_too_large_for_a_token_is_refused_unread() {
        // /dev/zero never ends: read whole, it would fill memory.
        let err = TokenSource::File("/dev/zero".into())
            .token()
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("no bearer token"), "{err}");
        let err = TokenSource::Command("yes abcdefgh | head -c 1000000".into())
            .token()
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("no bearer token"), "{err}");
    }
}
