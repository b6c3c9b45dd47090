//! Target `decode`: one request frame body (without its 4-byte size), as
//! the server hands it to `codec::decode_request`, against the broker's own
//! table of advertised APIs and versions.

use bytes::Bytes;
use kbench_broker_core::apis::SupportedApis;
use kbench_broker_core::codec::decode_request;
use std::sync::OnceLock;

fn advertised() -> &'static SupportedApis {
    static APIS: OnceLock<SupportedApis> = OnceLock::new();
    APIS.get_or_init(SupportedApis::new)
}

pub fn run(frame: &[u8]) {
    let _ = decode_request(Bytes::copy_from_slice(frame), advertised());
}
