//! TLS and SASL on the listener, over real sockets, with a client written
//! here: a rustls TLS client, and SCRAM-SHA-512 computed from RFC 5802
//! (not the broker's code), then Kafka requests after authentication.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use kbench_broker_core::{start, BrokerConfig, BrokerHandle, SaslMechanism, SaslUsers, TlsFiles};
use ring::{digest, hmac, pbkdf2};
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::rustls::{self, pki_types::ServerName, ClientConfig, RootCertStore};
use tokio_rustls::TlsConnector;

/// A throwaway CA, a server certificate for 127.0.0.1 / localhost, and a
/// client certificate, written as PEM files under `dir`.
struct Certs {
    ca: rcgen::Certificate,
    ca_pem: String,
    client_cert: String,
    client_key: String,
    files: TlsFiles,
}

fn certs(dir: &Path) -> Certs {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |names: Vec<String>| {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    };
    let (server_cert, server_key) = leaf(vec!["127.0.0.1".into(), "localhost".into()]);
    let (client_cert, client_key) = leaf(vec!["client".into()]);
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let ca_pem = ca.pem();
    let files = TlsFiles {
        cert: write("server.pem", &server_cert),
        key: write("server.key", &server_key),
        client_ca: None,
    };
    write("ca.pem", &ca_pem);
    Certs {
        ca,
        ca_pem,
        client_cert,
        client_key,
        files,
    }
}

const USER: &str = "alice";
const PASSWORD: &str = "wonder:land";

async fn broker(
    dir: &Path,
    tls: Option<TlsFiles>,
    mechanism: Option<SaslMechanism>,
) -> BrokerHandle {
    let mut config = BrokerConfig::new(dir.join("data"));
    config.auto_create_topics = true;
    config.security.tls = tls;
    config.security.sasl = mechanism.map(|m| SaslUsers {
        mechanisms: vec![m],
        users: vec![(USER.into(), PASSWORD.into())],
    });
    start(config).await.unwrap()
}

fn client_config(certs: &Certs, with_client_cert: bool) -> ClientConfig {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = RootCertStore::empty();
    roots.add(certs.ca.der().clone()).unwrap();
    let builder =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots);
    if with_client_cert {
        let chain = vec![CertificateDer::from_pem_slice(certs.client_cert.as_bytes()).unwrap()];
        let key = PrivateKeyDer::from_pem_slice(certs.client_key.as_bytes()).unwrap();
        builder.with_client_auth_cert(chain, key).unwrap()
    } else {
        builder.with_no_client_auth()
    }
}

async fn tls_connect(
    port: u16,
    config: ClientConfig,
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await?;
    let connector = TlsConnector::from(Arc::new(config));
    let name = ServerName::try_from("localhost").unwrap();
    connector.connect(name, tcp).await
}

/// Writes one request and reads its response body (after the header).
async fn call<S, Req, Resp>(stream: &mut S, key: ApiKey, version: i16, req: &Req) -> Resp
where
    S: AsyncRead + AsyncWrite + Unpin,
    Req: Encodable,
    Resp: Decodable,
{
    send(stream, key, version, req).await;
    let mut body = read_frame(stream).await.expect("a response");
    ResponseHeader::decode(&mut body, key.response_header_version(version)).unwrap();
    Resp::decode(&mut body, version).unwrap()
}

async fn send<S: AsyncWrite + Unpin, Req: Encodable>(
    stream: &mut S,
    key: ApiKey,
    version: i16,
    req: &Req,
) {
    let mut header = RequestHeader::default();
    header.request_api_key = key as i16;
    header.request_api_version = version;
    header.correlation_id = 7;
    header.client_id = Some(StrBytes::from_static_str("security-test"));
    let mut body = BytesMut::new();
    header
        .encode(&mut body, key.request_header_version(version))
        .unwrap();
    req.encode(&mut body, version).unwrap();
    send_raw(stream, &body).await;
}

