//! Thin binding over `kbench-loadgen`: the native producer and consumer. Options and stats are
//! converted here; all the work happens in the core crate on napi's tokio runtime.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use kbench_loadgen::{
    Compression, Consumer, ConsumerConfig, ConsumerProperties, IntervalStats, Keys, Producer,
    ProducerConfig, ProducerProperties, Sasl, ScramHash, Security, Size, StartAt, Tls, TlsOptions,
    TokenSource,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;

#[napi(object, js_name = "NativeProducerOptions")]
pub struct BindingNativeProducerOptions {
    pub bootstrap: Vec<String>,
    pub topics: Vec<String>,
    /// 0, 1 or -1 (all).
    pub acks: i32,
    /// Value bytes; with `messageSizeMax`, the minimum of a uniform range.
    pub message_size: u32,
    pub message_size_max: Option<u32>,
    /// Sizes drawn beforehand (u32 little-endian each), used in turn; overrides messageSize.
    pub message_size_table: Option<Buffer>,
    /// Every value is these bytes (stamped with the send time like any value); overrides the rest.
    pub payload: Option<Buffer>,
    /// 'none' | 'random' | 'roundRobin:N'
    pub keys: String,
    /// 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd'
    pub compression: String,
    pub batch_size: u32,
    pub linger_ms: u32,
    /// Produce requests in flight per broker connection.
    pub max_in_flight: u32,
    pub idempotence: bool,
    /// Records per second for this producer; absent = as fast as acks come back.
    pub rate_per_sec: Option<f64>,
    pub records: Option<f64>,
    pub duration_ms: Option<f64>,
    /// Kafka producer properties by their Java names (buffer.memory, max.request.size,
    /// request.timeout.ms); any other name is refused.
    pub properties: Option<HashMap<String, String>>,
    /// TLS and SASL; absent: PLAINTEXT.
    pub security: Option<NativeSecurity>,
}

#[napi(object, js_name = "NativeConsumerOptions")]
pub struct BindingNativeConsumerOptions {
    pub bootstrap: Vec<String>,
    pub topics: Vec<String>,
    /// Where partitions the group has no committed offset for start.
    pub from_beginning: bool,
    /// The consumer group to join (range assignor, offsets committed every 5 s and on stop).
    pub group_id: String,
    /// Kafka consumer properties by their Java names (fetch.min.bytes, fetch.max.wait.ms,
    /// fetch.max.bytes, max.partition.fetch.bytes, enable.auto.commit, auto.commit.interval.ms);
    /// any other name is refused.
    pub properties: Option<HashMap<String, String>>,
    /// TLS and SASL; absent: PLAINTEXT.
    pub security: Option<NativeSecurity>,
}

/// How every connection of a producer or consumer is secured: Kafka's SSL with `tls`,
/// SASL_PLAINTEXT with `sasl`, SASL_SSL with both. Secrets stay in memory here.
/// (Named as in JS, without the Binding prefix: napi's typings name a field's object type by its
/// Rust name.)
#[napi(object)]
pub struct NativeSecurity {
    pub tls: Option<NativeTls>,
    pub sasl: Option<NativeSasl>,
}

#[napi(object)]
pub struct NativeTls {
    /// PEM text of the CAs to trust; absent: the system's CA bundle.
    pub ca: Option<String>,
    /// PEM text of a client certificate chain and its (unencrypted) key: both or neither.
    pub cert: Option<String>,
    pub key: Option<String>,
    /// The name to ask for and check instead of the host dialled.
    pub servername: Option<String>,
    /// Accept any certificate (no issuer or name check).
    pub insecure: Option<bool>,
}

#[napi(object)]
pub struct NativeSasl {
    /// 'plain' | 'scram-sha-256' | 'scram-sha-512' | 'oauthbearer' (any case).
    pub mechanism: String,
    pub username: Option<String>,
    pub password: Option<String>,
    /// OAUTHBEARER: a file holding the token, or a shell command printing it (read at each connect).
    pub token_file: Option<String>,
    pub token_command: Option<String>,
}

/// The engine's Security from the binding's options; an error names the field at fault.
fn security(given: Option<NativeSecurity>) -> Result<Security> {
    let Some(given) = given else {
        return Ok(Security::default());
    };
    let tls = match given.tls {
        None => None,
        Some(t) => Some(
            Tls::new(&TlsOptions {
                ca_pem: t.ca,
                cert_pem: t.cert,
                key_pem: t.key,
                server_name: t.servername,
                insecure: t.insecure.unwrap_or(false),
            })
            .map_err(|e| invalid(e.to_string()))?,
        ),
    };
    let sasl = match given.sasl {
        None => None,
        Some(s) => Some(sasl(s)?),
    };
    Ok(Security { tls, sasl })
}

