//! One pipelined connection to a broker: the owner writes requests in order; a reader task hands
//! every response frame to a stream the owner's connections share, tagged with the connection's
//! id. Kafka answers a connection's requests in order, so the owner matches each answer to the
//! oldest request awaiting one ([`Connection::complete`]).
//!
//! Bounded: at most `window` requests await an answer. The reader counts the answers it has read
//! against the requests the owner has written (one atomic the owner stores before each write),
//! and a frame beyond them is a protocol error that ends the connection: whatever a broker sends,
//! the shared stream holds at most the window's answers of each connection.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use kafka_protocol::protocol::Request;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::frame::{correlation_id, read_frame, Encoder};
use crate::transport::{self, ConnectOptions, ReadHalf, WriteHalf};

/// A response frame (header included) from connection `connection`, or the reason it died.
#[derive(Debug)]
pub struct Response {
    pub connection: u64,
    pub correlation_id: i32,
    pub frame: Result<Bytes>,
}

#[derive(Debug)]
pub struct Connection {
    id: u64,
    addr: String,
    writer: WriteHalf,
    encoder: Encoder,
    /// Correlation ids awaiting an answer, oldest first.
    awaiting: VecDeque<i32>,
    window: usize,
    /// Requests written that expect an answer, in all; the reader's bound.
    asked: u64,
    asked_shared: Arc<AtomicU64>,
    reader: JoinHandle<()>,
}

impl Connection {
    /// Connects and starts the reader task, which sends every response to `responses`.
    pub async fn connect(
        addr: &str,
        id: u64,
        options: &ConnectOptions,
        responses: mpsc::UnboundedSender<Response>,
    ) -> Result<Connection> {
        let (read, writer) = transport::open(addr, options).await?;
        let asked_shared = Arc::new(AtomicU64::new(0));
        let reader = tokio::spawn(read_frames(
            read,
            id,
            addr.to_string(),
            asked_shared.clone(),
            responses,
        ));
        Ok(Connection {
            id,
            addr: addr.to_string(),
            writer,
            encoder: Encoder::new(options.client_id.clone()),
            awaiting: VecDeque::with_capacity(options.window),
            window: options.window.max(1),
            asked: 0,
            asked_shared,
            reader,
        })
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Requests sent that still await a response.
    pub fn in_flight(&self) -> usize {
        self.awaiting.len()
    }

    /// Whether one more request expecting an answer fits in the window.
    pub fn has_room(&self) -> bool {
        self.awaiting.len() < self.window
    }

    /// Encodes and writes a request; returns its correlation id and the bytes written.
    /// `expect_response` is false only for acks=0 produce requests, which get none.
    pub async fn send<R: Request>(
        &mut self,
        version: i16,
        request: &R,
        expect_response: bool,
    ) -> Result<(i32, usize)> {
        if expect_response && !self.has_room() {
            return Err(Error::WindowFull {
                addr: self.addr.clone(),
                window: self.window,
            });
        }
        let correlation_id = self.encoder.encode(version, request)?;
        if expect_response {
            // Counted before the write, so the answer can never arrive before it is expected.
            self.asked += 1;
            self.asked_shared.store(self.asked, Ordering::Release);
            self.awaiting.push_back(correlation_id);
        }
        let frame = self.encoder.frame();
        self.writer
            .write_all(frame)
            .await
            .map_err(Error::io(&self.addr))?;
        // TLS may keep the frame's last record back until flushed (plain TCP: a no-op).
        self.writer.flush().await.map_err(Error::io(&self.addr))?;
        Ok((correlation_id, frame.len()))
    }

    /// Takes an answer off the window: it must answer the oldest request awaiting one.
    pub fn complete(&mut self, correlation_id: i32) -> Result<()> {
        match self.awaiting.front() {
            Some(&oldest) if oldest == correlation_id => {
                self.awaiting.pop_front();
                Ok(())
            }
            oldest => Err(Error::Protocol(format!(
                "unsolicited correlation id {correlation_id} from {} (awaiting {oldest:?})",
                self.addr
            ))),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

async fn read_frames(
    mut read: ReadHalf,
    id: u64,
    addr: String,
    asked: Arc<AtomicU64>,
    responses: mpsc::UnboundedSender<Response>,
) {
    let mut buf = BytesMut::with_capacity(256 * 1024);
    let mut answered = 0u64;
    loop {
        let frame = read_frame(&mut read, &mut buf, &addr)
            .await
            .and_then(|frame| {
                answered += 1;
                if answered > asked.load(Ordering::Acquire) {
                    return Err(Error::Protocol(format!(
                        "unsolicited response (correlation id {}) from {addr}",
                        correlation_id(&frame)
                    )));
                }
                Ok(frame)
            });
        let (correlation_id, failed) = match &frame {
            Ok(frame) => (correlation_id(frame), false),
            Err(_) => (-1, true),
        };
        let response = Response {
            connection: id,
            correlation_id,
            frame,
        };
        if responses.send(response).is_err() || failed {
            return;
        }
    }
}
