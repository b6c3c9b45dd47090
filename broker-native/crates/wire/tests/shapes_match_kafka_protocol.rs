//! The generated shapes read messages exactly as kafka-protocol does: random messages written from
//! each shape pass the walk and decode with kafka-protocol to their last byte, at every version
//! both know. And a count too large for its bytes is refused wherever it is.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Message};
use kbench_wire::shapes::{data, requests, responses};
use kbench_wire::{check_request, check_response, walk, Error, Field, Shape, Ty};

/// Writes random messages that follow a shape: the mirror of the walk.
struct Writer {
    out: BytesMut,
    version: i16,
    flexible: bool,
    seed: u64,
}

impl Writer {
    fn new(shape: &Shape, version: i16, seed: u64) -> Writer {
        Writer {
            out: BytesMut::new(),
            version,
            flexible: shape.is_flexible(version),
            seed: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }

    fn next(&mut self, below: u64) -> u64 {
        // xorshift: deterministic and dependency-free.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed % below
    }

    fn uvarint(&mut self, mut n: u32) {
        while n >= 0x80 {
            self.out.put_u8((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
        self.out.put_u8(n as u8);
    }

    fn length(&mut self, n: usize, width: usize) {
        if self.flexible {
            self.uvarint(n as u32 + 1);
        } else if width == 2 {
            self.out.put_i16(n as i16);
        } else {
            self.out.put_i32(n as i32);
        }
    }

    fn fields(&mut self, fields: &[Field]) {
        for field in fields {
            if field.in_place(self.version, self.flexible) {
                self.value(&field.ty);
            }
        }
        if !self.flexible {
            return;
        }
        let (version, flexible) = (self.version, self.flexible);
        let mut known: Vec<&Field> = Vec::new();
        for f in fields.iter().filter(|f| f.tagged_in(version, flexible)) {
            if self.next(2) == 0 {
                known.push(f);
            }
        }
        self.uvarint(known.len() as u32 + 1);
        for field in known {
            let mut inner = Writer {
                out: BytesMut::new(),
                version: self.version,
                flexible: true,
                seed: self.next(u64::MAX) | 1,
            };
            inner.value(&field.ty);
            self.uvarint(field.tag as u32);
            self.uvarint(inner.out.len() as u32);
            self.out.extend_from_slice(&inner.out);
            self.seed = inner.seed;
        }
        // One tag no version knows, which must be skipped by size.
        self.uvarint(9999);
        self.uvarint(3);
        self.out.extend_from_slice(b"xyz");
    }

    fn value(&mut self, ty: &Ty) {
        match ty {
            Ty::Fixed(width) => {
                for _ in 0..*width {
                    // Small values: bools stay 0 or 1, enums stay in range.
                    let byte = self.next(2) as u8;
                    self.out.put_u8(byte);
                }
            }
            Ty::Str => {
                let n = self.next(6) as usize;
                self.length(n, 2);
                for _ in 0..n {
                    let c = b'a' + self.next(26) as u8;
                    self.out.put_u8(c);
                }
            }
            Ty::Bytes => {
                let n = self.next(9) as usize;
                self.length(n, 4);
                self.out.extend(std::iter::repeat_n(0u8, n));
            }
            Ty::Array(element) => {
                let n = self.next(4) as usize;
                self.length(n, 4);
                for _ in 0..n {
                    self.value(element);
                }
            }
            Ty::Struct(fields) => self.fields(fields),
        }
    }

    /// The fields before the first top-level array, then that array's count at its maximum.
    /// False when the message has no array at this version.
    fn up_to_a_huge_count(&mut self, shape: &Shape) -> bool {
        for field in shape.fields {
            if !field.in_place(self.version, self.flexible) {
                continue;
            }
            if let Ty::Array(_) = field.ty {
                if self.flexible {
                    self.out.extend_from_slice(b"\xff\xff\xff\xff\x0f");
                } else {
                    self.out.put_i32(i32::MAX);
                }
                return true;
            }
            self.value(&field.ty);
        }
        false
    }
}

fn decode<T: Decodable>(body: &Bytes, version: i16) -> Result<(), String> {
    let mut buf = body.clone();
    T::decode(&mut buf, version).map_err(|e| format!("{e:#}"))?;
    match buf.remaining() {
        0 => Ok(()),
        n => Err(format!("{n} bytes left after decoding")),
    }
}

/// kafka-protocol's request and response types by API key.
macro_rules! by_api_key {
    ($($key:ident: $request:ty, $response:ty;)*) => {
        fn decode_request(api_key: ApiKey, body: &Bytes, version: i16) -> Result<(), String> {
            match api_key {
                $(ApiKey::$key => decode::<$request>(body, version),)*
                other => panic!("{other:?} has a request shape but no decoder in this test"),
            }
        }
        fn decode_response(api_key: ApiKey, body: &Bytes, version: i16) -> Result<(), String> {
            match api_key {
                $(ApiKey::$key => decode::<$response>(body, version),)*
                other => panic!("{other:?} has a response shape but no decoder in this test"),
            }
        }
        /// The versions kafka-protocol's request type reads.
        fn request_versions(shape: &Shape) -> (i16, i16) {
            let versions = match api_key(shape) {
                $(ApiKey::$key => <$request>::VERSIONS,)*
                other => panic!("{other:?} has a request shape but no decoder in this test"),
            };
            (versions.min, versions.max)
        }
        /// The versions kafka-protocol's response type reads.
        fn response_versions(shape: &Shape) -> (i16, i16) {
            let versions = match api_key(shape) {
                $(ApiKey::$key => <$response>::VERSIONS,)*
                other => panic!("{other:?} has a response shape but no decoder in this test"),
            };
            (versions.min, versions.max)
        }
    };
}

by_api_key! {
    Produce: ProduceRequest, ProduceResponse;
    Fetch: FetchRequest, FetchResponse;
    ListOffsets: ListOffsetsRequest, ListOffsetsResponse;
    Metadata: MetadataRequest, MetadataResponse;
    OffsetCommit: OffsetCommitRequest, OffsetCommitResponse;
    OffsetFetch: OffsetFetchRequest, OffsetFetchResponse;
    FindCoordinator: FindCoordinatorRequest, FindCoordinatorResponse;
    JoinGroup: JoinGroupRequest, JoinGroupResponse;
    Heartbeat: HeartbeatRequest, HeartbeatResponse;
    LeaveGroup: LeaveGroupRequest, LeaveGroupResponse;
    SyncGroup: SyncGroupRequest, SyncGroupResponse;
    DescribeGroups: DescribeGroupsRequest, DescribeGroupsResponse;
    ListGroups: ListGroupsRequest, ListGroupsResponse;
    ApiVersions: ApiVersionsRequest, ApiVersionsResponse;
    CreateTopics: CreateTopicsRequest, CreateTopicsResponse;
    DeleteTopics: DeleteTopicsRequest, DeleteTopicsResponse;
    InitProducerId: InitProducerIdRequest, InitProducerIdResponse;
    DescribeConfigs: DescribeConfigsRequest, DescribeConfigsResponse;
    AlterConfigs: AlterConfigsRequest, AlterConfigsResponse;
    CreatePartitions: CreatePartitionsRequest, CreatePartitionsResponse;
    IncrementalAlterConfigs: IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse;
    DescribeCluster: DescribeClusterRequest, DescribeClusterResponse;
    SaslHandshake: SaslHandshakeRequest, SaslHandshakeResponse;
    SaslAuthenticate: SaslAuthenticateRequest, SaslAuthenticateResponse;
}

const SEEDS: u64 = 40;

/// For each shape and each version it shares with kafka-protocol (`known`): random messages
/// pass the walk and `decode` reads each to its last byte. Returns how many were decoded.
fn random_messages_decode(
    shapes: &[Shape],
    known: impl Fn(&Shape) -> (i16, i16),
    decode: impl Fn(&Shape, &Bytes, i16) -> Result<(), String>,
) -> usize {
    let mut checked = 0;
    for shape in shapes {
        let (low, high) = known(shape);
        let versions = shape.versions.0.max(low)..=shape.versions.1.min(high);
        assert!(!versions.is_empty(), "{}: no version in common", shape.name);
        for version in versions {
            for seed in 1..=SEEDS {
                let mut writer = Writer::new(shape, version, seed);
                writer.fields(shape.fields);
                let body = writer.out.freeze();
                let walked = walk(shape, version, &body).unwrap_or_else(|e| {
                    panic!(
                        "{} v{version} seed {seed}: refused its own body: {e}",
                        shape.name
                    )
                });
                assert_eq!(walked, body.len(), "{} v{version} seed {seed}", shape.name);
                decode(shape, &body, version).unwrap_or_else(|e| {
                    panic!(
                        "{} v{version} seed {seed}: {e}\nbody {body:02x?}",
                        shape.name
                    )
                });
                checked += 1;
            }
        }
    }
    checked
}

fn api_key(shape: &Shape) -> ApiKey {
    ApiKey::try_from(shape.api_key).unwrap()
}

#[test]
fn every_request_shape_matches_what_kafka_protocol_decodes() {
    let checked =
        random_messages_decode(requests::ALL, request_versions, |shape, body, version| {
            decode_request(api_key(shape), body, version)
        });
    assert!(checked > 22 * SEEDS as usize, "checked {checked} bodies");
}

#[test]
fn every_response_shape_matches_what_kafka_protocol_decodes() {
    let checked =
        random_messages_decode(responses::ALL, response_versions, |shape, body, version| {
            decode_response(api_key(shape), body, version)
        });
    assert!(checked > 22 * SEEDS as usize, "checked {checked} bodies");
}

#[test]
fn the_consumer_protocol_shapes_match_what_kafka_protocol_decodes() {
    let versions = |shape: &Shape| match shape.name {
        "ConsumerProtocolAssignment" => (
            ConsumerProtocolAssignment::VERSIONS.min,
            ConsumerProtocolAssignment::VERSIONS.max,
        ),
        _ => (
            ConsumerProtocolSubscription::VERSIONS.min,
            ConsumerProtocolSubscription::VERSIONS.max,
        ),
    };
    let checked = random_messages_decode(data::ALL, versions, |shape, body, version| {
        match shape.name {
            "ConsumerProtocolAssignment" => decode::<ConsumerProtocolAssignment>(body, version),
            _ => decode::<ConsumerProtocolSubscription>(body, version),
        }
    });
    assert_eq!(checked, 2 * 4 * SEEDS as usize);
}

#[test]
fn the_response_header_version_is_kafka_protocols() {
    for shape in responses::ALL {
        let (low, high) = response_versions(shape);
        for version in shape.versions.0.max(low)..=shape.versions.1.min(high) {
            assert_eq!(
                kbench_wire::response_header_version(shape, version),
                api_key(shape).response_header_version(version),
                "{} v{version}",
                shape.name
            );
        }
    }
}

/// A response frame: header (as the API's header version wants) and `body`.
fn response_frame(shape: &Shape, version: i16, body: &[u8]) -> Vec<u8> {
    let mut out = 42i32.to_be_bytes().to_vec();
    if kbench_wire::response_header_version(shape, version) >= 1 {
        out.push(0); // no tagged fields
    }
    out.extend_from_slice(body);
    out
}

#[test]
fn a_random_response_frame_passes_with_its_header() {
    for shape in responses::ALL {
        for version in shape.versions.0..=shape.versions.1 {
            let mut writer = Writer::new(shape, version, 3);
            writer.fields(shape.fields);
            let frame = response_frame(shape, version, &writer.out);
            check_response(shape.api_key, version, &frame)
                .unwrap_or_else(|e| panic!("{} v{version}: {e}", shape.name));
        }
    }
}

#[test]
fn huge_counts_anywhere_in_any_request_or_response_are_refused() {
    let mut refused = 0;
    for (shapes, check) in [
        (
            requests::ALL,
            check_request as fn(i16, i16, &[u8]) -> kbench_wire::Result<()>,
        ),
        (responses::ALL, |key, version, body: &[u8]| {
            let shape = responses::by_key(key).unwrap();
            check_response(key, version, &response_frame(shape, version, body))
        }),
    ] {
        for shape in shapes {
            for version in shape.versions.0..=shape.versions.1 {
                let mut writer = Writer::new(shape, version, 7);
                if !writer.up_to_a_huge_count(shape) {
                    continue;
                }
                match check(shape.api_key, version, &writer.out) {
                    Err(Error::Malformed { reason, .. }) if reason.contains("does not fit") => {
                        refused += 1
                    }
                    other => panic!("{} v{version}: not refused: {other:?}", shape.name),
                }
            }
        }
    }
    assert!(refused > 200, "refused {refused}");
}

#[test]
fn a_response_header_cut_short_is_refused() {
    // Metadata v12 (flexible: header v1): a correlation id and no tagged-field count.
    let err = check_response(3, 12, &[0, 0, 0, 42]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Malformed {
                name: "ResponseHeader",
                version: 1,
                ..
            }
        ),
        "{err}"
    );
    // ApiVersions v3 keeps header v0, so its body starts right after the correlation id.
    let mut writer = Writer::new(&responses::API_VERSIONS, 3, 5);
    writer.fields(responses::API_VERSIONS.fields);
    let mut frame = 42i32.to_be_bytes().to_vec();
    frame.extend_from_slice(&writer.out);
    check_response(18, 3, &frame).unwrap();
}

#[test]
fn an_api_without_a_shape_is_refused_by_name() {
    assert_eq!(
        check_response(9999, 0, &[0; 8]),
        Err(Error::NoShape {
            kind: "response",
            api_key: 9999
        })
    );
}

#[test]
fn the_metadata_request_that_aborted_the_broker_is_refused() {
    // Metadata v1 body: topics claims 0x7fffffff entries and nothing follows.
    let err = check_request(3, 1, b"\x7f\xff\xff\xff").unwrap_err();
    assert!(err.to_string().contains("does not fit"), "{err}");
    assert!(err.to_string().starts_with("MetadataRequest v1: "), "{err}");
}
