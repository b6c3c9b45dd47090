//! Record batch v2 encoder. Records are written straight into one reusable buffer behind a
//! reserved 61-byte header; `finish` fills the header (CRC-32C last) and compresses if asked.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::compression::{Compressor, Gzip, Lz4, Snappy, Zstd};

use crate::error::{Error, Result};

pub const HEADER_BYTES: usize = 61;
const LENGTH_OFFSET: usize = 8;
const CRC_OFFSET: usize = 17;
const ATTRIBUTES_OFFSET: usize = 21;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

impl Compression {
    /// The attribute bits 0-2 of a record batch.
    pub fn attribute(self) -> i16 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }
}

impl std::str::FromStr for Compression {
    type Err = Error;
    fn from_str(s: &str) -> Result<Compression> {
        Ok(match s {
            "none" | "" => Compression::None,
            "gzip" => Compression::Gzip,
            "snappy" => Compression::Snappy,
            "lz4" => Compression::Lz4,
            "zstd" => Compression::Zstd,
            other => return Err(Error::Config(format!("unknown compression {other:?}"))),
        })
    }
}

/// Idempotent-producer fields of a batch header; `NONE` for plain producers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerFields {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
}

impl ProducerFields {
    pub const NONE: ProducerFields = ProducerFields {
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
    };
}

/// One open batch for one partition.
#[derive(Debug)]
pub struct BatchBuilder {
    buf: BytesMut,
    compression: Compression,
    records: i32,
    base_timestamp: i64,
    max_timestamp: i64,
}