fn sasl(s: NativeSasl) -> Result<Sasl> {
    let credentials = |s: NativeSasl| match (s.username, s.password) {
        (Some(username), Some(password)) if !username.is_empty() => Ok((username, password)),
        _ => Err(invalid(format!(
            "sasl: {} needs a username and a password",
            s.mechanism
        ))),
    };
    match s.mechanism.to_ascii_lowercase().as_str() {
        "plain" => {
            let (username, password) = credentials(s)?;
            Ok(Sasl::Plain { username, password })
        }
        m @ ("scram-sha-256" | "scram-sha-512") => {
            let hash = if m == "scram-sha-256" {
                ScramHash::Sha256
            } else {
                ScramHash::Sha512
            };
            let (username, password) = credentials(s)?;
            Ok(Sasl::Scram {
                hash,
                username,
                password,
            })
        }
        "oauthbearer" => match (s.token_file, s.token_command) {
            (Some(file), None) => Ok(Sasl::OauthBearer(TokenSource::File(file.into()))),
            (None, Some(command)) => Ok(Sasl::OauthBearer(TokenSource::Command(command))),
            _ => Err(invalid(
                "sasl: oauthbearer needs one of tokenFile or tokenCommand".into(),
            )),
        },
        other => Err(invalid(format!(
            "sasl.mechanism: {other:?} is not one of plain, scram-sha-256, scram-sha-512, oauthbearer"
        ))),
    }
}

/// Counts since the previous `takeInterval`; latency buckets use the engine's log-linear
/// bucketing (SUB_BITS = 10), in microseconds.
#[napi(object, js_name = "NativeInterval")]
pub struct BindingNativeInterval {
    pub records: f64,
    pub value_bytes: f64,
    pub wire_bytes: f64,
    pub errors: f64,
    pub latency_buckets: Vec<u32>,
    pub latency_counts: Vec<f64>,
    pub latency_count: f64,
    pub latency_sum_micros: f64,
    pub latency_max_micros: f64,
}

impl From<IntervalStats> for BindingNativeInterval {
    fn from(s: IntervalStats) -> Self {
        BindingNativeInterval {
            records: s.records as f64,
            value_bytes: s.value_bytes as f64,
            wire_bytes: s.wire_bytes as f64,
            errors: s.errors as f64,
            latency_buckets: s.latency.buckets,
            latency_counts: s.latency.counts.into_iter().map(|c| c as f64).collect(),
            latency_count: s.latency.count as f64,
            latency_sum_micros: s.latency.sum as f64,
            latency_max_micros: s.latency.max as f64,
        }
    }
}

impl TryFrom<BindingNativeProducerOptions> for ProducerConfig {
    type Error = Error;

    fn try_from(o: BindingNativeProducerOptions) -> Result<Self> {
        let acks = match o.acks {
            0 => 0,
            1 => 1,
            -1 => -1,
            other => return Err(invalid(format!("acks must be 0, 1 or -1, not {other}"))),
        };
        let message_size = if let Some(payload) = o.payload {
            Size::Payload(payload.to_vec().into())
        } else if let Some(table) = o.message_size_table {
            if table.is_empty() || table.len() % 4 != 0 {
                return Err(invalid(
                    "messageSizeTable must hold whole u32 sizes, at least one".to_string(),
                ));
            }
            let sizes: Arc<[u32]> = table
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            Size::Table(sizes)
        } else {
            match o.message_size_max {
                Some(max) => Size::Uniform {
                    min: o.message_size,
                    max,
                },
                None => Size::Fixed(o.message_size),
            }
        };
        let keys = match o.keys.as_str() {
            "none" => Keys::None,
            "random" => Keys::Random,
            other => match other.strip_prefix("roundRobin:").map(str::parse::<u32>) {
                Some(Ok(n)) => Keys::RoundRobin(n),
                _ => {
                    return Err(invalid(format!(
                        "keys {other:?}: expected none, random or roundRobin:N"
                    )))
                }
            },
        };
        let compression: Compression = o.compression.parse().map_err(to_js_error)?;
        Ok(ProducerConfig {
            bootstrap: o.bootstrap,
            topics: o.topics,
            acks,
            message_size,
            keys,
            compression,
            batch_size: o.batch_size,
            linger_ms: o.linger_ms,
            max_in_flight: o.max_in_flight,
            idempotence: o.idempotence,
            rate: o.rate_per_sec,
            records: o.records.map(|n| n.max(0.0) as u64),
            duration: o
                .duration_ms
                .map(|ms| Duration::from_secs_f64(ms.max(0.0) / 1000.0)),
        })
    }
}

/// A property's value, or an error naming the property.
fn value<T: FromStr>(name: &str, text: &str) -> Result<T> {
    text.trim()
        .parse()
        .map_err(|_| invalid(format!("{name}: {text:?} is not a valid value")))
}

fn producer_properties(given: Option<HashMap<String, String>>) -> Result<ProducerProperties> {
    let mut out = ProducerProperties::default();
    for (name, text) in given.unwrap_or_default() {
        match name.as_str() {
            "buffer.memory" => out.buffer_memory = Some(value(&name, &text)?),
            "max.request.size" => out.max_request_size = Some(value(&name, &text)?),
            "request.timeout.ms" => out.request_timeout_ms = Some(value(&name, &text)?),
            _ => return Err(invalid(format!("the native producer cannot honour {name}"))),
        }
    }
    Ok(out)
}

