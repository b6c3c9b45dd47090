//! Reads fetched record batches without copying values: batch headers for offsets, then each
//! record's value length and first 8 bytes (decompressing compressed batches first, up to
//! [`MAX_DECOMPRESSED_BATCH`]).

use std::io::Read;

use bytes::Bytes;

use crate::batch::HEADER_BYTES;
use crate::error::{Error, Result};

/// The most one compressed batch may expand to. A broker's batches are bytes from the network: a
/// 1 MB gzip batch can expand to a gigabyte, and a zstd one to far more. Kafka's consumer expands
/// whatever it is sent; we stop at the most one fetch asks for (the consumer's fetch max bytes,
/// 64 MiB), far above what a producer's batch (a 16 KiB to 1 MiB `batch.size`) expands to.
pub const MAX_DECOMPRESSED_BATCH: usize = 64 << 20;

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
    if total < HEADER_BYTES {
        return None; // shorter than a batch header: nothing to read after it
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
    for_each_value(records, from, |offset, value| {
        f(RecordView {
            offset,
            value_len: value.len(),
            stamp: crate::payload::stamp_of(value),
        })
    })
}

/// Calls `f` with the offset and value of each data record at or after `from` in the complete
/// batches of `records` (the verification reader looks past the send-time stamp).
pub fn for_each_value(records: &Bytes, from: i64, mut f: impl FnMut(i64, &[u8])) -> Result<()> {
    let mut pos = 0;
    let mut expanded = Vec::new(); // reused by the compressed batches of this call
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
        let body = &batch[HEADER_BYTES..];
        match attributes & 0x7 {
            0 => read_records(body, base, count, from, &mut f)?,
            codec => {
                decompress(codec, body, &mut expanded)
                    .map_err(|e| Error::Protocol(format!("the batch at offset {base}: {e}")))?;
                read_records(&expanded, base, count, from, &mut f)?;
            }
        }
    }
    Ok(())
}

/// Expands the records of a batch compressed with `codec` into `out` (cleared first), refusing
/// to expand past [`MAX_DECOMPRESSED_BATCH`].
fn decompress(codec: i16, compressed: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    match codec {
        // Several gzip members one after another are one stream, as Java's GZIPInputStream reads.
        1 => read_bounded("gzip", flate2::read::MultiGzDecoder::new(compressed), out),
        2 => snappy(compressed, out),
        3 => {
            let reader = lz4::Decoder::new(compressed).map_err(|e| format!("lz4: {e}"))?;
            read_bounded("lz4", reader, out)
        }
        4 => {
            let reader = zstd::stream::read::Decoder::with_buffer(compressed)
                .map_err(|e| format!("zstd: {e}"))?;
            read_bounded("zstd", reader, out)
        }
        other => Err(format!("unknown compression codec {other}")),
    }
}

fn too_large(codec: &str) -> String {
    format!(
        "a {codec} batch expands past {} MiB, the most a batch may",
        MAX_DECOMPRESSED_BATCH >> 20
    )
}

/// Reads `reader` to its end into `out`, stopping one byte past the bound.
fn read_bounded(codec: &str, reader: impl Read, out: &mut Vec<u8>) -> Result<(), String> {
    let bound = MAX_DECOMPRESSED_BATCH as u64;
    let read = reader
        .take(bound + 1)
        .read_to_end(out)
        .map_err(|e| format!("{codec}: {e}"))?;
    if read as u64 > bound {
        return Err(too_large(codec));
    }
    Ok(())
}

