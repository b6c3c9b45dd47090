//! `replay TARGET FILE...`: runs each file through a target without AFL,
//! so a crash shows its panic message and backtrace (or the allocator's
//! abort). Prints each file's name first.

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_default();
    let Some(target) = kbench_broker_fuzz::target(&name) else {
        eprintln!(
            "usage: replay {} FILE...",
            kbench_broker_fuzz::TARGETS.join("|")
        );
        std::process::exit(2);
    };
    for path in args {
        let input = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
        eprintln!("{name}: {path} ({} bytes)", input.len());
        target(&input);
    }
    kbench_broker_fuzz::scratch::remove(&name);
}
