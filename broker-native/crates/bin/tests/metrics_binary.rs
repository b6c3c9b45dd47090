//! `kbench-broker --metrics 127.0.0.1:0`, spawned as a process: after its node lines it prints
//! `metrics <host>:<port>`, serves the Prometheus exposition there for every node it runs, and a bad
//! `--metrics` value is exit 2 naming the flag.

#[path = "../../broker/tests/prometheus_text/mod.rs"]
mod prometheus_text;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

/// Starts the broker; returns it, its node lines and the metrics address it printed.
fn spawn(extra: &[&str], dir: &std::path::Path) -> (Child, Vec<String>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kbench-broker"))
        .args(["--port", "0", "--data-dir", dir.to_str().unwrap()])
        .args(["--metrics", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut nodes = Vec::new();
    loop {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let line = line.trim().to_string();
        if let Some(addr) = line.strip_prefix("metrics ") {
            return (child, nodes, addr.to_string());
        }
        if !line.starts_with("node ") {
            let _ = child.kill();
            let _ = child.wait();
            panic!("unexpected line {line:?}");
        }
        nodes.push(line);
    }
}

fn scrape(addr: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: kbench\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    body.to_string()
}

fn stop(mut child: Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_lone_broker_prints_its_metrics_address_and_serves_there() {
    let dir = tempfile::tempdir().unwrap();
    let (child, nodes, addr) = spawn(&[], dir.path());
    assert_eq!(nodes.len(), 1);
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let body = scrape(&addr);
    let samples = prometheus_text::parse(&body).unwrap_or_else(|e| panic!("{e}\n{body}"));
    assert_eq!(
        samples["kbench_broker_produce_requests_total{node=\"1\"}"],
        0.0
    );
    assert!(samples["process_resident_memory_bytes"] > 0.0);
    stop(child);
}

#[test]
fn a_cluster_in_one_process_labels_each_node() {
    let dir = tempfile::tempdir().unwrap();
    let (child, nodes, addr) = spawn(&["--nodes", "3"], dir.path());
    assert_eq!(nodes.len(), 3);
    let samples = prometheus_text::parse(&scrape(&addr)).unwrap();
    for node in 1..=3 {
        assert!(samples.contains_key(&format!("kbench_broker_connections{{node=\"{node}\"}}")));
    }
    stop(child);
}

#[test]
fn a_bad_metrics_address_is_exit_2_naming_the_flag() {
    let output = Command::new(env!("CARGO_BIN_EXE_kbench-broker"))
        .args([
            "--port",
            "0",
            "--data-dir",
            "/nonexistent",
            "--metrics",
            "9644",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--metrics") && stderr.contains("HOST:PORT"),
        "{stderr}"
    );
}
