//! Frames without sockets' state: a request encoded into a reused buffer, a response frame read
//! with bounded reservations, and a response decoded once kbench-wire has walked it.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::error::{Error, Result};

/// The largest response frame accepted: well above a fetch's max bytes (64 MiB), as a broker may
/// exceed it by one batch.
const MAX_FRAME: usize = 256 << 20;
/// A frame claiming up to a fetch's max bytes is reserved whole when its size arrives (one
/// allocation for an honest broker's answers); a larger claim is grown into as its bytes arrive,
/// so a lying size prefix costs at most this much per connection.
const RESERVE_WHOLE_UP_TO: usize = 64 << 20;
/// How much more of a larger frame the reader reserves ahead of its bytes.
const RESERVE_AHEAD: usize = 1 << 20;
/// What a read asks for when no frame size is known yet.
const READ_CHUNK: usize = 64 * 1024;

/// Encodes requests, one at a time, into one buffer kept for the connection's life, with a
/// header built once (only its key, version and correlation id change).
#[derive(Debug)]
pub(crate) struct Encoder {
    header: RequestHeader,
    next_correlation: i32,
    frame: BytesMut,
}

impl Encoder {
    pub(crate) fn new(client_id: StrBytes) -> Encoder {
        Encoder {
            header: RequestHeader::default().with_client_id(Some(client_id)),
            next_correlation: 0,
            frame: BytesMut::with_capacity(64 * 1024),
        }
    }

    /// Encodes `request` as a size-prefixed frame; returns its correlation id. The frame is
    /// [`Encoder::frame`] until the next call.
    pub(crate) fn encode<R: Request>(&mut self, version: i16, request: &R) -> Result<i32> {
        let correlation_id = self.next_correlation;
        self.next_correlation = self.next_correlation.wrapping_add(1);
        self.header.request_api_key = R::KEY;
        self.header.request_api_version = version;
        self.header.correlation_id = correlation_id;
        self.frame.clear();
        self.frame.put_i32(0);
        self.header
            .encode(&mut self.frame, R::header_version(version))
            .map_err(Error::protocol)?;
        request
            .encode(&mut self.frame, version)
            .map_err(Error::protocol)?;
        let size = (self.frame.len() - 4) as i32;
        self.frame[..4].copy_from_slice(&size.to_be_bytes());
        Ok(correlation_id)
    }

    pub(crate) fn frame(&self) -> &[u8] {
        &self.frame
    }
}

/// The correlation id a response frame (header included, size prefix not) starts with.
pub(crate) fn correlation_id(frame: &[u8]) -> i32 {
    i32::from_be_bytes(frame[..4].try_into().unwrap_or_default())
}

/// Reads the next response frame (without its size prefix) into `buf`'s bytes; `buf` keeps what
/// was read beyond it for the next call.
pub(crate) async fn read_frame<R: AsyncRead + Unpin>(
    read: &mut R,
    buf: &mut BytesMut,
    addr: &str,
) -> Result<Bytes> {
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
            buf.reserve(READ_CHUNK);
        }
        if read.read_buf(buf).await.map_err(Error::io(addr))? == 0 {
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
    kbench_wire::check_response(R::KEY, version, &frame).map_err(Error::protocol)?;
    let header_version = R::Response::header_version(version);
    ResponseHeader::decode(&mut frame, header_version).map_err(Error::protocol)?;
    R::Response::decode(&mut frame, version).map_err(Error::protocol)
}
