//! Checks every count in a request body against the bytes left in its frame,
//! before anything is decoded.
//!
//! kafka-protocol's decoders reserve a vector from an array's count as read
//! from the wire (`Vec::with_capacity(n)`), so a 23-byte Metadata request
//! claiming 0x7fffffff topics makes the process ask for 150 GB and abort.
//! The walk itself and the request shapes live in `kbench-wire`, shared with
//! the load engine; here is only what the broker does with its answer.

/// Walks `body` (the request after its header) for `api_key` at `version`.
/// `Err` says which count or size does not fit, for the connection's log.
/// APIs without a shape are left to the decoder, which refuses them.
pub fn check(api_key: i16, version: i16, body: &[u8]) -> Result<(), String> {
    match kbench_wire::check_request(api_key, version, body) {
        Err(kbench_wire::Error::NoShape { .. }) => Ok(()),
        // The caller names the API and version already.
        Err(kbench_wire::Error::Malformed { reason, .. }) => Err(reason),
        result => result.map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode_request, Request, VersionTable};
    use bytes::Bytes;
    use kafka_protocol::messages::ApiKey;

    struct All;
    impl VersionTable for All {
        fn supports(&self, api_key: ApiKey, version: i16) -> bool {
            kbench_wire::shapes::requests::by_key(api_key as i16)
                .is_some_and(|s| s.versions.0 <= version && version <= s.versions.1)
        }
    }

    /// Every count and length in a body cut short must be refused here, not
    /// trusted by the decoder: a valid body with one array count raised to
    /// the maximum is refused with a message naming the array.
    #[test]
    fn an_array_count_larger_than_the_frame_is_refused_before_decoding() {
        // Metadata v1 (topics: i32 count) and v9 (compact count): the
        // 23-byte request that aborted the process, and its compact twin.
        let v1 = b"\x00\x03\x00\x01\x00\x00\x00\x4d\x00\x05probe\x7f\xff\xff\xff";
        let v9 = b"\x00\x03\x00\x09\x00\x00\x00\x4d\x00\x05probe\x00\xff\xff\xff\xff\x0f\x00\x00\x00\x00";
        for raw in [&v1[..], &v9[..]] {
            match decode_request(Bytes::copy_from_slice(raw), &All) {
                Err(crate::Error::Malformed(message)) => {
                    assert!(message.contains("does not fit"), "{message}")
                }
                other => panic!("not refused: {other:?}"),
            }
        }
    }

    #[test]
    fn an_api_without_a_shape_is_left_to_the_decoder() {
        assert_eq!(check(9999, 0, b"\x7f\xff\xff\xff"), Ok(()));
    }

    #[test]
    fn the_real_metadata_request_of_a_client_still_decodes() {
        let raw = b"\x00\x03\x00\x01\x00\x00\x00\x02\x00\x07kafkajs\x00\x00\x00\x01\x00\x01t";
        let decoded = decode_request(Bytes::from_static(raw), &All).unwrap();
        assert!(matches!(decoded.body, Request::Metadata(_)));
    }
}