async fn send_raw<S: AsyncWrite + Unpin>(stream: &mut S, body: &[u8]) {
    let mut frame = BytesMut::new();
    frame.put_i32(body.len() as i32);
    frame.extend_from_slice(body);
    stream.write_all(&frame).await.unwrap();
    stream.flush().await.unwrap();
}

/// The next frame, or `None` once the broker has closed the connection.
async fn read_frame<S: AsyncRead + Unpin>(stream: &mut S) -> Option<BytesMut> {
    let read = async {
        let size = stream.read_i32().await.ok()?;
        let mut buf = BytesMut::zeroed(size as usize);
        stream.read_exact(&mut buf).await.ok()?;
        Some(buf)
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the broker neither answered nor closed")
}

fn handshake(mechanism: &str) -> SaslHandshakeRequest {
    let mut req = SaslHandshakeRequest::default();
    req.mechanism = StrBytes::from_string(mechanism.into());
    req
}

fn token(bytes: Vec<u8>) -> SaslAuthenticateRequest {
    let mut req = SaslAuthenticateRequest::default();
    req.auth_bytes = Bytes::from(bytes);
    req
}

fn hmac512(key: &[u8], data: &[u8]) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA512, key), data)
        .as_ref()
        .to_vec()
}

/// SCRAM-SHA-512 from the client's side (RFC 5802 section 3). Returns the
/// last response (error code, message) and whether the server's signature
/// was the one the password predicts.
async fn scram_sha_512<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    user: &str,
    password: &str,
) -> (i16, Option<String>, bool) {
    let hs: SaslHandshakeResponse = call(
        stream,
        ApiKey::SaslHandshake,
        1,
        &handshake("SCRAM-SHA-512"),
    )
    .await;
    assert_eq!(hs.error_code, 0);
    let client_nonce = "rOprNGfwEbeRWgbNEkqO";
    let bare = format!("n={user},r={client_nonce}");
    let first: SaslAuthenticateResponse = call(
        stream,
        ApiKey::SaslAuthenticate,
        2,
        &token(format!("n,,{bare}").into_bytes()),
    )
    .await;
    assert_eq!(first.error_code, 0, "{:?}", first.error_message);
    let server_first = String::from_utf8(first.auth_bytes.to_vec()).unwrap();
    let mut parts = server_first.split(',');
    let nonce = parts.next().unwrap().strip_prefix("r=").unwrap();
    assert!(nonce.starts_with(client_nonce) && nonce.len() > client_nonce.len());
    let salt = BASE64
        .decode(parts.next().unwrap().strip_prefix("s=").unwrap())
        .unwrap();
    let iterations: u32 = parts
        .next()
        .unwrap()
        .strip_prefix("i=")
        .unwrap()
        .parse()
        .unwrap();
    assert!(iterations >= 4096);
    let mut salted = [0u8; 64];
    pbkdf2::derive(
        pbkdf2::PBKDF2_HMAC_SHA512,
        NonZeroU32::new(iterations).unwrap(),
        &salt,
        password.as_bytes(),
        &mut salted,
    );
    let client_key = hmac512(&salted, b"Client Key");
    let stored_key = digest::digest(&digest::SHA512, &client_key);
    let without_proof = format!("c={},r={nonce}", BASE64.encode("n,,"));
    let auth_message = format!("{bare},{server_first},{without_proof}");
    let signature = hmac512(stored_key.as_ref(), auth_message.as_bytes());
    let proof: Vec<u8> = client_key
        .iter()
        .zip(&signature)
        .map(|(k, s)| k ^ s)
        .collect();
    let last: SaslAuthenticateResponse = call(
        stream,
        ApiKey::SaslAuthenticate,
        2,
        &token(format!("{without_proof},p={}", BASE64.encode(proof)).into_bytes()),
    )
    .await;
    let server_key = hmac512(&salted, b"Server Key");
    let expected = format!(
        "v={}",
        BASE64.encode(hmac512(&server_key, auth_message.as_bytes()))
    );
    (
        last.error_code,
        last.error_message.map(|m| m.to_string()),
        last.auth_bytes.as_ref() == expected.as_bytes(),
    )
}