/// Snappy as Kafka writes it: xerial's framing (a magic header, then blocks each with its
/// compressed length) or, from older clients, one raw block. Each block states its expanded
/// length up front, which is checked before anything is allocated.
fn snappy(compressed: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    const XERIAL_MAGIC: &[u8] = b"\x82SNAPPY\x00";
    const XERIAL_HEADER: usize = 16; // the magic, a version and a compatible version
    let mut expand = |block: &[u8]| -> Result<(), String> {
        let len = snap::raw::decompress_len(block).map_err(|e| format!("snappy: {e}"))?;
        if out.len() + len > MAX_DECOMPRESSED_BATCH {
            return Err(too_large("snappy"));
        }
        let at = out.len();
        out.resize(at + len, 0);
        snap::raw::Decoder::new()
            .decompress(block, &mut out[at..])
            .map_err(|e| format!("snappy: {e}"))?;
        Ok(())
    };
    if !compressed.starts_with(XERIAL_MAGIC) {
        return expand(compressed);
    }
    let mut rest = compressed.get(XERIAL_HEADER..).unwrap_or_default();
    while !rest.is_empty() {
        let (size, after) = rest
            .split_first_chunk::<4>()
            .ok_or("snappy: a block length cut short")?;
        let size = u32::from_be_bytes(*size) as usize;
        let block = after.get(..size).ok_or("snappy: a block cut short")?;
        expand(block)?;
        rest = &after[size..];
    }
    Ok(())
}

fn read_records(
    mut b: &[u8],
    base: i64,
    count: i32,
    from: i64,
    f: &mut impl FnMut(i64, &[u8]),
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
        f(offset, value);
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

    /// A batch header (attributes set to `codec`) followed by `compressed`.
    fn batch_of(codec: i16, compressed: &[u8]) -> Bytes {
        let mut out = BytesMut::from(&two_batches(Compression::None)[..HEADER_BYTES]);
        out[8..12].copy_from_slice(&((HEADER_BYTES - 12 + compressed.len()) as i32).to_be_bytes());
        out[21..23].copy_from_slice(&codec.to_be_bytes());
        out.extend_from_slice(compressed);
        out.freeze()
    }

    fn refusal(batch: &Bytes) -> String {
        let mut seen = 0;
        let e = for_each_record(batch, 0, |_| seen += 1).unwrap_err();
        assert_eq!(seen, 0);
        e.to_string()
    }

    #[test]
    fn a_zstd_or_lz4_batch_expanding_past_the_bound_is_refused() {
        let zeros = vec![0u8; MAX_DECOMPRESSED_BATCH + 1];
        let zstd = zstd::encode_all(&zeros[..], 1).unwrap();
        let mut lz4 = lz4::EncoderBuilder::new().build(Vec::new()).unwrap();
        std::io::Write::write_all(&mut lz4, &zeros).unwrap();
        let (lz4, finished) = lz4.finish();
        finished.unwrap();
        for (codec, name, compressed) in [(4, "zstd", zstd), (3, "lz4", lz4)] {
            let e = refusal(&batch_of(codec, &compressed));
            assert!(
                e.contains(&format!("a {name} batch expands past 64 MiB")),
                "{e}"
            );
        }
    }

    #[test]
    fn a_snappy_block_claiming_more_than_the_bound_is_refused_before_allocating() {
        // A raw block and a xerial-framed one, each stating an expanded length of 4 GiB - 1.
        let raw = b"\xff\xff\xff\xff\x0f\x00";
        let mut xerial = b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01".to_vec();
        xerial.extend_from_slice(&(raw.len() as u32).to_be_bytes());
        xerial.extend_from_slice(raw);
        for compressed in [&raw[..], &xerial] {
            let e = refusal(&batch_of(2, compressed));
            assert!(e.contains("a snappy batch expands past 64 MiB"), "{e}");
        }
    }

    #[test]
    fn a_batch_length_shorter_than_a_batch_header_ends_the_records() {
        let mut records = BytesMut::from(&two_batches(Compression::None)[..]);
        records[8..12].copy_from_slice(&0i32.to_be_bytes());
        let mut seen = 0;
        for_each_record(&records.freeze(), 0, |_| seen += 1).unwrap();
        assert_eq!(seen, 0);
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
