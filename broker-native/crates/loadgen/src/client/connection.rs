//! One TCP connection to a broker: size-prefixed frames, correlation ids, and pipelining.
//! Requests are written by the owning task; a reader task hands every response frame to a
//! channel shared by all of the owner's connections.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};

const CLIENT_ID: &str = "kbench-native";
/// The largest response frame accepted: well above a fetch's max bytes (64 MiB), as a broker may
/// exceed it by one batch.
const MAX_FRAME: usize = 256 << 20;
/// A frame claiming up to a fetch's max bytes is reserved whole when its size arrives (one
/// allocation for an honest broker's answers); a larger claim is grown into as its bytes arrive,
/// so a lying size prefix costs at most this much per connection.
const RESERVE_WHOLE_UP_TO: usize = 64 << 20;
/// How much more of a larger frame the reader reserves ahead of its bytes.
const RESERVE_AHEAD: usize = 1 << 20;

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
    writer: OwnedWriteHalf,
    next_correlation: i32,
    in_flight: usize,
    scratch: BytesMut,
    reader: JoinHandle<()>,
}

impl Connection {
    /// Connects and starts the reader task, which sends every response to `responses`.
    pub async fn connect(
        addr: &str,
        id: u64,
        responses: mpsc::UnboundedSender<Response>,
    ) -> Result<Connection> {
        let io = |source| Error::Io {
            addr: addr.to_string(),
            source,
        };
        let stream = TcpStream::connect(addr).await.map_err(io)?;
        stream.set_nodelay(true).map_err(io)?;
        let (read, writer) = stream.into_split();
        let reader = tokio::spawn(read_frames(read, id, addr.to_string(), responses));
        Ok(Connection {
            id,
            addr: addr.to_string(),
            writer,
            next_correlation: 0,
            in_flight: 0,
            scratch: BytesMut::with_capacity(64 * 1024),
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
        self.in_flight
    }

    /// Marks one response as received.
    pub fn completed(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// Encodes and writes a request; returns its correlation id and the bytes written.
    /// `expect_response` is false only for acks=0 produce requests, which get none.
    pub async fn send<R: Request>(
        &mut self,
        version: i16,
        request: &R,
        expect_response: bool,
    ) -> Result<(i32, usize)> {
        let correlation_id = self.next_correlation;
        self.next_correlation = self.next_correlation.wrapping_add(1);
        let header = RequestHeader::default()
            .with_request_api_key(R::KEY)
            .with_request_api_version(version)
            .with_correlation_id(correlation_id)
            .with_client_id(Some(StrBytes::from_static_str(CLIENT_ID)));
        self.scratch.clear();
        self.scratch.put_i32(0);
        header
            .encode(&mut self.scratch, R::header_version(version))
            .map_err(Error::protocol)?;
        request
            .encode(&mut self.scratch, version)
            .map_err(Error::protocol)?;
        let size = (self.scratch.len() - 4) as i32;
        self.scratch[..4].copy_from_slice(&size.to_be_bytes());
        self.writer
            .write_all(&self.scratch)
            .await
            .map_err(|source| Error::Io {
                addr: self.addr.clone(),
                source,
            })?;
        if expect_response {
            self.in_flight += 1;
        }
        Ok((correlation_id, self.scratch.len()))
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

async fn read_frames(
    mut read: OwnedReadHalf,
    id: u64,
    addr: String,
    responses: mpsc::UnboundedSender<Response>,
) {
    let mut buf = BytesMut::with_capacity(256 * 1024);
    loop {
        match read_frame(&mut read, &mut buf, &addr).await {
            Ok(frame) => {
                let correlation_id = i32::from_be_bytes(frame[..4].try_into().unwrap_or_default());
                let response = Response {
                    connection: id,
                    correlation_id,
                    frame: Ok(frame),
                };
                if responses.send(response).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = responses.send(Response {
                    connection: id,
                    correlation_id: -1,
                    frame: Err(e),
                });
                return;
            }
        }
    }
}

async fn read_frame(read: &mut OwnedReadHalf, buf: &mut BytesMut, addr: &str) -> Result<Bytes> {
    let io = |source| Error::Io {
        addr: addr.to_string(),
        source,
    };
    loop {
        if buf.len() >= 4 {
            let size = i32::from_be_bytes(buf[..4].try_into().unwrap_or_default());
            let size = usize::try_from(size)
                .ok()
                .filter(|&s| (4..=MAX_FRAME).contains(&s))
                .ok_or_else(|| Error::Protocol(format!("bad frame size {size} from {addr}")))?;
            if buf.len() >= 4 + size {
                buf.advance(4);
                return Ok(buf.split_to(size).freeze());
            }
            let missing = 4 + size - buf.len();
            if size <= RESERVE_WHOLE_UP_TO {
                buf.reserve(missing);
            } else {
                buf.reserve(missing.min(RESERVE_AHEAD));
            }
        } else {
            buf.reserve(64 * 1024);
        }
        if read.read_buf(buf).await.map_err(io)? == 0 {
            return Err(Error::Closed(addr.to_string()));
        }
    }
}

/// Decodes a response frame of request type `R` sent at `version`.
pub fn decode_response<R: Request>(frame: Bytes, version: i16) -> Result<R::Response> {
    match decode_checked::<R>(frame.clone(), version) {
        // A broker that does not support the ApiVersions version asked answers in v0, which
        // Java's client reads when the answer does not parse as asked: so do we (its error code
        // then says so, and the handshake asks again in v0).
        Err(e) if R::KEY == ApiKey::ApiVersions as i16 && version > 0 => {
            decode_checked::<R>(frame, 0).map_err(|_| e)
        }
        other => other,
    }
}

/// Decodes a response frame once its header and body have been walked against their wire
/// shapes: the decoder sizes allocations from counts on the wire, so a count the frame cannot
/// hold must be refused before it reads one.
fn decode_checked<R: Request>(mut frame: Bytes, version: i16) -> Result<R::Response> {
    kbench_wire::check_response(R::KEY, version, &frame)
        .map_err(|e| Error::Protocol(e.to_string()))?;
    let header_version = R::Response::header_version(version);
    kafka_protocol::messages::ResponseHeader::decode(&mut frame, header_version)
        .map_err(Error::protocol)?;
    R::Response::decode(&mut frame, version).map_err(Error::protocol)
}

/// One request at a time over a connection of its own: for metadata and setup calls.
#[derive(Debug)]
pub struct SimpleClient {
    connection: Connection,
    responses: mpsc::UnboundedReceiver<Response>,
}

impl SimpleClient {
    pub async fn connect(addr: &str) -> Result<SimpleClient> {
        let (tx, responses) = mpsc::unbounded_channel();
        let connection = Connection::connect(addr, 0, tx).await?;
        Ok(SimpleClient {
            connection,
            responses,
        })
    }

    pub fn addr(&self) -> &str {
        self.connection.addr()
    }

    pub async fn call<R: Request>(&mut self, version: i16, request: &R) -> Result<R::Response> {
        let (correlation_id, _) = self.connection.send(version, request, true).await?;
        loop {
            let response = self
                .responses
                .recv()
                .await
                .ok_or_else(|| Error::Closed(self.connection.addr().to_string()))?;
            let frame = response.frame?;
            if response.correlation_id == correlation_id {
                self.connection.completed();
                return decode_response::<R>(frame, version);
            }
        }
    }
}