fn metadata() -> MetadataRequest {
    let mut req = MetadataRequest::default();
    req.topics = None;
    req
}

#[tokio::test]
async fn tls_then_scram_sha_512_then_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs(dir.path());
    let broker = broker(
        dir.path(),
        Some(certs.files.clone()),
        Some(SaslMechanism::ScramSha512),
    )
    .await;
    let mut stream = tls_connect(broker.port(), client_config(&certs, false))
        .await
        .unwrap();
    let versions: ApiVersionsResponse = call(
        &mut stream,
        ApiKey::ApiVersions,
        3,
        &ApiVersionsRequest::default(),
    )
    .await;
    // From version 0, as Kafka: librdkafka will not authenticate unless
    // SaslHandshake v0 is advertised, even though it then sends v1.
    for key in [ApiKey::SaslHandshake, ApiKey::SaslAuthenticate] {
        assert!(
            versions
                .api_keys
                .iter()
                .any(|k| k.api_key == key as i16 && k.min_version == 0),
            "{key:?} advertised from v0"
        );
    }
    let (code, message, server_proven) = scram_sha_512(&mut stream, USER, PASSWORD).await;
    assert_eq!((code, message.unwrap_or_default()), (0, String::new()));
    assert!(server_proven, "the server's signature matches the password");
    let meta: MetadataResponse = call(&mut stream, ApiKey::Metadata, 9, &metadata()).await;
    assert_eq!(meta.brokers.len(), 1);
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn a_wrong_password_gets_sasl_authentication_failed_and_the_connection_closes() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path(), None, Some(SaslMechanism::ScramSha512)).await;
    for user in [USER, "nobody"] {
        let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
            .await
            .unwrap();
        let (code, message, _) = scram_sha_512(&mut stream, user, "guess").await;
        assert_eq!(code, 58, "SASL_AUTHENTICATION_FAILED for {user}");
        assert!(message.unwrap().contains("invalid credentials"));
        assert!(
            read_frame(&mut stream).await.is_none(),
            "closed after the failure"
        );
    }
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn a_request_before_authentication_closes_the_connection_unanswered() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path(), None, Some(SaslMechanism::ScramSha512)).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    send(&mut stream, ApiKey::Metadata, 9, &metadata()).await;
    assert!(read_frame(&mut stream).await.is_none());
    // After a handshake but before the exchange ends, likewise.
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    let hs: SaslHandshakeResponse = call(
        &mut stream,
        ApiKey::SaslHandshake,
        1,
        &handshake("SCRAM-SHA-512"),
    )
    .await;
    assert_eq!(hs.error_code, 0);
    send(&mut stream, ApiKey::Metadata, 9, &metadata()).await;
    assert!(read_frame(&mut stream).await.is_none());
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn an_unoffered_mechanism_is_refused_with_the_offered_list() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path(), None, Some(SaslMechanism::ScramSha256)).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    let hs: SaslHandshakeResponse =
        call(&mut stream, ApiKey::SaslHandshake, 1, &handshake("PLAIN")).await;
    assert_eq!(hs.error_code, 33);
    assert_eq!(hs.mechanisms, [StrBytes::from_static_str("SCRAM-SHA-256")]);
    assert!(read_frame(&mut stream).await.is_none());
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn plain_over_sasl_plaintext_authenticates() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path(), None, Some(SaslMechanism::Plain)).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    let hs: SaslHandshakeResponse =
        call(&mut stream, ApiKey::SaslHandshake, 1, &handshake("PLAIN")).await;
    assert_eq!(hs.error_code, 0);
    let auth: SaslAuthenticateResponse = call(
        &mut stream,
        ApiKey::SaslAuthenticate,
        1,
        &token(format!("\0{USER}\0{PASSWORD}").into_bytes()),
    )
    .await;
    assert_eq!(auth.error_code, 0);
    let meta: MetadataResponse = call(&mut stream, ApiKey::Metadata, 9, &metadata()).await;
    assert_eq!(meta.brokers.len(), 1);
    broker.stop().await.unwrap();
}

