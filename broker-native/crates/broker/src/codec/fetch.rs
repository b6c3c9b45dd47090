//! The Fetch response, encoded without copying its record data: every field
//! but the records goes into one header buffer, and each partition's records
//! `Bytes` is referenced as its own chunk of the frame (see [`FrameBuilder`]).
//!
//! Field order and encodings follow the FetchResponse schema (versions
//! 4-18): non-flexible versions (< 12) use i16-length strings and i32-length
//! arrays and bytes, flexible ones compact (unsigned-varint length + 1)
//! strings, arrays and bytes, plus a tagged-field section after every struct.
//! The leaf structs (aborted transactions, tagged epoch/leader/snapshot
//! structs, node endpoints) are small and use kafka-protocol's own encoders.
//! Golden tests check the result byte for byte against kafka-protocol's
//! encoder of the whole message.

use super::frame::{Frame, FrameBuilder};
use anyhow::{bail, ensure, Context, Result};
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::fetch_response::{
    EpochEndOffset, FetchableTopicResponse, LeaderIdAndEpoch, PartitionData, SnapshotId,
};
use kafka_protocol::messages::{ApiKey, FetchResponse, ResponseHeader};
use kafka_protocol::protocol::Encodable;
use std::collections::BTreeMap;

/// The Fetch versions this encoder implements. Other versions fall back to
/// kafka-protocol's (copying) encoder, so raising the advertised maximum past
/// this is safe, just not zero-copy until this encoder learns the new version.
pub const MIN_VERSION: i16 = 4;
pub const MAX_VERSION: i16 = 18;

/// First version with compact encodings and tagged fields.
const FLEXIBLE: i16 = 12;

/// Encodes a whole Fetch response frame, with each partition's records
/// referenced rather than copied.
pub fn encode_fetch_response(
    correlation_id: i32,
    version: i16,
    body: &FetchResponse,
) -> crate::error::Result<Frame> {
    if !(MIN_VERSION..=MAX_VERSION).contains(&version) {
        return super::encode_response(correlation_id, ApiKey::Fetch, version, body)
            .map(Frame::from);
    }
    encode(correlation_id, version, body)
        .map_err(|e| crate::error::Error::Malformed(format!("encoding Fetch response: {e:#}")))
}

fn encode(correlation_id: i32, version: i16, body: &FetchResponse) -> Result<Frame> {
    let mut frame = FrameBuilder::new(header_capacity(body));
    let buf = frame.buf();
    let mut header = ResponseHeader::default();
    header.correlation_id = correlation_id;
    header.encode(buf, ApiKey::Fetch.response_header_version(version))?;
    let flexible = version >= FLEXIBLE;

    buf.put_i32(body.throttle_time_ms);
    if version >= 7 {
        buf.put_i16(body.error_code);
        buf.put_i32(body.session_id);
    } else {
        ensure!(body.session_id == 0, "session_id needs v7+");
    }
    put_array_len(frame.buf(), flexible, body.responses.len())?;
    let defaults = TaggedDefaults::default();
    for topic in &body.responses {
        encode_topic(&mut frame, version, topic, &defaults)?;
    }
    if flexible {
        let buf = frame.buf();
        let endpoints = version >= 16 && !body.node_endpoints.is_empty();
        check_unknown_tags(&body.unknown_tagged_fields, 1)?;
        put_tag_count(
            buf,
            usize::from(endpoints) + body.unknown_tagged_fields.len(),
        )?;
        if endpoints {
            // Tag 0: a compact array of NodeEndpoint structs.
            let mut size = uvarint_len(to_u32(body.node_endpoints.len() + 1)?);
            for endpoint in &body.node_endpoints {
                size += endpoint.compute_size(version)?;
            }
            put_uvarint(buf, 0);
            put_uvarint(buf, to_u32(size)?);
            put_array_len(buf, true, body.node_endpoints.len())?;
            for endpoint in &body.node_endpoints {
                endpoint.encode(buf, version)?;
            }
        }
        put_unknown_tagged(buf, &body.unknown_tagged_fields)?;
    }
    frame
        .finish()
        .map_err(|size| anyhow::anyhow!("frame of {size} bytes exceeds the i32 size prefix"))
}

