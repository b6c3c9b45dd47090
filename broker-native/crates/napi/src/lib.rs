//! Thin napi-rs binding over `kbench-broker-core` and `kbench-loadgen`: convert at the edge,
//! call the core, no broker logic here.

// napi-derive registers the exports only outside `cargo test`, where they read as unused.
#![cfg_attr(test, allow(dead_code))]

mod agent;
mod cluster;
mod loadgen;
mod throwaway_tls;

use kbench_broker_core::{
    BrokerConfig, Limits, SaslMechanism, SaslUsers, Security, StatsSnapshot, TlsFiles,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;

#[napi(object, js_name = "BrokerOptions")]
pub struct BindingBrokerOptions {
    pub data_dir: String,
    /// 0 or absent picks an ephemeral port.
    pub port: Option<u32>,
    /// Defaults to 127.0.0.1.
    pub host: Option<String>,
    /// Defaults to 1.
    pub node_id: Option<i32>,
    /// Create unknown topics on Metadata requests; defaults to false.
    pub auto_create_topics: Option<bool>,
    /// What clients may make the broker hold; each absent field keeps its default.
    pub limits: Option<BrokerLimits>,
    /// TLS and SASL on the listener; absent: PLAINTEXT.
    pub security: Option<BrokerSecurity>,
    /// `HOST:PORT` to serve `GET /metrics` on (Prometheus text; port 0 picks one); absent: off.
    pub metrics: Option<String>,
}

/// The listener's TLS and SASL, the `kbench-broker` flags of the same names.
#[napi(object)]
pub struct BrokerSecurity {
    /// PEM certificate chain and key: the listener speaks TLS.
    pub tls_cert: Option<String>,
    pub tls_key: Option<String>,
    /// PEM CA: clients must present a certificate it signed (mutual TLS).
    pub tls_ca: Option<String>,
    /// `plain`, `scram-sha-256`, `scram-sha-512` (any case): the listener asks for SASL.
    pub sasl_mechanisms: Option<Vec<String>>,
    /// `NAME:PASSWORD` pairs.
    pub users: Option<Vec<String>>,
}

impl BrokerSecurity {
    pub(crate) fn resolve(options: Option<BrokerSecurity>) -> Result<Security> {
        let Some(o) = options else {
            return Ok(Security::default());
        };
        let invalid = |message: String| Error::new(Status::InvalidArg, message);
        let tls = match (o.tls_cert, o.tls_key) {
            (Some(cert), Some(key)) => Some(TlsFiles {
                cert: cert.into(),
                key: key.into(),
                client_ca: o.tls_ca.map(Into::into),
            }),
            (None, None) if o.tls_ca.is_none() => None,
            _ => return Err(invalid("security: tlsCert and tlsKey go together".into())),
        };
        let mechanisms = o
            .sasl_mechanisms
            .unwrap_or_default()
            .iter()
            .map(|m| SaslMechanism::parse(m).map_err(|e| invalid(e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        let users = o
            .users
            .unwrap_or_default()
            .iter()
            .map(|u| Security::parse_user(u).map_err(|e| invalid(e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        let sasl = match (mechanisms.is_empty(), users.is_empty()) {
            (true, true) => None,
            (false, false) => Some(SaslUsers { mechanisms, users }),
            _ => {
                return Err(invalid(
                    "security: saslMechanisms and users go together".into(),
                ))
            }
        };
        Ok(Security { tls, sasl })
    }
}

/// The broker's limits (docs/broker.md), the `kbench-broker` flags of the same names.
#[napi(object)]
pub struct BrokerLimits {
    pub max_frame_bytes: Option<f64>,
    pub max_connections: Option<f64>,
    pub max_connections_per_ip: Option<f64>,
    pub connections_max_idle_ms: Option<f64>,
    pub frame_timeout_ms: Option<f64>,
    pub queued_max_request_bytes: Option<f64>,
    pub max_partitions_per_topic: Option<f64>,
    pub max_partitions: Option<f64>,
}

impl BrokerLimits {
    /// The limits with these fields set, checked together.
    pub(crate) fn resolve(options: Option<BrokerLimits>) -> Result<Limits> {
        let mut limits = Limits::default();
        let Some(o) = options else {
            return Ok(limits);
        };
        let fields = [
            o.max_frame_bytes,
            o.max_connections,
            o.max_connections_per_ip,
            o.connections_max_idle_ms,
            o.frame_timeout_ms,
            o.queued_max_request_bytes,
            o.max_partitions_per_topic,
            o.max_partitions,
        ];
        for (name, value) in Limits::NAMES.iter().zip(fields) {
            if let Some(value) = value {
                limits
                    .set(name, &format!("{value}"))
                    .map_err(|e| Error::new(Status::InvalidArg, e))?;
            }
        }
        limits
            .check()
            .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
        Ok(limits)
    }
}

/// `BrokerStats` in JS, one number per field of `StatsSnapshot`: both come
/// from `broker_stats_fields!`, the one list of the fields and their docs.
macro_rules! binding_broker_stats {
    ($($(#[doc = $doc:literal])* $kind:ident $field:ident,)*) => {
        #[napi(object, js_name = "BrokerStats")]
        pub struct BindingBrokerStats {
            $($(#[doc = $doc])* pub $field: f64,)*
        }

        impl From<StatsSnapshot> for BindingBrokerStats {
            fn from(s: StatsSnapshot) -> Self {
                BindingBrokerStats {
                    $($field: s.$field as f64,)*
                }
            }
        }
    };
}

kbench_broker_core::broker_stats_fields!(binding_broker_stats);

impl TryFrom<BindingBrokerOptions> for BrokerConfig {
    type Error = Error;

    fn try_from(options: BindingBrokerOptions) -> Result<Self> {
        let mut config = BrokerConfig::new(options.data_dir);
        if let Some(port) = options.port {
            config.port = u16::try_from(port).map_err(|_| {
                Error::new(Status::InvalidArg, format!("port {port} is out of range"))
            })?;
        }
        if let Some(host) = options.host {
            config.host = host;
        }
        if let Some(node_id) = options.node_id {
            config.node_id = node_id;
        }
        if let Some(auto) = options.auto_create_topics {
            config.auto_create_topics = auto;
        }
        config.limits = BrokerLimits::resolve(options.limits)?;
        config.security = BrokerSecurity::resolve(options.security)?;
        config.metrics = options.metrics;
        Ok(config)
    }
}

/// A running broker.
#[napi(js_name = "BrokerHandle")]
pub struct BindingBrokerHandle {
    inner: kbench_broker_core::BrokerHandle,
}

#[napi]
impl BindingBrokerHandle {
    #[napi(getter)]
    pub fn port(&self) -> u32 {
        u32::from(self.inner.port())
    }

    #[napi(getter)]
    pub fn host(&self) -> String {
        self.inner.host().to_string()
    }

    #[napi(getter)]
    pub fn node_id(&self) -> i32 {
        self.inner.node_id()
    }

    /// `host:port` of `GET /metrics`, when the `metrics` option asked for it.
    #[napi(getter)]
    pub fn metrics_address(&self) -> Option<String> {
        self.inner.metrics_addr().map(|a| a.to_string())
    }

    /// Counters since start; cheap and synchronous.
    #[napi]
    pub fn stats(&self) -> BindingBrokerStats {
        self.inner.stats().into()
    }

    /// Closes the listener and every connection and flushes the log.
    /// Idempotent.
    #[napi]
    pub async fn stop(&self) -> Result<()> {
        self.inner.stop().await.map_err(to_js_error)
    }

    /// Closes the listener and every connection without flushing the log,
    /// for a broker whose data directory is deleted next (a run's own
    /// broker). Idempotent.
    #[napi]
    pub async fn discard(&self) {
        self.inner.discard().await
    }
}

/// Starts a broker on napi's tokio runtime.
#[napi]
pub async fn start_broker(options: BindingBrokerOptions) -> Result<BindingBrokerHandle> {
    let config = BrokerConfig::try_from(options)?;
    let inner = kbench_broker_core::start(config)
        .await
        .map_err(to_js_error)?;
    Ok(BindingBrokerHandle { inner })
}

pub(crate) fn to_js_error(e: kbench_broker_core::Error) -> Error {
    Error::new(Status::GenericFailure, e.to_string())
}
