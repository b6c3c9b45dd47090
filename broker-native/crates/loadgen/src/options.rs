//! A producer's and a consumer's options as the outside world gives them: the napi addon's
//! `NativeProducerOptions` / `NativeConsumerOptions`, and the same objects as JSON (camelCase field
//! names, Buffers as base64 strings) in a kbench agent's `startProducers` / `startConsumers`. One
//! conversion to the engine's configs serves both, so they cannot drift apart; an error names the
//! field at fault.

use std::collections::{BTreeMap, HashMap};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::batch::Compression;
use crate::consumer::{ConsumerConfig, ConsumerProperties, StartAt};
use crate::error::{Error, Result};
use crate::producer::{Keys, ProducerConfig, ProducerProperties, Size};
use kbench_client::{Sasl, ScramHash, Security, Tls, TlsOptions, TokenSource};

/// The largest value a producer's options may ask for, as the scenario's `producers.messageSize`
/// allows (`MAX_MESSAGE_BYTES` in packages/schema): the engine allocates a pool of random bytes
/// as large as the largest value, so a size from a peer (a load agent's `startProducers`) past it
/// is refused rather than allocated (4 GiB for `messageSize: 4294967295`).
pub const MAX_MESSAGE_BYTES: u32 = 16 << 20;

/// Declares the five option structs, field for field, with the attributes and names a caller
/// gives: here serde's (JSON), in the napi crate napi's (the addon's typings), so the two cannot
/// drift apart. `bytes` is the type of a Buffer field with its attributes, `properties` the map.
#[macro_export]
macro_rules! declare_native_options {
    (
        producer: $(#[$producer_attr:meta])* $producer:ident,
        consumer: $(#[$consumer_attr:meta])* $consumer:ident,
        security: $(#[$security_attr:meta])* $security:ident,
        tls: $(#[$tls_attr:meta])* $tls:ident,
        sasl: $(#[$sasl_attr:meta])* $sasl:ident,
        bytes: $(#[$bytes_attr:meta])* $bytes:ty,
        properties: $properties:ty $(,)?
    ) => {
        $(#[$producer_attr])*
        pub struct $producer {
            pub bootstrap: Vec<String>,
            pub topics: Vec<String>,
            /// 0, 1 or -1 (all).
            pub acks: i32,
            /// Value bytes; with `messageSizeMax`, the minimum of a uniform range.
            pub message_size: u32,
            pub message_size_max: Option<u32>,
            /// Sizes drawn beforehand (u32 little-endian each), used in turn; overrides messageSize.
            $(#[$bytes_attr])*
            pub message_size_table: Option<$bytes>,
            /// Every value is these bytes (stamped with the send time like any value); overrides
            /// the rest.
            $(#[$bytes_attr])*
            pub payload: Option<$bytes>,
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
            pub properties: Option<$properties>,
            /// TLS and SASL; absent: PLAINTEXT.
            pub security: Option<$security>,
            /// This machine's clock minus the controller's, in µs (a load agent's measured
            /// offset; absent: 0): values are stamped with `now - clockOffsetMicros`.
            pub clock_offset_micros: Option<f64>,
            /// Verification: mark each value with this producer number and its sequence in its
            /// partition (16 bytes after the send time, within messageSize, which must be 24 or
            /// more) and keep what was acknowledged; absent: no marks.
            pub verify_producer: Option<u32>,
            /// Values carry no send time (a preloaded backlog, which is not part of the measured
            /// load): consumers measure no end-to-end latency for them. Absent: false.
            pub unstamped: Option<bool>,
        }

        $(#[$consumer_attr])*
        pub struct $consumer {
            pub bootstrap: Vec<String>,
            pub topics: Vec<String>,
            /// Where partitions the group has no committed offset for start.
            pub from_beginning: bool,
            /// The consumer group to join (range assignor, offsets committed every 5 s and on stop).
            pub group_id: String,
            /// Kafka consumer properties by their Java names (fetch.min.bytes, fetch.max.wait.ms,
            /// fetch.max.bytes, max.partition.fetch.bytes, enable.auto.commit,
            /// auto.commit.interval.ms); any other name is refused.
            pub properties: Option<$properties>,
            /// TLS and SASL; absent: PLAINTEXT.
            pub security: Option<$security>,
            /// This machine's clock minus the controller's, in µs (absent: 0): end-to-end latency
            /// is `(now - clockOffsetMicros) - stamp`.
            pub clock_offset_micros: Option<f64>,
        }

        /// How every connection of a producer or consumer is secured: Kafka's SSL with `tls`,
        /// SASL_PLAINTEXT with `sasl`, SASL_SSL with both. Secrets stay in memory.
        $(#[$security_attr])*
        pub struct $security {
            pub tls: Option<$tls>,
            pub sasl: Option<$sasl>,
        }

        $(#[$tls_attr])*
        pub struct $tls {
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

        $(#[$sasl_attr])*
        pub struct $sasl {
            /// 'plain' | 'scram-sha-256' | 'scram-sha-512' | 'oauthbearer' (any case).
            pub mechanism: String,
            pub username: Option<String>,
            pub password: Option<String>,
            /// OAUTHBEARER: a file holding the token, or a shell command printing it (read at
            /// each connect).
            pub token_file: Option<String>,
            pub token_command: Option<String>,
        }
    };
}

// The options as JSON: camelCase names, an absent Option None (as an absent JS property), a
// field the options do not have refused, Buffers as base64.
declare_native_options! {
    producer:
        /// `NativeProducerOptions`.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        ProducerOptions,
    consumer:
        /// `NativeConsumerOptions`.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        ConsumerOptions,
    security:
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        SecurityOptions,
    tls:
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        TlsSettings,
    sasl:
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        SaslSettings,
    bytes: #[serde(default, with = "base64_bytes")] Vec<u8>,
    properties: BTreeMap<String, String>,
}

impl ProducerOptions {
    /// The engine's config and properties; an error names the field.
    pub fn into_engine(self) -> Result<(ProducerConfig, ProducerProperties)> {
        let acks = match self.acks {
            0 => 0,
            1 => 1,
            -1 => -1,
            other => return invalid(format!("acks must be 0, 1 or -1, not {other}")),
        };
        let too_big = |field: &str, n: u32| {
            invalid::<()>(format!(
                "{field}: {n} bytes is more than a value may be ({MAX_MESSAGE_BYTES}, the scenario's bound)"
            ))
        };
        if self.payload.is_none() && self.message_size_table.is_none() {
            if self.message_size > MAX_MESSAGE_BYTES {
                too_big("messageSize", self.message_size)?;
            }
            if let Some(max) = self.message_size_max.filter(|&m| m > MAX_MESSAGE_BYTES) {
                too_big("messageSizeMax", max)?;
            }
        }
        let message_size = if let Some(payload) = self.payload {
            Size::Payload(payload.into())
        } else if let Some(table) = self.message_size_table {
            if table.is_empty() || table.len() % 4 != 0 {
                return invalid("messageSizeTable must hold whole u32 sizes, at least one".into());
            }
            let sizes: Arc<[u32]> = table
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            if let Some((i, &n)) = sizes
                .iter()
                .enumerate()
                .find(|(_, &n)| n > MAX_MESSAGE_BYTES)
            {
                too_big(&format!("messageSizeTable[{i}]"), n)?;
            }
            Size::Table(sizes)
        } else {
            match self.message_size_max {
                Some(max) => Size::Uniform {
                    min: self.message_size,
                    max,
                },
                None => Size::Fixed(self.message_size),
            }
        };
        let keys = match self.keys.as_str() {
            "none" => Keys::None,
            "random" => Keys::Random,
            other => match other.strip_prefix("roundRobin:").map(str::parse::<u32>) {
                Some(Ok(n)) => Keys::RoundRobin(n),
                _ => {
                    return invalid(format!(
                        "keys {other:?}: expected none, random or roundRobin:N"
                    ))
                }
            },
        };
        let compression: Compression = self.compression.parse()?;
        // A duration past what Duration holds (1e300 ms from a peer) is refused, not a panic.
        let duration = match self.duration_ms {
            None => None,
            Some(ms) => Some(
                Duration::try_from_secs_f64(ms.max(0.0) / 1000.0).or_else(|_| {
                    invalid(format!(
                        "durationMs: {ms:e} ms is longer than a duration can be"
                    ))
                })?,
            ),
        };
        let mut properties = producer_properties(self.properties)?;
        properties.security = security(self.security)?;
        properties.verify = self.verify_producer;
        properties.unstamped = self.unstamped.unwrap_or(false);
        let config = ProducerConfig {
            bootstrap: self.bootstrap,
            topics: self.topics,
            acks,
            message_size,
            keys,
            compression,
            batch_size: self.batch_size,
            linger_ms: self.linger_ms,
            max_in_flight: self.max_in_flight,
            idempotence: self.idempotence,
            rate: self.rate_per_sec,
            records: self.records.map(|n| n.max(0.0) as u64),
            duration,
            clock_offset_micros: self.clock_offset_micros.unwrap_or(0.0),
        };
        Ok((config, properties))
    }
}

impl ConsumerOptions {
    /// The engine's config and properties; an error names the field.
    pub fn into_engine(self) -> Result<(ConsumerConfig, ConsumerProperties)> {
        let mut properties = consumer_properties(self.properties)?;
        properties.security = security(self.security)?;
        let config = ConsumerConfig {
            bootstrap: self.bootstrap,
            topics: self.topics,
            start: if self.from_beginning {
                StartAt::Earliest
            } else {
                StartAt::Latest
            },
            group_id: self.group_id,
            clock_offset_micros: self.clock_offset_micros.unwrap_or(0.0),
        };
        Ok((config, properties))
    }
}

/// Options (or a list of them) from JSON, a mistake named by its path under `what`:
/// `producers[0].acks: invalid type: string "all", expected i32`.
pub fn from_json<T: DeserializeOwned>(what: &str, json: serde_json::Value) -> Result<T> {
    serde_path_to_error::deserialize(json).map_err(|e| {
        let path = e.path().to_string();
        let place = match path.as_str() {
            "." => what.to_string(),
            p if p.starts_with('[') => format!("{what}{p}"),
            p => format!("{what}.{p}"),
        };
        Error::Config(format!("{place}: {}", e.inner()))
    })
}

/// Effective properties (by their Java names) as a map, for a reply or a JS object.
pub fn properties_map(effective: &[(&'static str, String)]) -> HashMap<String, String> {
    effective
        .iter()
        .map(|(name, v)| ((*name).to_string(), v.clone()))
        .collect()
}

fn invalid<T>(message: String) -> Result<T> {
    Err(Error::Config(message))
}

/// The engine's Security from the options.
/// The `Security` a JS-side security option describes.
pub fn security(given: Option<SecurityOptions>) -> Result<Security> {
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
            .map_err(|e| Error::Config(e.to_string()))?,
        ),
    };
    let sasl = match given.sasl {
        None => None,
        Some(s) => Some(sasl(s)?),
    };
    Ok(Security { tls, sasl })
}

fn sasl(s: SaslSettings) -> Result<Sasl> {
    let credentials = |s: SaslSettings| match (s.username, s.password) {
        (Some(username), Some(password)) if !username.is_empty() => Ok((username, password)),
        _ => invalid(format!(
            "sasl: {} needs a username and a password",
            s.mechanism
        )),
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
            _ => invalid("sasl: oauthbearer needs one of tokenFile or tokenCommand".into()),
        },
        other => invalid(format!(
            "sasl.mechanism: {other:?} is not one of plain, scram-sha-256, scram-sha-512, oauthbearer"
        )),
    }
}

/// A property's value, or an error naming the property.
fn value<T: FromStr>(name: &str, text: &str) -> Result<T> {
    text.trim()
        .parse()
        .or_else(|_| invalid(format!("{name}: {text:?} is not a valid value")))
}

fn producer_properties(given: Option<BTreeMap<String, String>>) -> Result<ProducerProperties> {
    let mut out = ProducerProperties::default();
    for (name, text) in given.unwrap_or_default() {
        match name.as_str() {
            "buffer.memory" => out.buffer_memory = Some(value(&name, &text)?),
            "max.request.size" => out.max_request_size = Some(value(&name, &text)?),
            "request.timeout.ms" => out.request_timeout_ms = Some(value(&name, &text)?),
            _ => return invalid(format!("the native producer cannot honour {name}")),
        }
    }
    Ok(out)
}

fn consumer_properties(given: Option<BTreeMap<String, String>>) -> Result<ConsumerProperties> {
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
            "request.timeout.ms" => out.request_timeout_ms = Some(value(&name, &text)?),
            _ => return invalid(format!("the native consumer cannot honour {name}")),
        }
    }
    Ok(out)
}

/// Buffers travel in JSON as standard base64 (with padding), as Node's `buffer.toString('base64')`.
mod base64_bytes {
    use super::*;

    pub fn serialize<S: Serializer>(bytes: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match bytes {
            Some(b) => s.serialize_some(&base64::engine::general_purpose::STANDARD.encode(b)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let Some(text) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map(Some)
            .map_err(|e| serde::de::Error::custom(format!("not base64: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn producer_json() -> serde_json::Value {
        serde_json::json!({
            "bootstrap": ["127.0.0.1:9092"],
            "topics": ["t"],
            "acks": -1,
            "messageSize": 100,
            "messageSizeTable": base64::engine::general_purpose::STANDARD
                .encode([7u32.to_le_bytes(), 300u32.to_le_bytes()].concat()),
            "keys": "roundRobin:4",
            "compression": "lz4",
            "batchSize": 16384,
            "lingerMs": 5,
            "maxInFlight": 3,
            "idempotence": true,
            "ratePerSec": 1000.0,
            "records": 5000.0,
            "durationMs": null,
            "properties": { "buffer.memory": "1048576", "request.timeout.ms": "9000" },
            "security": {
                "sasl": { "mechanism": "SCRAM-SHA-512", "username": "u", "password": "p" }
            },
            "clockOffsetMicros": -1500.5
        })
    }

    #[test]
    fn producer_options_from_json_to_engine_config() {
        let options: ProducerOptions = serde_json::from_value(producer_json()).unwrap();
        // Through JSON and back: the same options (the Buffer as base64 both ways).
        let again: ProducerOptions =
            serde_json::from_str(&serde_json::to_string(&options).unwrap()).unwrap();
        assert_eq!(again, options);
        let (config, properties) = options.into_engine().unwrap();
        assert_eq!(config.acks, -1);
        assert_eq!(config.message_size, Size::Table(Arc::from([7u32, 300])));
        assert_eq!(config.keys, Keys::RoundRobin(4));
        assert_eq!(config.compression, Compression::Lz4);
        assert_eq!((config.batch_size, config.linger_ms), (16384, 5));
        assert_eq!((config.max_in_flight, config.idempotence), (3, true));
        assert_eq!(
            (config.rate, config.records, config.duration),
            (Some(1000.0), Some(5000), None)
        );
        assert_eq!(config.clock_offset_micros, -1500.5);
        assert_eq!(properties.buffer_memory, Some(1 << 20));
        assert_eq!(properties.request_timeout_ms, Some(9000));
        assert!(matches!(
            properties.security.sasl,
            Some(Sasl::Scram {
                hash: ScramHash::Sha512,
                ..
            })
        ));
    }

    #[test]
    fn consumer_options_from_json_to_engine_config() {
        let json = serde_json::json!({
            "bootstrap": ["a:1", "b:2"],
            "topics": ["t", "u"],
            "fromBeginning": true,
            "groupId": "g",
            "properties": { "fetch.max.wait.ms": "100", "enable.auto.commit": "false" },
            "clockOffsetMicros": 250.0
        });
        let options: ConsumerOptions = serde_json::from_value(json).unwrap();
        let again: ConsumerOptions =
            serde_json::from_str(&serde_json::to_string(&options).unwrap()).unwrap();
        assert_eq!(again, options);
        let (config, properties) = options.into_engine().unwrap();
        assert_eq!(config.bootstrap, ["a:1", "b:2"]);
        assert_eq!(config.start, StartAt::Earliest);
        assert_eq!(config.group_id, "g");
        assert_eq!(config.clock_offset_micros, 250.0);
        assert_eq!(properties.fetch_max_wait_ms, Some(100));
        assert_eq!(properties.enable_auto_commit, Some(false));
        assert!(properties.security.tls.is_none() && properties.security.sasl.is_none());
    }

    #[test]
    fn absent_offset_is_zero_and_payload_wins() {
        let mut json = producer_json();
        let object = json.as_object_mut().unwrap();
        object.remove("clockOffsetMicros");
        object.remove("security");
        object.insert("payload".into(), "AAECAw==".into());
        let options: ProducerOptions = serde_json::from_value(json).unwrap();
        let (config, _) = options.into_engine().unwrap();
        assert_eq!(config.clock_offset_micros, 0.0);
        assert_eq!(
            config.message_size,
            Size::Payload(bytes::Bytes::from_static(&[0, 1, 2, 3]))
        );
    }

    #[test]
    fn bad_options_name_the_field() {
        let with = |field: &str, value: serde_json::Value| {
            let mut json = producer_json();
            json.as_object_mut().unwrap().insert(field.into(), value);
            json
        };
        for (json, expected) in [
            (with("acks", 2.into()), "acks"),
            (with("keys", "sometimes".into()), "keys"),
            (with("compression", "brotli".into()), "brotli"),
            (with("messageSizeTable", "AAA=".into()), "messageSizeTable"),
            (with("durationMs", 1e300.into()), "durationMs: 1e300 ms"),
            (
                with(
                    "messageSizeTable",
                    base64::engine::general_purpose::STANDARD
                        .encode([7u32.to_le_bytes(), u32::MAX.to_le_bytes()].concat())
                        .into(),
                ),
                "messageSizeTable[1]: 4294967295 bytes is more than a value may be",
            ),
            (
                with("properties", serde_json::json!({ "linger.ms": "5" })),
                "linger.ms",
            ),
            (
                with("properties", serde_json::json!({ "buffer.memory": "lots" })),
                "buffer.memory",
            ),
            (
                with(
                    "security",
                    serde_json::json!({ "sasl": { "mechanism": "gssapi" } }),
                ),
                "sasl.mechanism",
            ),
            (
                with(
                    "security",
                    serde_json::json!({ "sasl": { "mechanism": "plain" } }),
                ),
                "username",
            ),
        ] {
            let options: ProducerOptions = serde_json::from_value(json).unwrap();
            let err = options.into_engine().unwrap_err().to_string();
            assert!(err.contains(expected), "{expected}: {err}");
        }
        // Shapes JSON cannot carry are refused by serde, naming the field.
        for (json, expected) in [
            (
                with("payload", "not base64!".into()),
                "producer.payload: not base64",
            ),
            (with("colour", "red".into()), "unknown field `colour`"),
            (with("acks", "all".into()), "producer.acks: invalid type"),
        ] {
            let err = from_json::<ProducerOptions>("producer", json)
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{expected}: {err}");
        }
        let list = serde_json::json!([producer_json(), with("batchSize", (-1).into())]);
        let err = from_json::<Vec<ProducerOptions>>("producers", list).unwrap_err();
        assert!(
            err.to_string()
                .contains("producers[1].batchSize: invalid value"),
            "{err}"
        );
    }
}