fn encode_topic(
    frame: &mut FrameBuilder,
    version: i16,
    topic: &FetchableTopicResponse,
    defaults: &TaggedDefaults,
) -> Result<()> {
    let flexible = version >= FLEXIBLE;
    let buf = frame.buf();
    if version <= 12 {
        put_string(buf, flexible, &topic.topic).context("topic name")?;
    }
    if version >= 13 {
        buf.put_slice(topic.topic_id.as_bytes());
    }
    put_array_len(buf, flexible, topic.partitions.len())?;
    for partition in &topic.partitions {
        encode_partition(frame, version, partition, defaults)?;
    }
    if flexible {
        let buf = frame.buf();
        check_unknown_tags(&topic.unknown_tagged_fields, 0)?;
        put_tag_count(buf, topic.unknown_tagged_fields.len())?;
        put_unknown_tagged(buf, &topic.unknown_tagged_fields)?;
    }
    Ok(())
}

fn encode_partition(
    frame: &mut FrameBuilder,
    version: i16,
    p: &PartitionData,
    defaults: &TaggedDefaults,
) -> Result<()> {
    let flexible = version >= FLEXIBLE;
    let buf = frame.buf();
    buf.put_i32(p.partition_index);
    buf.put_i16(p.error_code);
    buf.put_i64(p.high_watermark);
    buf.put_i64(p.last_stable_offset);
    if version >= 5 {
        buf.put_i64(p.log_start_offset);
    }
    match &p.aborted_transactions {
        None => put_null_len(buf, flexible),
        Some(aborted) => {
            put_array_len(buf, flexible, aborted.len())?;
            for txn in aborted {
                txn.encode(buf, version)?;
            }
        }
    }
    if version >= 11 {
        buf.put_i32(p.preferred_read_replica.0);
    } else {
        ensure!(
            p.preferred_read_replica.0 == -1,
            "preferred_read_replica needs v11+"
        );
    }
    match &p.records {
        None => put_null_len(buf, flexible),
        Some(records) => {
            put_bytes_len(buf, flexible, records.len())?;
            frame.splice(records);
        }
    }
    if flexible {
        let buf = frame.buf();
        let diverging = p.diverging_epoch != defaults.diverging_epoch;
        let leader = p.current_leader != defaults.current_leader;
        let snapshot = p.snapshot_id != defaults.snapshot_id;
        check_unknown_tags(&p.unknown_tagged_fields, 3)?;
        put_tag_count(
            buf,
            usize::from(diverging)
                + usize::from(leader)
                + usize::from(snapshot)
                + p.unknown_tagged_fields.len(),
        )?;
        if diverging {
            put_tagged_struct(buf, 0, &p.diverging_epoch, version)?;
        }
        if leader {
            put_tagged_struct(buf, 1, &p.current_leader, version)?;
        }
        if snapshot {
            put_tagged_struct(buf, 2, &p.snapshot_id, version)?;
        }
        put_unknown_tagged(buf, &p.unknown_tagged_fields)?;
    }
    Ok(())
}

/// Tagged struct fields are sent only when they differ from their defaults.
#[derive(Default)]
struct TaggedDefaults {
    diverging_epoch: EpochEndOffset,
    current_leader: LeaderIdAndEpoch,
    snapshot_id: SnapshotId,
}

/// A guess at the header buffer's size, so it rarely grows: fixed fields
/// plus small records, which are copied in.
fn header_capacity(body: &FetchResponse) -> usize {
    let mut capacity = 64;
    for topic in &body.responses {
        capacity += 32 + topic.topic.len();
        for p in &topic.partitions {
            capacity += 64;
            if let Some(records) = &p.records {
                if records.len() <= FrameBuilder::INLINE_MAX {
                    capacity += records.len();
                }
            }
            if let Some(aborted) = &p.aborted_transactions {
                capacity += 17 * aborted.len();
            }
        }
    }
    capacity
}

fn to_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| anyhow::anyhow!("length {n} too large"))
}

