//! Thin binding over `kbench-loadgen`: the native producer and consumer. Options and stats are
//! converted here; all the work happens in the core crate on napi's tokio runtime.

use std::collections::HashMap;

use kbench_loadgen::options::{properties_map, SaslSettings, SecurityOptions, TlsSettings};
use kbench_loadgen::{Consumer, ConsumerOptions, IntervalStats, Producer, ProducerOptions};
use napi::bindgen_prelude::*;
use napi_derive::napi;

// The options as the addon takes them: the same fields as kbench-loadgen's JSON options, declared
// once there. (The nested objects keep their JS names, without the Binding prefix: napi's typings
// name a field's object type by its Rust name.)
kbench_loadgen::declare_native_options! {
    producer: #[napi(object, js_name = "NativeProducerOptions")] BindingNativeProducerOptions,
    consumer: #[napi(object, js_name = "NativeConsumerOptions")] BindingNativeConsumerOptions,
    security: #[napi(object)] NativeSecurity,
    tls: #[napi(object)] NativeTls,
    sasl: #[napi(object)] NativeSasl,
    bytes: Buffer,
    properties: HashMap<String, String>,
}

/// Counts since the previous `takeInterval`; latency buckets use the engine's log-linear
/// bucketing (SUB_BITS = 10), in microseconds.
#[napi(object, js_name = "NativeInterval")]
pub struct BindingNativeInterval {
    pub records: f64,
    pub value_bytes: f64,
    pub wire_bytes: f64,
    pub errors: f64,
    /// What the errors said, each distinct message with its count, most frequent first (bounded).
    pub error_messages: Vec<NativeErrorCount>,
    /// Records a producer put back to be sent again (retried); 0 for consumers.
    pub retries: f64,
    pub latency_buckets: Vec<u32>,
    pub latency_counts: Vec<f64>,
    pub latency_count: f64,
    pub latency_sum_micros: f64,
    pub latency_max_micros: f64,
    /// The share of the interval (0..1) the busiest client's engine task spent running; null
    /// before it ran.
    pub busy: Option<f64>,
}

/// One error message of an interval and how many errors said it.
#[napi(object)]
pub struct NativeErrorCount {
    pub message: String,
    pub count: f64,
}

impl From<IntervalStats> for BindingNativeInterval {
    fn from(s: IntervalStats) -> Self {
        BindingNativeInterval {
            records: s.records as f64,
            value_bytes: s.value_bytes as f64,
            wire_bytes: s.wire_bytes as f64,
            errors: s.errors as f64,
            error_messages: s
                .error_messages
                .into_iter()
                .map(|(message, count)| NativeErrorCount {
                    message,
                    count: count as f64,
                })
                .collect(),
            retries: s.retries as f64,
            latency_buckets: s.latency.buckets,
            latency_counts: s.latency.counts.into_iter().map(|c| c as f64).collect(),
            latency_count: s.latency.count as f64,
            latency_sum_micros: s.latency.sum as f64,
            latency_max_micros: s.latency.max as f64,
            busy: s.busy,
        }
    }
}

impl From<BindingNativeProducerOptions> for ProducerOptions {
    fn from(o: BindingNativeProducerOptions) -> Self {
        ProducerOptions {
            bootstrap: o.bootstrap,
            topics: o.topics,
            acks: o.acks,
            message_size: o.message_size,
            message_size_max: o.message_size_max,
            message_size_table: o.message_size_table.map(|b| b.to_vec()),
            payload: o.payload.map(|b| b.to_vec()),
            keys: o.keys,
            compression: o.compression,
            batch_size: o.batch_size,
            linger_ms: o.linger_ms,
            max_in_flight: o.max_in_flight,
            idempotence: o.idempotence,
            rate_per_sec: o.rate_per_sec,
            records: o.records,
            duration_ms: o.duration_ms,
            properties: o.properties.map(|p| p.into_iter().collect()),
            security: o.security.map(Into::into),
            clock_offset_micros: o.clock_offset_micros,
            verify_producer: o.verify_producer,
            unstamped: o.unstamped,
        }
    }
}

impl From<BindingNativeConsumerOptions> for ConsumerOptions {
    fn from(o: BindingNativeConsumerOptions) -> Self {
        ConsumerOptions {
            bootstrap: o.bootstrap,
            topics: o.topics,
            from_beginning: o.from_beginning,
            group_id: o.group_id,
            properties: o.properties.map(|p| p.into_iter().collect()),
            security: o.security.map(Into::into),
            clock_offset_micros: o.clock_offset_micros,
        }
    }
}

