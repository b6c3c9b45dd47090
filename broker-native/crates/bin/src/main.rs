//! `kbench-broker --port 9092 --data-dir DIR [--host 127.0.0.1] [--node-id 1] [--no-auto-create-topics]
//!  [--fsync none|batch|interval:<ms>] [--nodes N | --cluster-dir DIR]`
//!
//! - Alone: one broker.
//! - `--nodes N`: a cluster of N nodes in this process; node i listens on
//!   PORT+i-1 with its data under DIR/node-i.
//! - `--cluster-dir DIR`: this process is node `--node-id` of a cluster
//!   whose nodes share DIR (one process per node; see `kbench broker
//!   --processes`).
//!
//! Limits (see docs/broker.md): `--max-frame-bytes N --max-connections N
//! --max-connections-per-ip N --connections-max-idle-ms MS --frame-timeout-ms MS
//! --queued-max-request-bytes N --max-partitions-per-topic N --max-partitions N`.
//!
//! Security (one client listener per node; docs/broker.md): `--tls-cert FILE --tls-key FILE
//! [--tls-ca FILE]` (PEM; with a CA, clients must present a certificate it signed), `--sasl
//! plain|scram-sha-256|scram-sha-512[,...] --user NAME:PASSWORD` (repeatable). The listener is then
//! SSL, SASL_PLAINTEXT or SASL_SSL; cluster nodes replicate over a plaintext port of their own.
//!
//! Metrics: `--metrics HOST:PORT` (off by default; say 127.0.0.1:PORT) serves `GET /metrics` in the
//! Prometheus text format: every node of this process, labelled `node="N"` (docs/broker.md).
//!
//! Prints `node <id> <host>:<port> pid <pid>` per node once listening (then `metrics <host>:<port>`
//! with `--metrics`), then serves until SIGINT or SIGTERM and shuts down cleanly.

use kbench_broker_core::cluster::ClusterOptions;
use kbench_broker_core::launcher::{Cluster, ClusterSpec};
use kbench_broker_core::{
    BrokerConfig, FsyncPolicy, Limits, SaslMechanism, SaslUsers, Security, TlsFiles,
};
use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "usage: kbench-broker --port PORT --data-dir DIR [--host HOST] [--node-id ID] [--no-auto-create-topics]
       [--fsync none|batch|interval:<ms>] [--nodes N | --cluster-dir DIR]
       [--session-timeout-ms MS] [--replica-lag-ms MS]
       [--max-frame-bytes N] [--max-connections N] [--max-connections-per-ip N]
       [--connections-max-idle-ms MS] [--frame-timeout-ms MS] [--queued-max-request-bytes N]
       [--max-partitions-per-topic N] [--max-partitions N]
       [--tls-cert FILE --tls-key FILE [--tls-ca FILE]]
       [--sasl plain|scram-sha-256|scram-sha-512[,...] --user NAME:PASSWORD...]
       [--metrics HOST:PORT]";

/// `--help`: the usage, then what the flags do (docs/broker.md has the rest).
const HELP: &str = "
Runs the bundled Kafka-wire broker until SIGINT or SIGTERM. Once listening it prints one line per
node, `node <id> <host>:<port> pid <pid>` (then `metrics <host>:<port>` with --metrics).

  --port PORT            client listener (0: any free port); node i of --nodes N listens on PORT+i-1
  --data-dir DIR         where the log lives (DIR/node-i for each node of --nodes N)
  --host HOST            address to bind and advertise (default 127.0.0.1)
  --fsync POLICY         none (page cache, the default), batch (on disk before each ack: one
                         journal write for everything appended meanwhile), interval:<ms>
  --nodes N              a cluster of N nodes in this process
  --cluster-dir DIR      this process is node --node-id of a cluster whose nodes share DIR
  --no-auto-create-topics  a topic a Metadata request names is not created on first use
  --tls-cert/--tls-key/--tls-ca, --sasl, --user   TLS and SASL on the client listener
  --metrics HOST:PORT    Prometheus text at GET /metrics (off by default)
  limits: --max-frame-bytes, --max-connections, --max-connections-per-ip,
          --connections-max-idle-ms, --frame-timeout-ms, --queued-max-request-bytes,
          --max-partitions-per-topic, --max-partitions

