//! A growable byte buffer whose start is aligned to [`BLOCK`], as O_DIRECT
//! writes need, without unsafe code: a `Vec` with a block to spare, used
//! from its first aligned byte. It never moves while borrowed, and grows
//! by copying into a larger one.

/// The unit of O_DIRECT writes: alignment of memory, file offsets and
/// lengths (and of the journal's padding).
pub const BLOCK: usize = 4096;

#[derive(Debug)]
pub struct AlignedBuf {
    raw: Vec<u8>,
    /// Where the aligned part of `raw` starts.
    start: usize,
    len: usize,
}

impl AlignedBuf {
    pub fn with_capacity(capacity: usize) -> AlignedBuf {
        let raw = vec![0u8; capacity + BLOCK];
        let start = raw.as_ptr().align_offset(BLOCK);
        assert!(start < BLOCK, "a byte pointer can always be aligned");
        AlignedBuf { raw, start, len: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn capacity(&self) -> usize {
        self.raw.len() - self.start
    }

    /// Room for `more` bytes after the end, copying into a larger buffer
    /// when there is not.
    fn reserve(&mut self, more: usize) {
        let needed = self.len + more;
        if needed <= self.capacity() {
            return;
        }
        let mut grown = AlignedBuf::with_capacity(needed.max(self.capacity() * 2));
        grown.raw[grown.start..grown.start + self.len].copy_from_slice(self.as_slice());
        grown.len = self.len;
        *self = grown;
    }

    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.reserve(bytes.len());
        let at = self.start + self.len;
        self.raw[at..at + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// Appends `count` zero bytes.
    pub fn extend_zeros(&mut self, count: usize) {
        self.reserve(count);
        let at = self.start + self.len;
        self.raw[at..at + count].fill(0);
        self.len += count;
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }

    /// Empties the buffer, keeping its memory.
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_aligned_and_keeps_its_bytes_as_it_grows() {
        let mut buf = AlignedBuf::with_capacity(10);
        for i in 0..10_000u32 {
            buf.extend_from_slice(&i.to_be_bytes());
            assert_eq!(buf.as_slice().as_ptr() as usize % BLOCK, 0);
        }
        assert_eq!(buf.len(), 40_000);
        assert_eq!(&buf.as_slice()[39_996..], &9_999u32.to_be_bytes());
        buf.extend_zeros(3);
        assert_eq!(&buf.as_slice()[40_000..], &[0, 0, 0]);
        buf.clear();
        assert!(buf.is_empty());
        buf.extend_from_slice(b"again");
        assert_eq!(buf.as_slice(), b"again");
    }
}
