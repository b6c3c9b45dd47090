//! Broker options, with the defaults the design brief names.

use std::path::PathBuf;
use std::time::Duration;

/// When appended bytes are forced to disk (broker-wide; a topic may
/// override it with Kafka's `flush.messages=1` or `flush.ms=N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// Leave it to the page cache, like Kafka's default.
    #[default]
    None,
    /// An append returns once its bytes are on disk (fdatasync), like
    /// Redpanda; concurrent appends to one partition share one fdatasync.
    Batch,
    /// Written bytes reach the disk within this long (a periodic flush of
    /// partitions with unsynced bytes); appends do not wait.
    Interval(Duration),
}

impl FsyncPolicy {
    /// Parses `none`, `batch` or `interval:<ms>` (the scenario's and the
    /// CLI's spelling).
    pub fn parse(text: &str) -> crate::error::Result<FsyncPolicy> {
        let text = text.trim();
        let bad = || crate::error::Error::InvalidOption {
            name: "fsync",
            message: format!("{text:?} is not one of none, batch, interval:<ms>"),
        };
        match text {
            "none" => Ok(FsyncPolicy::None),
            "batch" => Ok(FsyncPolicy::Batch),
            _ => {
                let ms = text.strip_prefix("interval:").ok_or_else(bad)?;
                if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                let ms: u64 = ms.parse().map_err(|_| bad())?;
                Ok(FsyncPolicy::Interval(Duration::from_millis(ms)))
            }
        }
    }
}

impl std::fmt::Display for FsyncPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FsyncPolicy::None => f.write_str("none"),
            FsyncPolicy::Batch => f.write_str("batch"),
            FsyncPolicy::Interval(every) => write!(f, "interval:{}", every.as_millis()),
        }
    }
}

/// Bounds on what requests and connections can make the broker hold: every
/// resource a client can make the broker allocate has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The largest request frame (Kafka's `socket.request.max.bytes`).
    pub max_frame_bytes: usize,
    /// Connections served at once; at the cap a new connection evicts the
    /// longest-idle one, or is closed (Kafka's `max.connections`).
    pub max_connections: usize,
    /// Connections from one client address (Kafka's `max.connections.per.ip`).
    pub max_connections_per_ip: usize,
    /// A connection with no request for this long is closed (Kafka's
    /// `connections.max.idle.ms`).
    pub connections_max_idle: Duration,
    /// A frame whose first byte has arrived must be whole within this long
    /// (slow or stalled senders are closed).
    pub frame_timeout: Duration,
    /// Bytes of request frames being received or handled, across every
    /// connection (Kafka's `queued.max.request.bytes`): a frame's bytes are
    /// read only as this budget allows.
    pub queued_max_request_bytes: usize,
    /// Partitions of one topic (CreateTopics, CreatePartitions).
    pub max_partitions_per_topic: i32,
    /// Partitions this node hosts, all topics together.
    pub max_partitions: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_ip: DEFAULT_MAX_CONNECTIONS_PER_IP,
            connections_max_idle: DEFAULT_CONNECTIONS_MAX_IDLE,
            frame_timeout: DEFAULT_FRAME_TIMEOUT,
            queued_max_request_bytes: DEFAULT_QUEUED_MAX_REQUEST_BYTES,
            max_partitions_per_topic: DEFAULT_MAX_PARTITIONS_PER_TOPIC,
            max_partitions: DEFAULT_MAX_PARTITIONS,
        }
    }
}

impl Limits {
    /// The option names, as `kbench-broker` flags take them (without `--`)
    /// and as `set` accepts them.
    pub const NAMES: [&'static str; 8] = [
        "max-frame-bytes",
        "max-connections",
        "max-connections-per-ip",
        "connections-max-idle-ms",
        "frame-timeout-ms",
        "queued-max-request-bytes",
        "max-partitions-per-topic",
        "max-partitions",
    ];