Exit status: 0 after a clean shutdown, 1 when it cannot serve, 2 on a usage error.
Environment: KBENCH_LOG=error|warn|info|debug|trace (default warn), logs to stderr.";

#[derive(Debug)]
struct Options {
    config: BrokerConfig,
    /// Nodes to run in this process (1: a lone broker unless `cluster_dir`).
    nodes: usize,
    cluster_dir: Option<String>,
    session_timeout_ms: i64,
    replica_lag_ms: i64,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut port: Option<u16> = None;
    let mut data_dir: Option<String> = None;
    let mut host = "127.0.0.1".to_string();
    let mut node_id = 1i32;
    // Kafka's auto.create.topics.enable defaults to true; so does the binary.
    let mut auto_create = true;
    let mut fsync = FsyncPolicy::None;
    let mut nodes = 1usize;
    let mut cluster_dir = None;
    let mut session_timeout_ms = kbench_broker_core::cluster::node::DEFAULT_SESSION_TIMEOUT_MS;
    let mut replica_lag_ms = kbench_broker_core::cluster::node::DEFAULT_REPLICA_LAG_MS;
    let mut limits = Limits::default();
    let (mut tls_cert, mut tls_key, mut tls_ca) = (None, None, None);
    let mut mechanisms: Vec<SaslMechanism> = Vec::new();
    let mut users = Vec::new();
    let mut config_metrics = None;
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
            "--no-auto-create-topics" => auto_create = false,
            "--fsync" => {
                let v = value("--fsync")?;
                fsync = FsyncPolicy::parse(&v).map_err(|e| format!("--fsync: {e}"))?;
            }
            "--nodes" => {
                let v = value("--nodes")?;
                nodes = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=9).contains(n))
                    .ok_or_else(|| format!("--nodes: must be 1 to 9 (got {v})"))?;
            }
            "--cluster-dir" => cluster_dir = Some(value("--cluster-dir")?),
            "--session-timeout-ms" => {
                let v = value("--session-timeout-ms")?;
                session_timeout_ms =
                    v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("--session-timeout-ms: not a positive integer: {v}")
                    })?;
            }
            "--replica-lag-ms" => {
                let v = value("--replica-lag-ms")?;
                replica_lag_ms = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--replica-lag-ms: not a positive integer: {v}"))?;
            }
            "--tls-cert" => tls_cert = Some(value("--tls-cert")?.into()),
            "--tls-key" => tls_key = Some(value("--tls-key")?.into()),
            "--tls-ca" => tls_ca = Some(value("--tls-ca")?.into()),
            "--sasl" => {
                for name in value("--sasl")?.split(',') {
                    let mechanism =
                        SaslMechanism::parse(name).map_err(|e| format!("--sasl: {e}"))?;
                    if !mechanisms.contains(&mechanism) {
                        mechanisms.push(mechanism);
                    }
                }
            }
            "--metrics" => config_metrics = Some(metrics_address(&value("--metrics")?)?),
            "--user" => {
                let user =
                    Security::parse_user(&value("--user")?).map_err(|e| format!("--user: {e}"))?;
                users.push(user);
            }
            other => {
                let name = other.strip_prefix("--").unwrap_or(other);
                if !Limits::NAMES.contains(&name) {
                    return Err(format!("unknown argument {other}"));
                }
                let v = value(other)?;
                limits.set(name, &v)?;
            }
        }
    }
    let port = port.ok_or("--port is required")?;
    let data_dir = data_dir.ok_or("--data-dir is required")?;
    let mut config = BrokerConfig::new(data_dir);
    config.host = host;
    config.port = port;
    config.node_id = node_id;
    config.auto_create_topics = auto_create;
    config.fsync = fsync;
    config.metrics = config_metrics;
    limits.check().map_err(|e| e.to_string())?;
    config.limits = limits;
    config.security.tls = match (tls_cert, tls_key) {
        (Some(cert), Some(key)) => Some(TlsFiles {
            cert,
            key,
            client_ca: tls_ca,
        }),
        (None, None) if tls_ca.is_none() => None,
        _ => return Err("--tls-cert and --tls-key go together (and --tls-ca needs both)".into()),
    };
    config.security.sasl = match (mechanisms.is_empty(), users.is_empty()) {
        (true, true) => None,
        (false, false) => Some(SaslUsers { mechanisms, users }),
        (true, false) => return Err("--user needs --sasl MECHANISM".into()),
        (false, true) => return Err("--sasl needs at least one --user NAME:PASSWORD".into()),
    };
    if nodes > 1 && cluster_dir.is_some() {
        return Err("--nodes and --cluster-dir do not go together".into());
    }
    Ok(Options {
        config,
        nodes,
        cluster_dir,
        session_timeout_ms,
        replica_lag_ms,
    })
}