impl BatchBuilder {
    pub fn new(compression: Compression, capacity: usize) -> BatchBuilder {
        let mut buf = BytesMut::with_capacity(capacity.max(HEADER_BYTES) + 64);
        buf.put_bytes(0, HEADER_BYTES);
        BatchBuilder {
            buf,
            compression,
            records: 0,
            base_timestamp: 0,
            max_timestamp: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    pub fn records(&self) -> i32 {
        self.records
    }

    /// Uncompressed size so far, header included.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Encoded size of a record with this key and value length.
    #[inline]
    pub fn record_size(
        &self,
        timestamp_ms: i64,
        key_len: Option<usize>,
        value_len: usize,
    ) -> usize {
        let body = self.body_size(timestamp_ms, key_len, value_len);
        varint_size(body as i64) + body
    }

    #[inline]
    fn body_size(&self, timestamp_ms: i64, key_len: Option<usize>, value_len: usize) -> usize {
        let timestamp_delta = if self.records == 0 {
            0
        } else {
            timestamp_ms - self.base_timestamp
        };
        let key = match key_len {
            Some(n) => varint_size(n as i64) + n,
            None => 1,
        };
        1 + varint_size(timestamp_delta)
            + varint_size(i64::from(self.records))
            + key
            + varint_size(value_len as i64)
            + value_len
            + 1
    }

    /// Appends a record whose value is `value` with its first 8 bytes replaced by `stamp`
    /// (when the value is long enough to carry it). No allocation once the buffer has grown.
    #[inline]
    pub fn append(&mut self, timestamp_ms: i64, key: Option<&[u8]>, value: &[u8], stamp: f64) {
        self.append_marked(timestamp_ms, key, value, stamp, None);
    }

    /// Like `append`, with the value's next 16 bytes replaced by `mark` too (the record check's
    /// producer and sequence, see `verify`) when given and the value is long enough to carry both.
    #[inline]
    pub fn append_marked(
        &mut self,
        timestamp_ms: i64,
        key: Option<&[u8]>,
        value: &[u8],
        stamp: f64,
        mark: Option<&[u8; crate::verify::MARK_BYTES]>,
    ) {
        if self.records == 0 {
            self.base_timestamp = timestamp_ms;
            self.max_timestamp = timestamp_ms;
        }
        let body = self.body_size(timestamp_ms, key.map(<[u8]>::len), value.len());
        self.buf.reserve(body + 5);
        put_varint(&mut self.buf, body as i64);
        self.buf.put_u8(0); // attributes
        put_varint(&mut self.buf, timestamp_ms - self.base_timestamp);
        put_varint(&mut self.buf, i64::from(self.records));
        match key {
            Some(key) => {
                put_varint(&mut self.buf, key.len() as i64);
                self.buf.put_slice(key);
            }
            None => put_varint(&mut self.buf, -1),
        }
        put_varint(&mut self.buf, value.len() as i64);
        if let Some(mark) = mark.filter(|_| value.len() >= crate::verify::MARKED_VALUE_BYTES) {
            self.buf.put_slice(&stamp.to_le_bytes());
            self.buf.put_slice(mark);
            self.buf
                .put_slice(&value[crate::verify::MARKED_VALUE_BYTES..]);
        } else if value.len() >= crate::payload::STAMP_BYTES {
            self.buf.put_slice(&stamp.to_le_bytes());
            self.buf.put_slice(&value[crate::payload::STAMP_BYTES..]);
        } else {
            self.buf.put_slice(value);
        }
        self.buf.put_u8(0); // no headers
        self.records += 1;
        self.max_timestamp = self.max_timestamp.max(timestamp_ms);
    }

    /// Closes the batch and returns its bytes; the builder is empty again and reuses its buffer
    /// once the returned bytes are dropped.
    pub fn finish(&mut self, producer: ProducerFields) -> Result<Bytes> {
        let mut header = [0u8; HEADER_BYTES];
        {
            let mut h = &mut header[..];
            h.put_i64(0); // base offset, set by the broker
            h.put_i32(0); // length, below
            h.put_i32(-1); // partition leader epoch
            h.put_i8(2); // magic
            h.put_u32(0); // crc, below
            h.put_i16(self.compression.attribute());
            h.put_i32(self.records - 1);
            h.put_i64(self.base_timestamp);
            h.put_i64(self.max_timestamp);
            h.put_i64(producer.producer_id);
            h.put_i16(producer.producer_epoch);
            h.put_i32(producer.base_sequence);
            h.put_i32(self.records);
        }
        let mut batch = if self.compression == Compression::None {
            self.buf[..HEADER_BYTES].copy_from_slice(&header);
            self.buf.split()
        } else {
            let records = self.buf.split_off(HEADER_BYTES);
            let mut out = BytesMut::with_capacity(records.len() / 2 + HEADER_BYTES + 64);
            out.put_slice(&header);
            compress(self.compression, records, &mut out)?;
            self.buf.clear();
            out
        };
        let length = (batch.len() - LENGTH_OFFSET - 4) as i32;
        batch[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&length.to_be_bytes());
        let crc = crc32c::crc32c(&batch[ATTRIBUTES_OFFSET..]);
        batch[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        self.records = 0;
        self.buf.put_bytes(0, HEADER_BYTES);
        Ok(batch.freeze())
    }
}

fn compress(compression: Compression, records: BytesMut, out: &mut BytesMut) -> Result<()> {
    // The codecs hand us an empty scratch buffer to fill; swapping ours in avoids a copy.
    let fill = |scratch: &mut BytesMut| {
        *scratch = records;
        Ok(())
    };
    match compression {
        Compression::None => unreachable!("uncompressed batches are not compressed"),
        Compression::Gzip => Gzip::compress(out, fill),
        Compression::Snappy => Snappy::compress(out, fill),
        Compression::Lz4 => Lz4::compress(out, fill),
        Compression::Zstd => Zstd::compress(out, fill),
    }
    .map_err(|e| Error::Protocol(format!("compressing a batch: {e}")))
}

#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub fn varint_size(v: i64) -> usize {
    let z = zigzag(v) | 1;
    ((70 - z.leading_zeros()) / 7) as usize
}

#[inline]
fn put_varint(buf: &mut BytesMut, v: i64) {
    let mut z = zigzag(v);
    while z >= 0x80 {
        buf.put_u8((z as u8) | 0x80);
        z >>= 7;
    }
    buf.put_u8(z as u8);
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::records::RecordBatchDecoder;

    fn encode(compression: Compression, producer: ProducerFields) -> Bytes {
        let mut builder = BatchBuilder::new(compression, 4096);
        for i in 0..50u8 {
            let value = vec![i; 20 + i as usize];
            let key = [b'k', i];
            let key = (i % 2 == 0).then_some(&key[..]);
            builder.append(
                1_700_000_000_000 + i64::from(i),
                key,
                &value,
                f64::from(i) * 1.5,
            );
        }
        builder.finish(producer).unwrap()
    }

    fn decodes_what_it_encodes(compression: Compression) {
        let producer = ProducerFields {
            producer_id: 42,
            producer_epoch: 3,
            base_sequence: 100,
        };
        let mut bytes = encode(compression, producer);
        let set = RecordBatchDecoder::decode(&mut bytes).unwrap();
        assert_eq!(set.records.len(), 50);
        for (i, record) in set.records.iter().enumerate() {
            let value = record.value.as_ref().unwrap();
            assert_eq!(value.len(), 20 + i);
            assert_eq!(&value[..8], &(i as f64 * 1.5).to_le_bytes());
            assert!(value[8..].iter().all(|&b| b == i as u8));
            assert_eq!(record.offset, i as i64);
            assert_eq!(record.timestamp, 1_700_000_000_000 + i as i64);
            assert_eq!(record.key.is_some(), i % 2 == 0);
            assert_eq!(record.producer_id, 42);
            assert_eq!(record.sequence, 100 + i as i32);
        }
    }

    #[test]
    fn uncompressed_batch_decodes() {
        decodes_what_it_encodes(Compression::None);
    }

    #[test]
    fn gzip_batch_decodes() {
        decodes_what_it_encodes(Compression::Gzip);
    }

    #[test]
    fn snappy_batch_decodes() {
        decodes_what_it_encodes(Compression::Snappy);
    }

    #[test]
    fn lz4_batch_decodes() {
        decodes_what_it_encodes(Compression::Lz4);
    }

    #[test]
    fn zstd_batch_decodes() {
        decodes_what_it_encodes(Compression::Zstd);
    }

    #[test]
    fn builder_is_reusable_after_finish() {
        let mut builder = BatchBuilder::new(Compression::None, 1024);
        builder.append(1, None, &[1; 10], 0.0);
        let first = builder.finish(ProducerFields::NONE).unwrap();
        assert!(builder.is_empty());
        builder.append(2, None, &[2; 10], 0.0);
        builder.append(3, None, &[3; 10], 0.0);
        let mut second = builder.finish(ProducerFields::NONE).unwrap();
        assert_eq!(
            RecordBatchDecoder::decode(&mut second)
                .unwrap()
                .records
                .len(),
            2
        );
        drop(first);
    }

    #[test]
    fn record_size_matches_what_append_writes() {
        let mut builder = BatchBuilder::new(Compression::None, 1024);
        for value_len in [0usize, 7, 100, 300] {
            let before = builder.len();
            let expected = builder.record_size(5, Some(3), value_len);
            builder.append(5, Some(b"abc"), &vec![0; value_len], 0.0);
            assert_eq!(builder.len() - before, expected);
        }
    }

    #[test]
    fn varint_sizes() {
        assert_eq!(varint_size(0), 1);
        assert_eq!(varint_size(-1), 1);
        assert_eq!(varint_size(63), 1);
        assert_eq!(varint_size(64), 2);
        assert_eq!(varint_size(i64::MAX), 10);
    }
}
