//! One request at a time over a connection of its own, read in the caller's task (no reader
//! task, no channel): for metadata and group calls, and a follower's fetches.
//!
//! A call given up while it waited for its answer (a select or timeout dropped it) leaves that
//! answer on its way; the next call drops it when it arrives, as a pipelined owner would.

use std::collections::VecDeque;

use bytes::BytesMut;
use kafka_protocol::protocol::Request;
use tokio::io::AsyncWriteExt;

use crate::error::{Error, Result};
use crate::frame::{correlation_id, decode_response, read_frame, Encoder};
use crate::transport::{self, ConnectOptions, ReadHalf, WriteHalf};

/// Calls given up before their answer came that a client still waits out.
const MAX_GIVEN_UP: usize = 8;

#[derive(Debug)]
pub struct SimpleClient {
    addr: String,
    read: ReadHalf,
    write: WriteHalf,
    encoder: Encoder,
    read_buf: BytesMut,
    /// Requests whose answer has not been read, oldest first: calls given up, then the current.
    unanswered: VecDeque<i32>,
}

impl SimpleClient {
    pub async fn connect(addr: &str, options: &ConnectOptions) -> Result<SimpleClient> {
        let (read, write) = transport::open(addr, options).await?;
        Ok(SimpleClient {
            addr: addr.to_string(),
            read,
            write,
            encoder: Encoder::new(options.client_id.clone()),
            read_buf: BytesMut::with_capacity(64 * 1024),
            unanswered: VecDeque::with_capacity(1),
        })
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Sends `request` and waits for its answer; any other frame (but the answer to a call
    /// given up) is a protocol error. A call given up while it wrote leaves the stream broken,
    /// as with any Kafka client.
    pub async fn call<R: Request>(&mut self, version: i16, request: &R) -> Result<R::Response> {
        if self.unanswered.len() >= MAX_GIVEN_UP {
            return Err(Error::Protocol(format!(
                "{} calls to {} given up unanswered",
                self.unanswered.len(),
                self.addr
            )));
        }
        let asked = self.encoder.encode(version, request)?;
        self.unanswered.push_back(asked);
        self.write
            .write_all(self.encoder.frame())
            .await
            .map_err(Error::io(&self.addr))?;
        // TLS may keep the frame's last record back until flushed (plain TCP: a no-op).
        self.write.flush().await.map_err(Error::io(&self.addr))?;
        loop {
            let frame = read_frame(&mut self.read, &mut self.read_buf, &self.addr).await?;
            let answered = correlation_id(&frame);
            if self.unanswered.front() != Some(&answered) {
                return Err(Error::Protocol(format!(
                    "unsolicited correlation id {answered} from {} (awaiting {asked})",
                    self.addr
                )));
            }
            self.unanswered.pop_front();
            if answered == asked {
                return decode_response::<R>(frame, version);
            }
        }
    }
}
