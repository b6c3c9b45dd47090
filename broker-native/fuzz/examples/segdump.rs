//! `cargo run --release --example segdump -- FILE...`: the flags and the
//! batch headers of `recovery` inputs, for triage.

use kbench_broker_core::storage::batch::{validate, BatchHeader, HEADER_SIZE};
fn main() {
    for path in std::env::args().skip(1) {
        let input = std::fs::read(&path).unwrap();
        let files = kbench_broker_fuzz::recovery::Files::parse(&input);
        println!(
            "{path}: flags {:#04x} base {} interval {} index {}B time {}B log {}B",
            files.flags,
            files.base_offset(),
            files.index_interval(),
            files.index.len(),
            files.time_index.len(),
            files.log.len()
        );
        let log = &files.log;
        let mut at = 0;
        while log.len() - at >= HEADER_SIZE {
            match BatchHeader::parse(&log[at..]) {
                Ok(h) => {
                    let ok = h.size <= log.len() - at && validate(&log[at..at + h.size]).is_ok();
                    println!(
                        "  @{at}: base {} delta {} size {} maxts {} valid {ok}",
                        h.base_offset, h.last_offset_delta, h.size, h.max_timestamp
                    );
                    if h.size > log.len() - at {
                        break;
                    }
                    at += h.size;
                }
                Err(e) => {
                    println!("  @{at}: {e}");
                    break;
                }
            }
        }
    }
}
