//! The broker's own figures at `GET /metrics`, in the Prometheus text
//! exposition format 0.0.4: every field of `broker_stats_fields!` (a
//! counter as `kbench_broker_<field>_total`, a gauge as
//! `kbench_broker_<field>`), one sample per node labelled `node="N"`, and
//! the process's CPU seconds and resident memory. `http` serves it.

mod http;
mod process;

pub use http::{MetricsServer, MAX_CONNECTIONS, MAX_HEAD_BYTES};

use crate::error::{Error, Result};
use crate::stats::StatsSnapshot;
use std::fmt::Write;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What one scrape reads: each running node's id and figures.
pub type Collect =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Vec<(i32, StatsSnapshot)>> + Send>> + Send + Sync>;

/// Binds the endpoint's listener; a failure names the option and address.
pub async fn bind(addr: &str) -> Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::InvalidOption {
            name: "metrics",
            message: format!("cannot listen on {addr}: {e}"),
        })
}

/// One field's exposition: its name, type, help and each node's value.
struct Family {
    name: String,
    kind: &'static str,
    help: String,
    values: Vec<(i32, u64)>,
}

macro_rules! families {
    ($($(#[doc = $doc:literal])* $kind:ident $field:ident,)*) => {
        fn families(nodes: &[(i32, StatsSnapshot)]) -> Vec<Family> {
            vec![$(Family {
                name: metric_name(stringify!($kind), stringify!($field)),
                kind: stringify!($kind),
                help: [$($doc),*].join(" "),
                values: nodes.iter().map(|(id, s)| (*id, s.$field)).collect(),
            },)*]
        }
    };
}

crate::broker_stats_fields!(families);

/// `kbench_broker_<field>`, with `_total` on a counter (once).
fn metric_name(kind: &str, field: &str) -> String {
    match (kind, field.ends_with("_total")) {
        ("counter", false) => format!("kbench_broker_{field}_total"),
        _ => format!("kbench_broker_{field}"),
    }
}

/// A HELP text as the format wants it: backslash and newline escaped.
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// The exposition of these nodes' figures and this process's.
pub fn render(nodes: &[(i32, StatsSnapshot)]) -> String {
    let mut out = String::with_capacity(4096);
    for family in families(nodes) {
        let Family {
            name,
            kind,
            help,
            values,
        } = family;
        let _ = writeln!(out, "# HELP {name} {}", escape_help(&help));
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (node, value) in values {
            let _ = writeln!(out, "{name}{{node=\"{node}\"}} {value}");
        }
    }
    let process = process::Figures::read();
    if let Some(seconds) = process.cpu_seconds {
        out.push_str("# HELP process_cpu_seconds_total User and system CPU time of this process, in seconds.\n");
        out.push_str("# TYPE process_cpu_seconds_total counter\n");
        let _ = writeln!(out, "process_cpu_seconds_total {seconds}");
    }
    if let Some(bytes) = process.resident_bytes {
        out.push_str(
            "# HELP process_resident_memory_bytes Resident memory of this process, in bytes.\n",
        );
        out.push_str("# TYPE process_resident_memory_bytes gauge\n");
        let _ = writeln!(out, "process_resident_memory_bytes {bytes}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_end_in_total_once_and_gauges_do_not() {
        assert_eq!(
            metric_name("counter", "bytes_in"),
            "kbench_broker_bytes_in_total"
        );
        assert_eq!(
            metric_name("counter", "fsync_micros_total"),
            "kbench_broker_fsync_micros_total"
        );
        assert_eq!(
            metric_name("gauge", "connections"),
            "kbench_broker_connections"
        );
    }

    #[test]
    fn every_node_gets_a_labelled_sample_of_every_field() {
        let a = StatsSnapshot {
            bytes_in: 7,
            ..StatsSnapshot::default()
        };
        let b = StatsSnapshot {
            connections: 3,
            ..StatsSnapshot::default()
        };
        let text = render(&[(1, a), (2, b)]);
        assert!(text.contains("# TYPE kbench_broker_bytes_in_total counter\n"));
        assert!(text.contains("kbench_broker_bytes_in_total{node=\"1\"} 7\n"));
        assert!(text.contains("kbench_broker_connections{node=\"2\"} 3\n"));
        assert!(text.contains("# TYPE kbench_broker_under_replicated gauge\n"));
        assert!(text.contains("# HELP kbench_broker_connections Open connections right now.\n"));
        assert!(text.contains("# TYPE process_resident_memory_bytes gauge\n"));
    }
}
