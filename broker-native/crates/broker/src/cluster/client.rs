//! A minimal Kafka client connection for node-to-node requests (follower
//! fetches): one request in flight, frames encoded with kafka-protocol.

use crate::error::{Error, Result};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub struct Connection {
    stream: TcpStream,
    correlation_id: i32,
    client_id: StrBytes,
}

impl Connection {
    pub async fn connect(host: &str, port: u16, client_id: String) -> Result<Connection> {
        let stream = tokio::time::timeout(Duration::from_secs(2), TcpStream::connect((host, port)))
            .await
            .map_err(|_| Error::Io(std::io::ErrorKind::TimedOut.into()))??;
        let _ = stream.set_nodelay(true);
        Ok(Connection {
            stream,
            correlation_id: 0,
            client_id: StrBytes::from_string(client_id),
        })
    }

    /// Sends one request and waits for its response.
    pub async fn call<Req: Encodable, Resp: Decodable>(
        &mut self,
        api_key: ApiKey,
        version: i16,
        request: &Req,
    ) -> Result<Resp> {
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let mut header = RequestHeader::default();
        header.request_api_key = api_key as i16;
        header.request_api_version = version;
        header.correlation_id = self.correlation_id;
        header.client_id = Some(self.client_id.clone());
        let header_version = api_key.request_header_version(version);
        let mut frame = BytesMut::new();
        frame.put_i32(0);
        header
            .encode(&mut frame, header_version)
            .and_then(|_| request.encode(&mut frame, version))
            .map_err(|e| Error::Malformed(format!("encoding {api_key:?}: {e}")))?;
        let size = (frame.len() - 4) as i32;
        frame[..4].copy_from_slice(&size.to_be_bytes());
        self.stream.write_all(&frame).await?;

        let size = self.stream.read_i32().await?;
        if size < 0 {
            return Err(Error::Malformed(format!("negative response size {size}")));
        }
        let mut body = vec![0u8; size as usize];
        self.stream.read_exact(&mut body).await?;
        let mut body = Bytes::from(body);
        let header = ResponseHeader::decode(&mut body, api_key.response_header_version(version))
            .map_err(|e| Error::Malformed(format!("response header: {e}")))?;
        if header.correlation_id != self.correlation_id {
            return Err(Error::Malformed(format!(
                "correlation id {} for request {}",
                header.correlation_id, self.correlation_id
            )));
        }
        let response = Resp::decode(&mut body, version)
            .map_err(|e| Error::Malformed(format!("decoding {api_key:?} response: {e}")))?;
        if body.has_remaining() {
            return Err(Error::Malformed(format!(
                "{} trailing bytes in a {api_key:?} response",
                body.remaining()
            )));
        }
        Ok(response)
    }
}
