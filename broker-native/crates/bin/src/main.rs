//! `kbench-broker --port 9092 --data-dir DIR [--host 127.0.0.1] [--node-id 1]`
//!
//! Prints `node <id> <host>:<port> pid <pid>` once listening, then serves
//! until SIGINT or SIGTERM and shuts down cleanly.

use kbench_broker_core::BrokerConfig;
use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "usage: kbench-broker --port PORT --data-dir DIR [--host HOST] [--node-id ID] [--auto-create-topics]";

fn parse_args(args: impl Iterator<Item = String>) -> Result<BrokerConfig, String> {
    let mut port: Option<u16> = None;
    let mut data_dir: Option<String> = None;
    let mut host = "127.0.0.1".to_string();
    let mut node_id = 1i32;
    let mut auto_create = false;
    let mut args = args;
    while let Some(flag) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "--port" => {
                let v = value("--port")?;
                port = Some(
                    v.parse()
                        .map_err(|_| format!("--port: not a port number: {v}"))?,
                );
            }
            "--data-dir" => data_dir = Some(value("--data-dir")?),
            "--host" => host = value("--host")?,
            "--node-id" => {
                let v = value("--node-id")?;
                node_id = v
                    .parse()
                    .ok()
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| format!("--node-id: not a non-negative integer: {v}"))?;
            }
            "--auto-create-topics" => auto_create = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let port = port.ok_or("--port is required")?;
    let data_dir = data_dir.ok_or("--data-dir is required")?;
    let mut config = BrokerConfig::new(data_dir);
    config.host = host;
    config.port = port;
    config.node_id = node_id;
    config.auto_create_topics = auto_create;
    Ok(config)
}

fn main() -> ExitCode {
    let config = match parse_args(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("kbench-broker: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // KBENCH_LOG=error|warn|info|debug|trace (default warn), to stderr.
    let level = std::env::var("KBENCH_LOG")
        .ok()
        .and_then(|v| v.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::WARN);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(level)
        .init();
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    match runtime.block_on(serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kbench-broker: {e}");
            ExitCode::from(1)
        }
    }
}

async fn serve(config: BrokerConfig) -> Result<(), kbench_broker_core::Error> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let broker = kbench_broker_core::start(config).await?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "node {} {}:{} pid {}",
            broker.node_id(),
            broker.host(),
            broker.port(),
            std::process::id()
        )?;
        out.flush()?;
    }
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    broker.stop().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> impl Iterator<Item = String> {
        list.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn parses_all_flags() {
        let config = parse_args(args(&[
            "--port",
            "0",
            "--data-dir",
            "/tmp/x",
            "--host",
            "0.0.0.0",
            "--node-id",
            "3",
        ]))
        .unwrap();
        assert_eq!(
            (config.port, config.node_id, config.host.as_str()),
            (0, 3, "0.0.0.0")
        );
    }

    #[test]
    fn bad_port_names_the_flag() {
        let err = parse_args(args(&["--port", "x", "--data-dir", "/tmp"])).unwrap_err();
        assert!(err.contains("--port"), "{err}");
    }

    #[test]
    fn missing_data_dir_names_the_flag() {
        let err = parse_args(args(&["--port", "1"])).unwrap_err();
        assert!(err.contains("--data-dir"), "{err}");
    }
}