impl From<NativeSecurity> for SecurityOptions {
    fn from(s: NativeSecurity) -> Self {
        SecurityOptions {
            tls: s.tls.map(|t| TlsSettings {
                ca: t.ca,
                cert: t.cert,
                key: t.key,
                servername: t.servername,
                insecure: t.insecure,
            }),
            sasl: s.sasl.map(|s| SaslSettings {
                mechanism: s.mechanism,
                username: s.username,
                password: s.password,
                token_file: s.token_file,
                token_command: s.token_command,
            }),
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
    pub async fn start(options: BindingNativeProducerOptions) -> Result<BindingNativeProducer> {
        let (config, properties) = ProducerOptions::from(options)
            .into_engine()
            .map_err(to_js_error)?;
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

    /// With `verifyProducer`, the sequences acknowledged so far in each partition; else empty.
    #[napi]
    pub fn acknowledged(&self) -> Vec<NativeAcknowledged> {
        let producer = self.inner.verify_number().unwrap_or(0);
        self.inner
            .acknowledged()
            .into_iter()
            .map(|(topic, partition, ranges)| {
                let (starts, ends) = ranges.ranges().map(|(s, e)| (s as f64, e as f64)).unzip();
                NativeAcknowledged {
                    producer,
                    topic,
                    partition,
                    starts,
                    ends,
                }
            })
            .collect()
    }
}

/// The sequences one producer had acknowledged in one partition, as ranges `[starts[i], ends[i])`.
#[napi(object)]
pub struct NativeAcknowledged {
    pub producer: u32,
    pub topic: String,
    pub partition: i32,
    pub starts: Vec<f64>,
    pub ends: Vec<f64>,
}

/// What `verifyLog` reads and what it checks it against.
#[napi(object)]
pub struct NativeVerifyOptions {
    pub bootstrap: Vec<String>,
    pub topics: Vec<String>,
    pub security: Option<NativeSecurity>,
    /// Every producer's acknowledged ranges (`acknowledged()` of each).
    pub acknowledged: Vec<NativeAcknowledged>,
}

/// The check of one partition (see kbench-loadgen's `verify`).
#[napi(object)]
pub struct NativePartitionVerdict {
    pub topic: String,
    pub partition: i32,
    pub acknowledged: f64,
    pub found: f64,
    pub lost: f64,
    pub duplicated: f64,
    pub reordered: f64,
    pub unacknowledged_present: f64,
    pub foreign: f64,
}

/// Reads every partition of `topics` from its start to its high watermark and checks that every
/// acknowledged record is there exactly once and in order per producer.
#[napi]
pub async fn verify_log(options: NativeVerifyOptions) -> Result<Vec<NativePartitionVerdict>> {
    use kbench_loadgen::verify::{read_log, verdict, Ranges};
    let security =
        kbench_loadgen::options::security(options.security.map(Into::into)).map_err(to_js_error)?;
    let mut acked: HashMap<(String, i32), HashMap<u32, Ranges>> = HashMap::new();
    for a in &options.acknowledged {
        if a.starts.len() != a.ends.len() {
            return Err(Error::new(
                Status::InvalidArg,
                "acknowledged: starts and ends differ in length".to_string(),
            ));
        }
        let ranges = acked
            .entry((a.topic.clone(), a.partition))
            .or_default()
            .entry(a.producer)
            .or_default();
        for (&s, &e) in a.starts.iter().zip(&a.ends) {
            if !(s >= 0.0 && e >= s && e <= 9_007_199_254_740_992.0) {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!("acknowledged: [{s}, {e}) is not a range of sequences"),
                ));
            }
            ranges.insert(s as u64, e as u64);
        }
    }
    let producers: std::collections::HashSet<u32> =
        options.acknowledged.iter().map(|a| a.producer).collect();
    let logs = read_log(&options.bootstrap, &security, &options.topics, |p| {
        producers.contains(&p)
    })
    .await
    .map_err(to_js_error)?;
    let none = HashMap::new();
    Ok(logs
        .into_iter()
        .map(|(topic, partition, log)| {
            let acknowledged = acked.get(&(topic.clone(), partition)).unwrap_or(&none);
            let v = verdict(&topic, partition, acknowledged, &log);
            NativePartitionVerdict {
                topic: v.topic,
                partition: v.partition,
                acknowledged: v.acknowledged as f64,
                found: v.found as f64,
                lost: v.lost as f64,
                duplicated: v.duplicated as f64,
                reordered: v.reordered as f64,
                unacknowledged_present: v.unacknowledged_present as f64,
                foreign: v.foreign as f64,
            }
        })
        .collect())
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
    pub async fn start(options: BindingNativeConsumerOptions) -> Result<BindingNativeConsumer> {
        let (config, properties) = ConsumerOptions::from(options)
            .into_engine()
            .map_err(to_js_error)?;
        let inner = Consumer::start_with(config, properties)
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

/// A configuration mistake is the caller's (InvalidArg, the message alone); the rest failed.
fn to_js_error(e: kbench_loadgen::Error) -> Error {
    match e {
        kbench_loadgen::Error::Config(message) => Error::new(Status::InvalidArg, message),
        e => Error::new(Status::GenericFailure, e.to_string()),
    }
}