/// `HOST:PORT` for `--metrics`, checked before anything binds.
fn metrics_address(value: &str) -> Result<String, String> {
    let bad = || format!("--metrics: expected HOST:PORT, such as 127.0.0.1:9644 (got {value:?})");
    let (host, port) = value.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(bad());
    }
    Ok(value.to_string())
}

fn main() -> ExitCode {
    if std::env::args()
        .skip(1)
        .any(|arg| arg == "--help" || arg == "-h")
    {
        // Into a pipe that closed early (`| head`), not a panic.
        let _ = writeln!(std::io::stdout(), "{USAGE}\n{HELP}");
        return ExitCode::SUCCESS;
    }
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(options) => options,
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
    match runtime.block_on(serve(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kbench-broker: {e}");
            ExitCode::from(1)
        }
    }
}

fn announce(id: i32, host: &str, port: u16) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "node {id} {host}:{port} pid {}", std::process::id())?;
    out.flush()
}

fn announce_metrics(addr: Option<std::net::SocketAddr>) -> std::io::Result<()> {
    let Some(addr) = addr else { return Ok(()) };
    let mut out = std::io::stdout().lock();
    writeln!(out, "metrics {addr}")?;
    out.flush()
}

async fn serve(options: Options) -> Result<(), kbench_broker_core::Error> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let stopped = async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
    };
    if options.nodes > 1 {
        let mut spec = ClusterSpec::new(options.nodes, &options.config.data_dir);
        spec.host = options.config.host.clone();
        spec.base_port = options.config.port;
        spec.fsync = options.config.fsync;
        spec.session_timeout_ms = options.session_timeout_ms;
        spec.replica_lag_ms = options.replica_lag_ms;
        spec.auto_create_topics = options.config.auto_create_topics;
        spec.limits = options.config.limits.clone();
        spec.security = options.config.security.clone();
        spec.metrics = options.config.metrics.clone();
        let cluster = Cluster::start(spec).await?;
        for (id, host, port) in cluster.nodes() {
            announce(id, &host, port)?;
        }
        announce_metrics(cluster.metrics_addr())?;
        stopped.await;
        return cluster.stop().await;
    }
    let cluster = options.cluster_dir.map(|dir| ClusterOptions {
        dir: dir.into(),
        session_timeout_ms: options.session_timeout_ms,
        replica_lag_ms: options.replica_lag_ms,
    });
    let broker = kbench_broker_core::start_with(
        options.config,
        cluster,
        kbench_broker_core::BrokerParts::default(),
    )
    .await?;
    announce(broker.node_id(), broker.host(), broker.port())?;
    announce_metrics(broker.metrics_addr())?;
    stopped.await;
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
    fn parses_security_flags() {
        let options = parse_args(args(&[
            "--port",
            "1",
            "--data-dir",
            "/t",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
            "--tls-ca",
            "ca.pem",
            "--sasl",
            "scram-sha-512,PLAIN",
            "--user",
            "alice:a:b",
            "--user",
            "bob:pw",
        ]))
        .unwrap();
        let security = &options.config.security;
        assert_eq!(security.protocol(), "SASL_SSL");
        let sasl = security.sasl.as_ref().unwrap();
        assert_eq!(
            sasl.mechanisms,
            [SaslMechanism::ScramSha512, SaslMechanism::Plain]
        );
        assert_eq!(sasl.users[0], ("alice".into(), "a:b".into()));
        assert_eq!(
            security.tls.as_ref().unwrap().client_ca.as_deref(),
            Some(std::path::Path::new("ca.pem"))
        );
    }

    #[test]
    fn security_flags_that_do_not_go_together_are_refused() {
        let base = ["--port", "1", "--data-dir", "/t"];
        for (extra, expected) in [
            (&["--tls-cert", "c.pem"][..], "--tls-key"),
            (&["--tls-ca", "ca.pem"][..], "--tls-ca"),
            (&["--sasl", "plain"][..], "--user"),
            (&["--user", "a:b"][..], "--sasl"),
            (&["--sasl", "gssapi", "--user", "a:b"][..], "scram-sha-512"),
            (
                &["--sasl", "plain", "--user", "nopassword"][..],
                "NAME:PASSWORD",
            ),
        ] {
            let all: Vec<&str> = base.iter().chain(extra).copied().collect();
            let err = parse_args(args(&all)).unwrap_err();
            assert!(err.contains(expected), "{extra:?}: {err}");
        }
    }

    #[test]
    fn parses_metrics_and_names_a_bad_address() {
        let options = parse_args(args(&[
            "--port",
            "1",
            "--data-dir",
            "/t",
            "--metrics",
            "127.0.0.1:0",
        ]))
        .unwrap();
        assert_eq!(options.config.metrics.as_deref(), Some("127.0.0.1:0"));
        for bad in ["9644", ":9644", "127.0.0.1:http", "127.0.0.1:70000"] {
            let err = parse_args(args(&["--port", "1", "--data-dir", "/t", "--metrics", bad]))
                .unwrap_err();
            assert!(
                err.contains("--metrics") && err.contains("HOST:PORT"),
                "{bad}: {err}"
            );
        }
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
        let config = &config.config;
        assert_eq!(
            (config.port, config.node_id, config.host.as_str()),
            (0, 3, "0.0.0.0")
        );
    }

    #[test]
    fn parses_cluster_flags() {
        let options = parse_args(args(&[
            "--port",
            "9092",
            "--data-dir",
            "/tmp/x",
            "--nodes",
            "3",
            "--fsync",
            "interval:50",
        ]))
        .unwrap();
        assert_eq!(options.nodes, 3);
        assert_eq!(
            options.config.fsync,
            FsyncPolicy::Interval(std::time::Duration::from_millis(50))
        );
        let err =
            parse_args(args(&["--port", "1", "--data-dir", "/t", "--nodes", "12"])).unwrap_err();
        assert!(err.contains("--nodes"), "{err}");
        let err = parse_args(args(&[
            "--port",
            "1",
            "--data-dir",
            "/t",
            "--fsync",
            "often",
        ]))
        .unwrap_err();
        assert!(err.contains("--fsync"), "{err}");
    }

    #[test]
    fn parses_limits_and_names_a_bad_one() {
        let options = parse_args(args(&[
            "--port",
            "1",
            "--data-dir",
            "/t",
            "--max-partitions",
            "500",
            "--frame-timeout-ms",
            "250",
        ]))
        .unwrap();
        assert_eq!(options.config.limits.max_partitions, 500);
        assert_eq!(
            options.config.limits.frame_timeout,
            std::time::Duration::from_millis(250)
        );
        for (flag, value) in [
            ("--max-connections", "0"),
            ("--max-partitions-per-topic", "-3"),
            ("--max-frame-bytes", "lots"),
        ] {
            let err =
                parse_args(args(&["--port", "1", "--data-dir", "/t", flag, value])).unwrap_err();
            assert!(err.contains(flag), "{flag}: {err}");
        }
        let err = parse_args(args(&[
            "--port",
            "1",
            "--data-dir",
            "/t",
            "--queued-max-request-bytes",
            "2048",
        ]))
        .unwrap_err();
        assert!(err.contains("queued-max-request-bytes"), "{err}");
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