    /// Sets the limit called `name` (one of [`Limits::NAMES`]) to `value`, a
    /// positive whole number. `Ok(false)` if `name` is not a limit.
    pub fn set(&mut self, name: &str, value: &str) -> std::result::Result<bool, String> {
        let n: u64 = value
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("--{name}: not a positive integer: {value}"))?;
        let size = |n: u64| usize::try_from(n).map_err(|_| format!("--{name}: too large: {n}"));
        match name {
            "max-frame-bytes" => self.max_frame_bytes = size(n)?,
            "max-connections" => self.max_connections = size(n)?,
            "max-connections-per-ip" => self.max_connections_per_ip = size(n)?,
            "connections-max-idle-ms" => self.connections_max_idle = Duration::from_millis(n),
            "frame-timeout-ms" => self.frame_timeout = Duration::from_millis(n),
            "queued-max-request-bytes" => self.queued_max_request_bytes = size(n)?,
            "max-partitions-per-topic" => {
                self.max_partitions_per_topic = i32::try_from(n)
                    .map_err(|_| format!("--{name}: at most {} (got {n})", i32::MAX))?
            }
            "max-partitions" => self.max_partitions = size(n)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Refuses limits that cannot work together, naming the option.
    pub fn check(&self) -> crate::error::Result<()> {
        let bad = |name: &'static str, message: String| {
            Err(crate::error::Error::InvalidOption { name, message })
        };
        if self.max_frame_bytes < 1024 || self.max_frame_bytes > i32::MAX as usize {
            return bad("max-frame-bytes", "must be between 1 KiB and 2 GiB".into());
        }
        if self.queued_max_request_bytes < self.max_frame_bytes {
            return bad(
                "queued-max-request-bytes",
                format!(
                    "must be at least max-frame-bytes ({}), or no frame of that size could be read",
                    self.max_frame_bytes
                ),
            );
        }
        if self.queued_max_request_bytes > 1 << 40 {
            return bad("queued-max-request-bytes", "must be at most 1 TiB".into());
        }
        if self.max_connections == 0 || self.max_connections_per_ip == 0 {
            return bad("max-connections", "must be at least 1".into());
        }
        if self.frame_timeout.is_zero() || self.connections_max_idle.is_zero() {
            return bad("frame-timeout-ms", "timeouts must be above 0 ms".into());
        }
        if self.max_partitions_per_topic < 1 || self.max_partitions < 1 {
            return bad("max-partitions", "must be at least 1".into());
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct BrokerConfig {
    pub data_dir: PathBuf,
    pub host: String,
    /// 0 picks an ephemeral port.
    pub port: u16,
    pub node_id: i32,
    pub auto_create_topics: bool,
    /// Partitions for CreateTopics with -1 and for auto-created topics.
    pub default_partitions: i32,
    pub segment_bytes: u64,
    /// What one client, or many, may make the broker hold.
    pub limits: Limits,
    pub fsync: FsyncPolicy,
    pub cluster_id: String,
    /// How often retention (retention.ms / retention.bytes) is enforced.
    pub retention_check_interval: Duration,
    /// TLS and SASL on the client listener (none: PLAINTEXT).
    pub security: Security,
    /// `HOST:PORT` to serve `GET /metrics` on (Prometheus text); none: off.
    pub metrics: Option<String>,
}

/// The client listener's security: TLS (SSL), SASL, both (SASL_SSL) or
/// neither (PLAINTEXT), as Kafka's `security.protocol` names them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Security {
    pub tls: Option<TlsFiles>,
    pub sasl: Option<SaslUsers>,
}

/// PEM files for a TLS listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server's certificate chain, leaf first.
    pub cert: PathBuf,
    /// Its private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// With a CA, every client must present a certificate it signed
    /// (mutual TLS, Kafka's `ssl.client.auth=required`).
    pub client_ca: Option<PathBuf>,
}

/// SASL mechanisms a listener offers and the users it knows.
#[derive(Clone, PartialEq, Eq)]
pub struct SaslUsers {
    pub mechanisms: Vec<SaslMechanism>,
    /// (name, password) pairs; kept only until the listener salts them.
    pub users: Vec<(String, String)>,
}

impl std::fmt::Debug for SaslUsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.users.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("SaslUsers")
            .field("mechanisms", &self.mechanisms)
            .field("users", &names)
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaslMechanism {
    Plain,
    ScramSha256,
    ScramSha512,
}

impl SaslMechanism {
    pub const ALL: [SaslMechanism; 3] = [
        SaslMechanism::Plain,
        SaslMechanism::ScramSha256,
        SaslMechanism::ScramSha512,
    ];

