//! The broker's fuzz targets as plain functions of the input bytes, shared
//! by the AFL++ entry points (`src/bin/fuzz_*.rs`), `replay` and the corpus
//! tests. A target returns normally for any input the broker handles
//! (accepting or rejecting it); a panic, an abort or a hang is a bug.

pub mod batch;
pub mod crc;
pub mod decode;
pub mod journal;
pub mod partition;
pub mod recovery;
pub mod scratch;

/// A target by its name on the command line (`decode`, `batch`, `recovery`, `journal`).
pub fn target(name: &str) -> Option<fn(&[u8])> {
    match name {
        "decode" => Some(decode::run),
        "batch" => Some(batch::run),
        "recovery" => Some(recovery::run),
        "journal" => Some(journal::run),
        _ => None,
    }
}

pub const TARGETS: [&str; 4] = ["decode", "batch", "recovery", "journal"];
