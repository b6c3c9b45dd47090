//! `kbench-broker --help`, spawned as a process: the usage and what the flags do on stdout, exit 0,
//! before anything is checked or bound; a flag it does not know is exit 2 with the usage on stderr.

use std::process::Command;

#[test]
fn help_prints_the_usage_and_the_flags_and_exits_0() {
    for flag in ["--help", "-h"] {
        // --help wins over anything else given, even flags that would fail.
        let out = Command::new(env!("CARGO_BIN_EXE_kbench-broker"))
            .args(["--port", "not-a-port", flag])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{flag}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.starts_with("usage: kbench-broker --port PORT --data-dir DIR"),
            "{text}"
        );
        for line in [
            "--fsync POLICY",
            "batch (on disk before each ack",
            "Exit status: 0",
        ] {
            assert!(text.contains(line), "{flag}: no {line:?} in {text}");
        }
        assert!(out.stderr.is_empty());
    }
}

#[test]
fn an_unknown_flag_is_exit_2_with_the_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_kbench-broker"))
        .args([
            "--port",
            "0",
            "--data-dir",
            "/nonexistent",
            "--fsycn",
            "batch",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("kbench-broker: unknown argument --fsycn\nusage:"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
