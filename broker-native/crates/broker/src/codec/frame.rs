//! An encoded response frame, ready for the socket: either one buffer, or a
//! list of chunks written in order, so that large payloads (Fetch records)
//! can be referenced where they already are instead of copied into the frame.

use bytes::{Bytes, BytesMut};

/// A whole response frame: size prefix, header and body.
#[derive(Debug, Clone)]
pub enum Frame {
    /// The frame in one contiguous buffer.
    Whole(Bytes),
    /// The frame as consecutive chunks; their concatenation is the frame.
    Chunks(Vec<Bytes>),
}

impl Frame {
    /// Total bytes on the wire, size prefix included.
    pub fn len(&self) -> usize {
        self.chunks().iter().map(Bytes::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frame's pieces, in order.
    pub fn chunks(&self) -> &[Bytes] {
        match self {
            Frame::Whole(bytes) => std::slice::from_ref(bytes),
            Frame::Chunks(chunks) => chunks,
        }
    }

    /// The frame copied into one buffer: for tests and diagnostics, never the
    /// send path.
    pub fn to_contiguous(&self) -> BytesMut {
        let mut out = BytesMut::with_capacity(self.len());
        for chunk in self.chunks() {
            out.extend_from_slice(chunk);
        }
        out
    }
}

impl From<BytesMut> for Frame {
    fn from(buf: BytesMut) -> Self {
        Frame::Whole(buf.freeze())
    }
}

impl From<Bytes> for Frame {
    fn from(buf: Bytes) -> Self {
        Frame::Whole(buf)
    }
}

/// Builds a frame in one pass: everything is encoded into a single header
/// buffer, except the payloads handed to [`FrameBuilder::splice`], which are
/// only referenced. The size prefix is patched in at the end, and the header
/// buffer is then cut (without copying) around the spliced payloads.
pub(crate) struct FrameBuilder {
    buf: BytesMut,
    /// Payloads to send after `buf[..offset]` up to the previous splice point.
    spliced: Vec<(usize, Bytes)>,
    spliced_len: usize,
}

impl FrameBuilder {
    /// Payloads up to this size are copied into the header buffer: cheaper
    /// than an extra chunk (and iovec) for a tiny batch.
    pub(crate) const INLINE_MAX: usize = 512;

    /// A builder whose buffer starts with a placeholder for the size prefix.
    pub(crate) fn new(capacity: usize) -> Self {
        let mut buf = BytesMut::with_capacity(capacity.max(4));
        buf.extend_from_slice(&[0; 4]);
        FrameBuilder {
            buf,
            spliced: Vec::new(),
            spliced_len: 0,
        }
    }

    /// The header buffer, to encode into.
    pub(crate) fn buf(&mut self) -> &mut BytesMut {
        &mut self.buf
    }

    /// Appends `payload` to the frame, by reference unless it is tiny.
    pub(crate) fn splice(&mut self, payload: &Bytes) {
        if payload.len() <= Self::INLINE_MAX {
            self.buf.extend_from_slice(payload);
        } else {
            self.spliced.push((self.buf.len(), payload.clone()));
            self.spliced_len += payload.len();
        }
    }

    /// Fills in the size prefix and returns the frame; fails if the frame
    /// does not fit the protocol's i32 size.
    pub(crate) fn finish(mut self) -> Result<Frame, usize> {
        let size = self.buf.len() - 4 + self.spliced_len;
        let Ok(prefix) = i32::try_from(size) else {
            return Err(size);
        };
        self.buf[..4].copy_from_slice(&prefix.to_be_bytes());
        let header = self.buf.freeze();
        if self.spliced.is_empty() {
            return Ok(Frame::Whole(header));
        }
        let mut chunks = Vec::with_capacity(2 * self.spliced.len() + 1);
        let mut start = 0;
        for (offset, payload) in self.spliced {
            if offset > start {
                chunks.push(header.slice(start..offset));
            }
            chunks.push(payload);
            start = offset;
        }
        if start < header.len() {
            chunks.push(header.slice(start..));
        }
        Ok(Frame::Chunks(chunks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_cuts_the_header_around_spliced_payloads() {
        let big = Bytes::from(vec![7u8; FrameBuilder::INLINE_MAX + 1]);
        let small = Bytes::from_static(b"tiny");
        let mut b = FrameBuilder::new(16);
        b.buf().extend_from_slice(b"ab");
        b.splice(&big);
        b.splice(&big);
        b.buf().extend_from_slice(b"c");
        b.splice(&small);
        b.buf().extend_from_slice(b"d");
        let frame = b.finish().unwrap();
        let chunks = frame.chunks();
        assert_eq!(chunks.len(), 4);
        assert_eq!(&chunks[0][..], b"\x00\x00\x04\x0aab");
        assert_eq!(chunks[1].as_ptr(), big.as_ptr());
        assert_eq!(chunks[2].as_ptr(), big.as_ptr());
        assert_eq!(&chunks[3][..], b"ctinyd");
        assert_eq!(frame.len(), 4 + 2 + 2 * big.len() + 6);
        assert_eq!(
            i32::from_be_bytes(frame.to_contiguous()[..4].try_into().unwrap()) as usize,
            frame.len() - 4
        );
    }

    #[test]
    fn builder_without_splices_is_one_buffer() {
        let mut b = FrameBuilder::new(0);
        b.buf().extend_from_slice(b"xyz");
        let frame = b.finish().unwrap();
        assert!(matches!(frame, Frame::Whole(_)));
        assert_eq!(&frame.to_contiguous()[..], b"\x00\x00\x00\x03xyz");
    }
}
