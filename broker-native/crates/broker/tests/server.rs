//! The server over real sockets: bad frames close only their connection.

use bytes::{BufMut, BytesMut};
use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use kbench_broker_core::{start, BrokerConfig, BrokerHandle};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn broker(dir: &std::path::Path) -> BrokerHandle {
    let mut config = BrokerConfig::new(dir);
    config.max_frame_bytes = 1024;
    start(config).await.unwrap()
}

fn api_versions_frame(version: i16, correlation_id: i32) -> BytesMut {
    let mut header = RequestHeader::default();
    header.request_api_key = ApiKey::ApiVersions as i16;
    header.request_api_version = version;
    header.correlation_id = correlation_id;
    header.client_id = Some(StrBytes::from_static_str("test"));
    let mut body = BytesMut::new();
    header
        .encode(&mut body, ApiKey::ApiVersions.request_header_version(version))
        .unwrap();
    let mut req = ApiVersionsRequest::default();
    req.client_software_name = StrBytes::from_static_str("test");
    req.client_software_version = StrBytes::from_static_str("1");
    req.encode(&mut body, version.min(3)).unwrap();
    let mut frame = BytesMut::new();
    frame.put_i32(body.len() as i32);
    frame.extend_from_slice(&body);
    frame
}

async fn read_response(stream: &mut TcpStream) -> BytesMut {
    let size = stream.read_i32().await.unwrap();
    let mut buf = BytesMut::zeroed(size as usize);
    stream.read_exact(&mut buf).await.unwrap();
    buf
}

/// Reads until EOF (or reset); true when the peer closed the connection.
async fn is_closed(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
        Ok(Ok(0)) | Ok(Err(_)) => true,
        Ok(Ok(_)) | Err(_) => false,
    }
}

async fn answers_api_versions(port: u16) -> ApiVersionsResponse {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(&api_versions_frame(3, 42)).await.unwrap();
    let mut response = read_response(&mut stream).await;
    let header = ResponseHeader::decode(&mut response, 0).unwrap();
    assert_eq!(header.correlation_id, 42);
    ApiVersionsResponse::decode(&mut response, 3).unwrap()
}

#[tokio::test]
async fn oversized_frame_closes_only_that_connection() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port())).await.unwrap();
    stream.write_all(&4096i32.to_be_bytes()).await.unwrap();
    assert!(is_closed(&mut stream).await);
    assert_eq!(answers_api_versions(broker.port()).await.error_code, 0);
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn garbage_frame_closes_only_that_connection() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port())).await.unwrap();
    stream
        .write_all(b"\x00\x00\x00\x0c\x7f\x7f\x00\x01garbage!")
        .await
        .unwrap();
    assert!(is_closed(&mut stream).await);
    let response = answers_api_versions(broker.port()).await;
    assert!(response.api_keys.iter().any(|k| k.api_key == ApiKey::Produce as i16));
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn unsupported_api_versions_version_gets_a_v0_error_response() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port())).await.unwrap();
    stream.write_all(&api_versions_frame(9, 7)).await.unwrap();
    let mut response = read_response(&mut stream).await;
    assert_eq!(ResponseHeader::decode(&mut response, 0).unwrap().correlation_id, 7);
    let body = ApiVersionsResponse::decode(&mut response, 0).unwrap();
    assert_eq!(body.error_code, 35);
    assert!(body.api_keys.iter().any(|k| k.api_key == ApiKey::ApiVersions as i16 && k.max_version >= 3));
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn requests_on_one_connection_are_answered_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port())).await.unwrap();
    let mut both = api_versions_frame(3, 1);
    both.extend_from_slice(&api_versions_frame(2, 2));
    stream.write_all(&both).await.unwrap();
    for expected in [1, 2] {
        let mut response = read_response(&mut stream).await;
        assert_eq!(ResponseHeader::decode(&mut response, 0).unwrap().correlation_id, expected);
    }
    broker.stop().await.unwrap();
}

#[tokio::test]
async fn stop_closes_open_connections_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", broker.port())).await.unwrap();
    stream.write_all(&api_versions_frame(3, 1)).await.unwrap();
    read_response(&mut stream).await;
    broker.stop().await.unwrap();
    broker.stop().await.unwrap();
    assert!(is_closed(&mut stream).await);
    assert!(TcpStream::connect(("127.0.0.1", broker.port())).await.is_err());
}
