//! Reads fetched record batches without copying values: batch headers for offsets, then each
//! record's value length and first 8 bytes (decompressing compressed batches first).

use bytes::Bytes;
use kafka_protocol::compression::{Decompressor, Gzip, Lz4, Snappy, Zstd};

use crate::batch::HEADER_BYTES;
use crate::error::{Error, Result};

/// One record as the consumer sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordView {
    pub offset: i64,
    pub value_len: usize,
    /// The value's first 8 bytes as the send-time stamp, when it has 8 bytes.
    pub stamp: Option<f64>,
}

/// A complete batch at the front of `buf`: (base offset, last offset, whole batch length).
fn batch_bounds(buf: &[u8]) -> Option<(i64, i64, usize)> {
    if buf.len() < HEADER_BYTES {
        return None;
    }
    let base = i64::from_be_bytes(buf[0..8].try_into().ok()?);
    let length = i32::from_be_bytes(buf[8..12].try_into().ok()?);
    let total = 12 + usize::try_from(length).ok()?;
    if buf.len() < total {
        return None; // a partial batch at the end of a fetch response
    }
    let last_delta = i32::from_be_bytes(buf[23..27].try_into().ok()?);
    Some((base, base + i64::from(last_delta), total))
}

/// The offset to fetch next after `records`, or `current` if it holds no complete batch.
pub fn next_offset(records: &[u8], current: i64) -> i64 {
    let mut next = current;
    let mut rest = records;
    while let Some((_, last, total)) = batch_bounds(rest) {
        next = next.max(last + 1);
        rest = &rest[total..];
    }
    next
}

/// Calls `f` for each data record at or after `from` in the complete batches of `records`.
pub fn for_each_record(records: &Bytes, from: i64, mut f: impl FnMut(RecordView)) -> Result<()> {
    let mut pos = 0;
    while let Some((base, last, total)) = batch_bounds(&records[pos..]) {
        let batch = records.slice(pos..pos + total);
        pos += total;
        if last < from || batch[16] != 2 {
            continue;
        }
        let attributes = i16::from_be_bytes([batch[21], batch[22]]);
        if attributes & 0x20 != 0 {
            continue; // control batch (transaction markers)
        }
        let count = i32::from_be_bytes(batch[57..61].try_into().unwrap_or_default());
        let mut body = batch.slice(HEADER_BYTES..);
        let mut visit = |b: &[u8]| read_records(b, base, count, from, &mut f);
        match attributes & 0x7 {
            0 => visit(&body)?,
            codec => decompress(codec, &mut body, |b| visit(b))?,
        }
    }
    Ok(())
}

fn decompress(codec: i16, body: &mut Bytes, f: impl FnOnce(&[u8]) -> Result<()>) -> Result<()> {
    let mut result = Ok(());
    let run = |b: &mut Bytes| {
        result = f(b);
        Ok(())
    };
    match codec {
        1 => Gzip::decompress(body, run),
        2 => Snappy::decompress(body, run),
        3 => Lz4::decompress(body, run),
        4 => Zstd::decompress(body, run),
        other => {
            return Err(Error::Protocol(format!(
                "unknown compression codec {other}"
            )))
        }
    }
    .map_err(|e| Error::Protocol(format!("decompressing a batch: {e}")))?;
    result
}

fn read_records(
    mut b: &[u8],
    base: i64,
    count: i32,
    from: i64,
    f: &mut impl FnMut(RecordView),
) -> Result<()> {
    let short = || Error::protocol("record runs past the end of its batch");
    for _ in 0..count {
        let length = usize::try_from(get_varint(&mut b)?).map_err(|_| short())?;
        let (mut record, rest) = (b.get(..length).ok_or_else(short)?, &b[length..]);
        b = rest;
        record = record.get(1..).ok_or_else(short)?; // attributes
        get_varint(&mut record)?; // timestamp delta
        let offset = base + get_varint(&mut record)?;
        let key_len = get_varint(&mut record)?;
        if key_len > 0 {
            record = record.get(key_len as usize..).ok_or_else(short)?;
        }
        let value_len = get_varint(&mut record)?.max(0) as usize;
        if offset < from {
            continue;
        }
        let value = record.get(..value_len).ok_or_else(short)?;
        f(RecordView {
            offset,
            value_len,
            stamp: crate::payload::stamp_of(value),
        });
    }
    Ok(())
}

#[inline]
fn get_varint(b: &mut &[u8]) -> Result<i64> {
    let mut z: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = b
            .split_first()
            .ok_or_else(|| Error::protocol("truncated varint"))?;
        *b = rest;
        z |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(((z >> 1) as i64) ^ -((z & 1) as i64));
        }
    }
    Err(Error::protocol("varint longer than 10 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{BatchBuilder, Compression, ProducerFields};
    use bytes::BytesMut;

    fn two_batches(compression: Compression) -> Bytes {
        let mut out = BytesMut::new();
        for batch in 0..2i64 {
            let mut builder = BatchBuilder::new(compression, 1024);
            for i in 0..10 {
                builder.append(0, None, &[9; 30], (batch * 10 + i) as f64);
            }
            let bytes = builder.finish(ProducerFields::NONE).unwrap();
            let mut bytes = BytesMut::from(&bytes[..]);
            bytes[..8].copy_from_slice(&(batch * 10).to_be_bytes());
            out.extend_from_slice(&bytes);
        }
        out.freeze()
    }

    #[test]
    fn reads_every_record_of_every_codec() {
        for compression in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let records = two_batches(compression);
            let mut seen = vec![];
            for_each_record(&records, 0, |r| seen.push(r)).unwrap();
            assert_eq!(seen.len(), 20, "{compression:?}");
            for (i, r) in seen.iter().enumerate() {
                assert_eq!(r.offset, i as i64);
                assert_eq!(r.value_len, 30);
                assert_eq!(r.stamp, Some(i as f64));
            }
            assert_eq!(next_offset(&records, 0), 20);
        }
    }

    #[test]
    fn skips_records_before_the_fetch_offset_and_partial_batches() {
        let records = two_batches(Compression::Lz4);
        let truncated = records.slice(..records.len() - 5);
        let mut seen = 0;
        for_each_record(&truncated, 4, |_| seen += 1).unwrap();
        assert_eq!(seen, 6);
        assert_eq!(next_offset(&truncated, 4), 10);
    }
}
