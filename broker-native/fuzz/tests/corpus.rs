//! Every committed seed goes through its target without a panic or an
//! abort, so a broker change that breaks one fails `cargo test` here,
//! without AFL++.

use std::path::Path;

fn replay_corpus(target: &str) {
    let run = kbench_broker_fuzz::target(target).expect("a known target");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("the corpus folder") {
        let path = entry.expect("a corpus entry").path();
        let input = std::fs::read(&path).expect("a seed");
        eprintln!("{target}: {}", path.display());
        run(&input);
        count += 1;
    }
    kbench_broker_fuzz::scratch::remove(target);
    assert!(count > 0, "no seeds in {}", dir.display());
}

#[test]
fn decode_seeds_decode_or_fail_cleanly() {
    replay_corpus("decode");
}

#[test]
fn batch_seeds_validate_or_fail_cleanly() {
    replay_corpus("batch");
}

#[test]
fn recovery_seeds_recover() {
    replay_corpus("recovery");
}

#[test]
fn journal_seeds_replay() {
    replay_corpus("journal");
}
