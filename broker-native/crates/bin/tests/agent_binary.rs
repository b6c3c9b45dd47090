//! The standalone `kbench-agent`, spawned as a process as a load machine runs it: it prints where
//! it listens, serves hello and time over TCP, and exits 0 on SIGTERM; usage errors exit 2 naming
//! the flag, an address in use exits 1 with one line.

#[path = "../../agent/tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::{Controller, TOKEN};
use serde_json::json;

fn agent(args: &[&str], token: Option<&str>) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kbench-agent"));
    command.args(args).env_remove("KBENCH_AGENT_TOKEN");
    if let Some(token) = token {
        command.env("KBENCH_AGENT_TOKEN", token);
    }
    command
}

/// Starts it listening on a free port; returns the child and the address it printed.
fn spawn(args: &[&str]) -> (Child, String) {
    let mut child = agent(args, Some(TOKEN))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line
        .trim()
        .strip_prefix("kbench agent loader-x listening on ")
        .and_then(|rest| rest.strip_suffix(" (protocol 1)"))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (child, address)
}

fn terminate(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn serves_hello_and_time_and_exits_0_on_sigterm() {
    let (mut child, address) = spawn(&["--listen", "127.0.0.1:0", "--name", "loader-x"]);
    let mut c = Controller::connect(address.as_str()).await;
    let hello = c.hello(TOKEN).await;
    assert_eq!(hello["ok"], true, "{hello}");
    assert_eq!(hello["agent"]["name"], "loader-x");
    let time = c.call(json!({ "op": "time" })).await;
    assert!(time["micros"].as_f64().unwrap() > 0.0, "{time}");
    terminate(&child);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(c.closed().await);
}

#[test]
fn usage_errors_exit_2_naming_the_flag() {
    for (args, token, flag) in [
        (&["--listen", "127.0.0.1:0"][..], None, "--token-file"),
        (&["--allow", "kafka"][..], Some(TOKEN), "--allow"),
        (&["--listen", "nowhere"][..], Some(TOKEN), "--listen"),
        (
            &[
                "--listen",
                "127.0.0.1:0",
                "--tls-cert",
                "/nonexistent.pem",
                "--tls-key",
                "/k",
            ][..],
            Some(TOKEN),
            "--tls-cert",
        ),
    ] {
        let out = agent(args, token).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("kbench-agent: ") && first.contains(flag),
            "{stderr}"
        );
    }
    let help = agent(&["--help"], None).output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--listen 0.0.0.0:7755"));
}

#[test]
fn a_port_in_use_exits_1_with_one_line() {
    let (mut first, address) = spawn(&["--listen", "127.0.0.1:0", "--name", "loader-x"]);
    let out = agent(&["--listen", &address], Some(TOKEN))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("kbench-agent: cannot listen on {address}: ")),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    terminate(&first);
    assert_eq!(first.wait().unwrap().code(), Some(0));
}