/// A SaslAuthenticate whose token length claims far more than the frame
/// holds is refused by the bounds check (the connection closes), before
/// anything is allocated for it; the broker serves the next connection.
#[tokio::test]
async fn hostile_sasl_authenticate_lengths_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path(), None, Some(SaslMechanism::ScramSha512)).await;
    let header = |version: i16| {
        let mut h = RequestHeader::default();
        h.request_api_key = ApiKey::SaslAuthenticate as i16;
        h.request_api_version = version;
        h.client_id = Some(StrBytes::from_static_str("x"));
        let mut body = BytesMut::new();
        h.encode(
            &mut body,
            ApiKey::SaslAuthenticate.request_header_version(version),
        )
        .unwrap();
        body
    };
    // v0/v1: an i32 length of 2 GiB; v2: a compact (varint) length of 2^32-1.
    let mut v1 = header(1);
    v1.put_i32(i32::MAX);
    v1.put_slice(b"abc");
    let mut v2 = header(2);
    v2.put_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f, b'a', 0]);
    for body in [v1, v2] {
        let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
            .await
            .unwrap();
        let hs: SaslHandshakeResponse = call(
            &mut stream,
            ApiKey::SaslHandshake,
            1,
            &handshake("SCRAM-SHA-512"),
        )
        .await;
        assert_eq!(hs.error_code, 0);
        send_raw(&mut stream, &body).await;
        assert!(read_frame(&mut stream).await.is_none());
    }
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    let (code, _, _) = scram_sha_512(&mut stream, USER, PASSWORD).await;
    assert_eq!(code, 0);
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn mutual_tls_requires_a_client_certificate_from_the_ca() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs(dir.path());
    let mut files = certs.files.clone();
    files.client_ca = Some(dir.path().join("ca.pem"));
    assert!(certs.ca_pem.contains("BEGIN CERTIFICATE"));
    let broker = broker(dir.path(), Some(files), None).await;
    let mut stream = tls_connect(broker.port(), client_config(&certs, true))
        .await
        .unwrap();
    let meta: MetadataResponse = call(&mut stream, ApiKey::Metadata, 9, &metadata()).await;
    assert_eq!(meta.brokers.len(), 1);
    // Without a certificate: TLS 1.3 refuses after the client's handshake,
    // so the first read fails or sees the connection closed.
    let refused = match tls_connect(broker.port(), client_config(&certs, false)).await {
        Err(_) => true,
        Ok(mut stream) => {
            send(&mut stream, ApiKey::Metadata, 9, &metadata()).await;
            read_frame(&mut stream).await.is_none()
        }
    };
    assert!(refused);
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn a_plaintext_listener_neither_advertises_nor_serves_sasl() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path(), None, None).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    let versions: ApiVersionsResponse = call(
        &mut stream,
        ApiKey::ApiVersions,
        3,
        &ApiVersionsRequest::default(),
    )
    .await;
    assert!(!versions
        .api_keys
        .iter()
        .any(|k| k.api_key == ApiKey::SaslHandshake as i16));
    // Not an API of this listener: refused like any unsupported one.
    send(&mut stream, ApiKey::SaslHandshake, 1, &handshake("PLAIN")).await;
    assert!(read_frame(&mut stream).await.is_none());
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn sasl_requests_after_authentication_are_illegal_sasl_state() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path(), None, Some(SaslMechanism::ScramSha512)).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port()))
        .await
        .unwrap();
    assert_eq!(scram_sha_512(&mut stream, USER, PASSWORD).await.0, 0);
    let hs: SaslHandshakeResponse = call(
        &mut stream,
        ApiKey::SaslHandshake,
        1,
        &handshake("SCRAM-SHA-512"),
    )
    .await;
    assert_eq!(hs.error_code, 34);
    let meta: MetadataResponse = call(&mut stream, ApiKey::Metadata, 9, &metadata()).await;
    assert_eq!(meta.brokers.len(), 1);
    broker.stop().await.unwrap();
}
