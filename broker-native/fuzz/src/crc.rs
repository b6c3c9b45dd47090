//! Lets mutated batches past the CRC-32C check: almost every mutation
//! breaks it, and the code after it would otherwise never see one.

use kbench_broker_core::storage::batch::{HEADER_SIZE, LOG_OVERHEAD};

const CRC_AT: usize = 17;
const ATTRIBUTES_AT: usize = 21;

/// Rewrites the CRC of each whole batch, walking `buf` by batch lengths;
/// stops at the first length that does not fit.
pub fn fix_crcs(buf: &mut [u8]) {
    let mut at = 0usize;
    while buf.len() - at >= HEADER_SIZE {
        let length = i32::from_be_bytes([buf[at + 8], buf[at + 9], buf[at + 10], buf[at + 11]]);
        let Ok(length) = usize::try_from(length) else {
            return;
        };
        let end = at + LOG_OVERHEAD + length;
        if length < HEADER_SIZE - LOG_OVERHEAD || end > buf.len() {
            return;
        }
        let crc = crc32c::crc32c(&buf[at + ATTRIBUTES_AT..end]);
        buf[at + CRC_AT..at + ATTRIBUTES_AT].copy_from_slice(&crc.to_be_bytes());
        at = end;
    }
}