fn consumer_properties(given: Option<HashMap<String, String>>) -> Result<ConsumerProperties> {
    let mut out = ConsumerProperties::default();
    for (name, text) in given.unwrap_or_default() {
        match name.as_str() {
            "fetch.min.bytes" => out.fetch_min_bytes = Some(value(&name, &text)?),
            "fetch.max.wait.ms" => out.fetch_max_wait_ms = Some(value(&name, &text)?),
            "fetch.max.bytes" => out.fetch_max_bytes = Some(value(&name, &text)?),
            "max.partition.fetch.bytes" => {
                out.max_partition_fetch_bytes = Some(value(&name, &text)?)
            }
            "enable.auto.commit" => out.enable_auto_commit = Some(value(&name, &text)?),
            "auto.commit.interval.ms" => out.auto_commit_interval_ms = Some(value(&name, &text)?),
            _ => return Err(invalid(format!("the native consumer cannot honour {name}"))),
        }
    }
    Ok(out)
}

fn properties_map(effective: &[(&'static str, String)]) -> HashMap<String, String> {
    effective
        .iter()
        .map(|(name, v)| ((*name).to_string(), v.clone()))
        .collect()
}

impl From<BindingNativeConsumerOptions> for ConsumerConfig {
    fn from(o: BindingNativeConsumerOptions) -> Self {
        ConsumerConfig {
            bootstrap: o.bootstrap,
            topics: o.topics,
            start: if o.from_beginning {
                StartAt::Earliest
            } else {
                StartAt::Latest
            },
            group_id: o.group_id,
        }
    }
}

/// A producer running on the native load engine.
#[napi(js_name = "NativeProducer")]
pub struct BindingNativeProducer {
    inner: Producer,
}

#[napi]
impl BindingNativeProducer {
    /// Connects, reads metadata (and a producer id when idempotent), then starts producing.
    #[napi(factory)]
    pub async fn start(mut options: BindingNativeProducerOptions) -> Result<BindingNativeProducer> {
        let mut properties = producer_properties(options.properties.take())?;
        properties.security = security(options.security.take())?;
        let config = ProducerConfig::try_from(options)?;
        let inner = Producer::start_with(config, properties)
            .await
            .map_err(to_js_error)?;
        Ok(BindingNativeProducer { inner })
    }

    /// The Kafka producer properties it runs with, by their Java names, defaults included.
    #[napi]
    pub fn effective_properties(&self) -> HashMap<String, String> {
        properties_map(self.inner.effective_properties())
    }

    /// Counts since the previous call; resets them.
    #[napi]
    pub fn take_interval(&self) -> BindingNativeInterval {
        self.inner.take_interval().into()
    }

    /// Stops producing; requests in flight get a few seconds to be acknowledged. Idempotent.
    #[napi]
    pub async fn stop(&self) {
        self.inner.stop().await;
    }

    /// Resolves when records/duration are done or after stop.
    #[napi]
    pub async fn finished(&self) {
        self.inner.finished().await;
    }

    #[napi]
    pub fn last_error(&self) -> Option<String> {
        self.inner.last_error()
    }
}

/// A consumer running on the native load engine: a member of a Kafka consumer group.
#[napi(js_name = "NativeConsumer")]
pub struct BindingNativeConsumer {
    inner: Consumer,
}

#[napi]
impl BindingNativeConsumer {
    /// Resolves once it has joined its group and knows where to start its partitions.
    #[napi(factory)]
    pub async fn start(mut options: BindingNativeConsumerOptions) -> Result<BindingNativeConsumer> {
        let mut properties = consumer_properties(options.properties.take())?;
        properties.security = security(options.security.take())?;
        let inner = Consumer::start_with(options.into(), properties)
            .await
            .map_err(to_js_error)?;
        Ok(BindingNativeConsumer { inner })
    }

    /// The Kafka consumer properties it runs with, by their Java names, defaults included.
    #[napi]
    pub fn effective_properties(&self) -> HashMap<String, String> {
        properties_map(self.inner.effective_properties())
    }

    #[napi]
    pub fn take_interval(&self) -> BindingNativeInterval {
        self.inner.take_interval().into()
    }

    /// The partitions it reads now, as "topic:partition"; empty while it rejoins its group.
    #[napi]
    pub fn assignment(&self) -> Vec<String> {
        self.inner
            .assignment()
            .into_iter()
            .map(|(t, p)| format!("{t}:{p}"))
            .collect()
    }

    /// Commits its offsets, leaves the group and disconnects. Idempotent.
    #[napi]
    pub async fn stop(&self) {
        self.inner.stop().await;
    }

    #[napi]
    pub fn last_error(&self) -> Option<String> {
        self.inner.last_error()
    }
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}

fn to_js_error(e: kbench_loadgen::Error) -> Error {
    Error::new(Status::GenericFailure, e.to_string())
}
