//! One request at a time over a connection of its own, read in the caller's task (no reader
//! task, no channel): for metadata and group calls, and a follower's fetches.

use bytes::BytesMut;
use kafka_protocol::protocol::Request;
use tokio::io::AsyncWriteExt;

use crate::error::{Error, Result};
use crate::frame::{correlation_id, decode_response, read_frame, Encoder};
use crate::transport::{self, ConnectOptions, Transport};

#[derive(Debug)]
pub struct SimpleClient {
    addr: String,
    transport: Transport,
    encoder: Encoder,
    read_buf: BytesMut,
}

impl SimpleClient {
    pub async fn connect(addr: &str, options: &ConnectOptions) -> Result<SimpleClient> {
        let transport = transport::open(addr, options).await?;
        Ok(SimpleClient {
            addr: addr.to_string(),
            transport,
            encoder: Encoder::new(options.client_id.clone()),
            read_buf: BytesMut::with_capacity(64 * 1024),
        })
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Sends `request` and waits for its answer; any other frame is a protocol error. Not
    /// cancel-safe: a call given up (a timeout) leaves the client unusable.
    pub async fn call<R: Request>(&mut self, version: i16, request: &R) -> Result<R::Response> {
        let asked = self.encoder.encode(version, request)?;
        self.transport
            .write_all(self.encoder.frame())
            .await
            .map_err(Error::io(&self.addr))?;
        let frame = read_frame(&mut self.transport, &mut self.read_buf, &self.addr).await?;
        let answered = correlation_id(&frame);
        if answered != asked {
            return Err(Error::Protocol(format!(
                "unsolicited correlation id {answered} from {} (awaiting {asked})",
                self.addr
            )));
        }
        decode_response::<R>(frame, version)
    }
}