    /// The name SaslHandshake carries (`PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`).
    pub fn name(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    /// Parses a mechanism name in any case (`scram-sha-512`, `PLAIN`).
    pub fn parse(text: &str) -> crate::error::Result<SaslMechanism> {
        SaslMechanism::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| crate::error::Error::InvalidOption {
                name: "sasl",
                message: format!("{text:?} is not one of plain, scram-sha-256, scram-sha-512"),
            })
    }
}

impl Security {
    /// Kafka's name for this listener's protocol.
    pub fn protocol(&self) -> &'static str {
        match (self.tls.is_some(), self.sasl.is_some()) {
            (false, false) => "PLAINTEXT",
            (true, false) => "SSL",
            (false, true) => "SASL_PLAINTEXT",
            (true, true) => "SASL_SSL",
        }
    }

    /// Parses `name:password` (the password may hold colons).
    pub fn parse_user(text: &str) -> crate::error::Result<(String, String)> {
        match text.split_once(':') {
            Some((name, password)) if !name.is_empty() && !password.is_empty() => {
                Ok((name.to_string(), password.to_string()))
            }
            _ => Err(crate::error::Error::InvalidOption {
                name: "user",
                message: "expected NAME:PASSWORD, both non-empty".into(),
            }),
        }
    }
}

pub const DEFAULT_MAX_FRAME_BYTES: usize = 100 * 1024 * 1024;
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 1024;
pub const DEFAULT_CONNECTIONS_MAX_IDLE: Duration = Duration::from_secs(600);
pub const DEFAULT_FRAME_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_QUEUED_MAX_REQUEST_BYTES: usize = 512 * 1024 * 1024;
pub const DEFAULT_MAX_PARTITIONS_PER_TOPIC: i32 = 10_000;
pub const DEFAULT_MAX_PARTITIONS: usize = 150_000;
pub const DEFAULT_SEGMENT_BYTES: u64 = 1024 * 1024 * 1024;
/// How often the broker checks retention unless configured otherwise.
pub const DEFAULT_RETENTION_CHECK_INTERVAL: Duration = Duration::from_secs(30);

impl BrokerConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        BrokerConfig {
            data_dir: data_dir.into(),
            host: "127.0.0.1".to_string(),
            port: 0,
            node_id: 1,
            auto_create_topics: false,
            default_partitions: 1,
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            limits: Limits::default(),
            fsync: FsyncPolicy::None,
            cluster_id: "kbench-cluster".to_string(),
            retention_check_interval: DEFAULT_RETENTION_CHECK_INTERVAL,
            security: Security::default(),
            metrics: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsync_policies_parse_and_print_back() {
        for text in ["none", "batch", "interval:250", "interval:0"] {
            assert_eq!(FsyncPolicy::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            FsyncPolicy::parse("interval:5").unwrap(),
            FsyncPolicy::Interval(Duration::from_millis(5))
        );
    }

    #[test]
    fn a_bad_fsync_policy_names_the_allowed_values() {
        for text in [
            "",
            "always",
            "interval:",
            "interval:-1",
            "interval:1s",
            "batch:2",
        ] {
            let message = FsyncPolicy::parse(text).unwrap_err().to_string();
            assert!(
                message.contains("none, batch, interval:<ms>"),
                "{text}: {message}"
            );
        }
    }
}