fn put_uvarint(buf: &mut BytesMut, mut value: u32) {
    while value >= 0x80 {
        buf.put_u8(value as u8 | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

fn uvarint_len(value: u32) -> usize {
    match value {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0x0fff_ffff => 4,
        _ => 5,
    }
}

/// The length of a non-null array: i32, or compact (unsigned varint of n + 1).
fn put_array_len(buf: &mut BytesMut, flexible: bool, n: usize) -> Result<()> {
    if flexible {
        ensure!(n < u32::MAX as usize, "array of {n} elements too long");
        put_uvarint(buf, n as u32 + 1);
    } else {
        let n = i32::try_from(n).map_err(|_| anyhow::anyhow!("array of {n} too long"))?;
        buf.put_i32(n);
    }
    Ok(())
}

/// Bytes lengths are encoded like array lengths.
fn put_bytes_len(buf: &mut BytesMut, flexible: bool, n: usize) -> Result<()> {
    put_array_len(buf, flexible, n)
}

/// A null array or bytes: -1, or compact 0.
fn put_null_len(buf: &mut BytesMut, flexible: bool) {
    if flexible {
        put_uvarint(buf, 0);
    } else {
        buf.put_i32(-1);
    }
}

/// A non-null string: i16 length, or compact (unsigned varint of len + 1).
fn put_string(buf: &mut BytesMut, flexible: bool, s: &str) -> Result<()> {
    if flexible {
        ensure!(s.len() < u32::MAX as usize, "string too long");
        put_uvarint(buf, s.len() as u32 + 1);
    } else {
        let len = i16::try_from(s.len()).map_err(|_| anyhow::anyhow!("string too long"))?;
        buf.put_i16(len);
    }
    buf.put_slice(s.as_bytes());
    Ok(())
}

fn put_tag_count(buf: &mut BytesMut, count: usize) -> Result<()> {
    put_uvarint(buf, to_u32(count)?);
    Ok(())
}

fn put_tagged_struct<T: Encodable>(
    buf: &mut BytesMut,
    tag: u32,
    value: &T,
    version: i16,
) -> Result<()> {
    put_uvarint(buf, tag);
    put_uvarint(buf, to_u32(value.compute_size(version)?)?);
    value.encode(buf, version)
}

/// Unknown tagged fields (carried over from a decode) must sort after the
/// known ones, whose tags are below `first_free`.
fn check_unknown_tags(unknown: &BTreeMap<i32, Bytes>, first_free: i32) -> Result<()> {
    if let Some((&tag, _)) = unknown.first_key_value() {
        if tag < first_free {
            bail!("unknown tagged field {tag} collides with a known tag");
        }
    }
    Ok(())
}

fn put_unknown_tagged(buf: &mut BytesMut, unknown: &BTreeMap<i32, Bytes>) -> Result<()> {
    for (&tag, value) in unknown {
        put_uvarint(buf, tag as u32);
        put_uvarint(buf, to_u32(value.len())?);
        buf.put_slice(value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::encode_response;
    use kafka_protocol::messages::fetch_response::{AbortedTransaction, NodeEndpoint};
    use kafka_protocol::messages::{BrokerId, ProducerId, TopicName};
    use kafka_protocol::protocol::{Decodable, Message, StrBytes};

    /// A small deterministic generator (xorshift64*), so failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn chance(&mut self, one_in: u64) -> bool {
            self.below(one_in) == 0
        }
        fn i32(&mut self) -> i32 {
            self.next() as i32
        }
        fn i64(&mut self) -> i64 {
            self.next() as i64
        }
        fn bytes(&mut self, len: usize) -> Bytes {
            (0..len)
                .map(|_| self.next() as u8)
                .collect::<Vec<_>>()
                .into()
        }
    }

    fn records(rng: &mut Rng) -> Option<Bytes> {
        let len = match rng.below(6) {
            0 => return None,
            1 => 0,
            2 => 1 + rng.below(FrameBuilder::INLINE_MAX as u64) as usize,
            // Around the inline threshold, and well above it.
            3 => FrameBuilder::INLINE_MAX + rng.below(3) as usize,
            _ => 600 + rng.below(20_000) as usize,
        };
        Some(rng.bytes(len))
    }

    fn unknown_tags(rng: &mut Rng, first_free: i32) -> BTreeMap<i32, Bytes> {
        let mut tags = BTreeMap::new();
        if rng.chance(4) {
            for _ in 0..1 + rng.below(3) {
                let tag = first_free + rng.below(200) as i32;
                let len = rng.below(140) as usize;
                tags.insert(tag, rng.bytes(len));
            }
        }
        tags
    }

    /// A response that is valid for `version`, exercising every field the
    /// version has.
    fn generate(rng: &mut Rng, version: i16) -> FetchResponse {
        let mut response = FetchResponse::default();
        response.throttle_time_ms = rng.below(3) as i32 * 100;
        if version >= 7 {
            response.error_code = if rng.chance(5) { 70 } else { 0 };
            response.session_id = if rng.chance(3) { rng.i32() } else { 0 };
        }
        response.responses = (0..rng.below(5))
            .map(|t| {
                let mut topic = FetchableTopicResponse::default();
                let name = format!("topic-{t}-{}", "x".repeat(rng.below(150) as usize));
                topic.topic = TopicName(StrBytes::from_string(name));
                if version >= 13 {
                    topic.topic_id = uuid::Uuid::from_u64_pair(rng.next(), rng.next());
                }
                topic.partitions = (0..rng.below(6))
                    .map(|i| partition(rng, version, i as i32))
                    .collect();
                if version >= FLEXIBLE {
                    topic.unknown_tagged_fields = unknown_tags(rng, 0);
                }
                topic
            })
            .collect();
        if version >= 16 && rng.chance(2) {
            response.node_endpoints = (0..1 + rng.below(3))
                .map(|i| {
                    let mut e = NodeEndpoint::default();
                    e.node_id = BrokerId(i as i32);
                    e.host = StrBytes::from_string(format!("broker-{i}.example"));
                    e.port = 9092;
                    e.rack = rng.chance(2).then(|| StrBytes::from_static_str("rack-a"));
                    e
                })
                .collect();
        }
        if version >= FLEXIBLE {
            response.unknown_tagged_fields = unknown_tags(rng, 1);
        }
        response
    }

    fn partition(rng: &mut Rng, version: i16, index: i32) -> PartitionData {
        let mut p = PartitionData::default();
        p.partition_index = index;
        p.error_code = [0, 0, 0, 1, 3, 6][rng.below(6) as usize];
        p.high_watermark = rng.i64();
        p.last_stable_offset = rng.i64();
        p.log_start_offset = rng.i64();
        p.aborted_transactions = match rng.below(3) {
            0 => None,
            1 => Some(Vec::new()),
            _ => Some(
                (0..1 + rng.below(4))
                    .map(|_| {
                        let mut a = AbortedTransaction::default();
                        a.producer_id = ProducerId(rng.i64());
                        a.first_offset = rng.i64();
                        a
                    })
                    .collect(),
            ),
        };
        if version >= 11 && rng.chance(2) {
            p.preferred_read_replica = BrokerId(rng.below(5) as i32);
        }
        p.records = records(rng);
        if version >= FLEXIBLE {
            if rng.chance(3) {
                p.diverging_epoch.epoch = rng.i32();
                p.diverging_epoch.end_offset = rng.i64();
            }
            if rng.chance(3) {
                p.current_leader.leader_id = BrokerId(rng.below(5) as i32);
                p.current_leader.leader_epoch = rng.below(100) as i32;
            }
            if rng.chance(3) {
                p.snapshot_id.end_offset = rng.i64();
                p.snapshot_id.epoch = rng.i32();
            }
            p.unknown_tagged_fields = unknown_tags(rng, 3);
        }
        p
    }

    #[test]
    fn chunks_equal_kafka_protocols_encoding_for_every_version() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for version in MIN_VERSION..=MAX_VERSION {
            for case in 0..150 {
                let response = generate(&mut rng, version);
                let correlation_id = rng.i32();
                let expected =
                    encode_response(correlation_id, ApiKey::Fetch, version, &response).unwrap();
                let frame = encode_fetch_response(correlation_id, version, &response).unwrap();
                assert_eq!(
                    frame.len(),
                    expected.len(),
                    "v{version} case {case}: length"
                );
                assert!(
                    frame.to_contiguous() == expected,
                    "v{version} case {case}: bytes differ"
                );
            }
        }
    }

    #[test]
    fn default_and_empty_responses_match_too() {
        for version in MIN_VERSION..=MAX_VERSION {
            let mut response = FetchResponse::default();
            let mut topic = FetchableTopicResponse::default();
            topic.partitions = vec![PartitionData::default()];
            response.responses = vec![FetchableTopicResponse::default(), topic];
            for body in [FetchResponse::default(), response] {
                let expected = encode_response(1, ApiKey::Fetch, version, &body).unwrap();
                let frame = encode_fetch_response(1, version, &body).unwrap();
                assert_eq!(frame.to_contiguous(), expected, "v{version}");
            }
        }
    }

    #[test]
    fn large_records_are_referenced_not_copied() {
        let big: Vec<Bytes> = (0..3)
            .map(|i| Bytes::from(vec![i as u8; 64 * 1024 + i]))
            .collect();
        let small = Bytes::from_static(b"small batch");
        for version in MIN_VERSION..=MAX_VERSION {
            let mut topic = FetchableTopicResponse::default();
            topic.topic = TopicName(StrBytes::from_static_str("t"));
            topic.partitions = big
                .iter()
                .chain([&small])
                .enumerate()
                .map(|(i, records)| {
                    let mut p = PartitionData::default();
                    p.partition_index = i as i32;
                    p.records = Some(records.clone());
                    p
                })
                .collect();
            let mut response = FetchResponse::default();
            response.responses = vec![topic];
            let frame = encode_fetch_response(3, version, &response).unwrap();
            let chunks = frame.chunks();
            for records in &big {
                assert!(
                    chunks
                        .iter()
                        .any(|c| c.as_ptr() == records.as_ptr() && c.len() == records.len()),
                    "v{version}: records were copied"
                );
            }
            // Three spliced payloads, header pieces around them.
            assert_eq!(chunks.len(), 7, "v{version}");
            let copied: usize = chunks
                .iter()
                .filter(|c| !big.iter().any(|b| b.as_ptr() == c.as_ptr()))
                .map(Bytes::len)
                .sum();
            assert!(copied < 1024, "v{version}: {copied} bytes outside records");

            let mut bytes = frame.to_contiguous().freeze();
            let size = i32::from_be_bytes(bytes[..4].try_into().unwrap());
            assert_eq!(size as usize, bytes.len() - 4);
            let _ = bytes.split_to(4);
            ResponseHeader::decode(&mut bytes, ApiKey::Fetch.response_header_version(version))
                .unwrap();
            let decoded = FetchResponse::decode(&mut bytes, version).unwrap();
            let got: Vec<_> = decoded.responses[0]
                .partitions
                .iter()
                .map(|p| p.records.clone().unwrap())
                .collect();
            assert_eq!(got[..3], big[..], "v{version}");
            assert_eq!(got[3], small, "v{version}");
        }
    }

    #[test]
    fn fields_a_version_lacks_are_rejected_like_kafka_protocol_does() {
        let mut response = FetchResponse::default();
        response.session_id = 5;
        assert!(encode_response(1, ApiKey::Fetch, 6, &response).is_err());
        assert!(encode_fetch_response(1, 6, &response).is_err());
        assert!(encode_fetch_response(1, 7, &response).is_ok());

        let mut p = PartitionData::default();
        p.preferred_read_replica = BrokerId(2);
        let mut topic = FetchableTopicResponse::default();
        topic.partitions = vec![p];
        let mut response = FetchResponse::default();
        response.responses = vec![topic];
        assert!(encode_response(1, ApiKey::Fetch, 10, &response).is_err());
        assert!(encode_fetch_response(1, 10, &response).is_err());
        assert!(encode_fetch_response(1, 11, &response).is_ok());
    }

    #[test]
    fn unknown_tags_colliding_with_known_ones_are_rejected() {
        let mut p = PartitionData::default();
        p.unknown_tagged_fields.insert(1, Bytes::from_static(b"x"));
        let mut topic = FetchableTopicResponse::default();
        topic.partitions = vec![p];
        let mut response = FetchResponse::default();
        response.responses = vec![topic];
        assert!(encode_fetch_response(1, 12, &response).is_err());
        // Not encoded at all before flexible versions.
        assert!(encode_fetch_response(1, 11, &response).is_ok());
    }

    #[test]
    fn versions_outside_the_encoder_fall_back_to_kafka_protocol() {
        let response = FetchResponse::default();
        assert!(encode_fetch_response(1, MIN_VERSION - 1, &response).is_err());
    }

    /// If kafka-protocol learns a new Fetch version, this encoder must be
    /// checked against its schema before MAX_VERSION is raised.
    #[test]
    fn encoder_covers_every_version_kafka_protocol_defines() {
        assert_eq!(
            <FetchResponse as Message>::VERSIONS.min,
            MIN_VERSION,
            "FetchResponse versions changed: review codec/fetch.rs"
        );
        assert_eq!(
            <FetchResponse as Message>::VERSIONS.max,
            MAX_VERSION,
            "FetchResponse versions changed: review codec/fetch.rs"
        );
    }

    #[test]
    fn uvarint_lengths_match_encodings() {
        for value in [
            0,
            1,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            0x1f_ffff,
            0x20_0000,
            u32::MAX,
        ] {
            let mut buf = BytesMut::new();
            put_uvarint(&mut buf, value);
            assert_eq!(buf.len(), uvarint_len(value), "{value:#x}");
        }
    }
}
