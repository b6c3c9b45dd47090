//! The producer: fills record batches (sticky or keyed partitioning), sends them as produce
//! requests pipelined per broker connection, and measures each record's ack latency from its
//! intended send time (fixed rate) or its append time (closed loop).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{
    InitProducerIdRequest, ProduceRequest, ProduceResponse, ProducerId, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use tokio::time::Instant;

use crate::batch::{BatchBuilder, Compression, ProducerFields};
use crate::engine_task::{EngineTask, Shared};
use crate::error::kafka_error;
use crate::error::{Error, Result};
use crate::metadata::{is_retriable, ClusterMetadata, MetadataClient};
use crate::partitioner::partition_for_key;
use crate::payload::{now_micros, Rng, ValuePool};
use crate::stats::{IntervalStats, SharedStats};
use crate::verify::{mark, Ranges, MARKED_VALUE_BYTES};
use kbench_client::{decode_response, Connection, Pool, Response, Security};

/// Largest produce request we build (the Java client's default `max.request.size`).
const MAX_REQUEST_BYTES: usize = 1 << 20;
/// Unsent bytes a fixed-rate producer may hold before it falls behind schedule.
const FIXED_RATE_BUFFER_BYTES: usize = 64 << 20;
const REQUEST_TIMEOUT_MS: i32 = 30_000;
const DRAIN_ON_STOP: Duration = Duration::from_secs(5);
const RETRY_BACKOFF: Duration = Duration::from_millis(100);
const DUPLICATE_SEQUENCE_NUMBER: i16 = 46;

#[derive(Debug, Clone, PartialEq)]
pub enum Size {
    Fixed(u32),
    Uniform {
        min: u32,
        max: u32,
    },
    /// Sizes drawn beforehand (a distribution), used in turn and over again.
    Table(Arc<[u32]>),
    /// Every value is these bytes (a payload file), its first 8 stamped with the send time when
    /// it has 8 or more, as every value is.
    Payload(Bytes),
}

impl Size {
    /// The largest value size; 0 for a payload, which needs no random pool.
    pub fn max(&self) -> u32 {
        match self {
            Size::Fixed(n) => *n,
            Size::Uniform { max, .. } => *max,
            Size::Table(sizes) => sizes.iter().copied().max().unwrap_or(0),
            Size::Payload(_) => 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Keys {
    None,
    /// 16 random hex characters per record.
    Random,
    /// `key-0` .. `key-{n-1}` in turn, as the kafkajs driver does.
    RoundRobin(u32),
}

#[derive(Debug, Clone)]
pub struct ProducerConfig {
    pub bootstrap: Vec<String>,
    pub topics: Vec<String>,
    /// 0, 1 or -1 (all).
    pub acks: i16,
    pub message_size: Size,
    pub keys: Keys,
    pub compression: Compression,
    pub batch_size: u32,
    pub linger_ms: u32,
    /// Produce requests awaiting a response, per broker connection.
    pub max_in_flight: u32,
    /// InitProducerId and sequence numbers; needs acks = -1.
    pub idempotence: bool,
    /// Records per second (open loop); None sends as fast as acks come back (closed loop).
    pub rate: Option<f64>,
    pub records: Option<u64>,
    pub duration: Option<Duration>,
    /// This machine's clock minus the controller's, in µs (0 when one machine does everything):
    /// each value is stamped with `now - clock_offset_micros`, the send time on the controller's
    /// timeline. Publish latency is measured on this machine's clock alone and is unaffected.
    pub clock_offset_micros: f64,
}

/// Kafka producer properties beyond the scenario's knobs, by their Java names; the defaults are
/// what the engine did before they could be set.
#[derive(Debug, Clone, Default)]
pub struct ProducerProperties {
    /// `buffer.memory`: record bytes held unsent before the producer waits. Default: one batch per
    /// partition in a closed loop, 64 MiB at a fixed rate.
    pub buffer_memory: Option<usize>,
    /// `max.request.size`: the largest produce request (a single larger batch goes alone). Default 1 MiB.
    pub max_request_size: Option<usize>,
    /// `request.timeout.ms`: the timeout each produce request carries (how long the broker may
    /// wait for acks), and how long the producer waits for an answer before it closes the
    /// connection and sends the records again. Default 30 s.
    pub request_timeout_ms: Option<i32>,
    /// `security.protocol`, `ssl.*`, `sasl.*`: TLS and SASL for every connection. Default PLAINTEXT.
    pub security: Security,
    /// Verification (not a Kafka property): each value is marked with this producer number and
    /// its sequence in its partition (see `verify`), and the sequences acknowledged are kept per
    /// partition as ranges. Default None: values are not marked.
    pub verify: Option<u32>,
    /// Not a Kafka property: values carry no send time (NaN where it would be), so consumers
    /// measure no end-to-end latency for them (a preloaded backlog). Default false.
    pub unstamped: bool,
}

impl ProducerProperties {
    fn validate(&self, size: &Size) -> Result<()> {
        let bad = |m: &str| Err(Error::Config(m.to_string()));
        if self.buffer_memory == Some(0) || self.max_request_size == Some(0) {
            return bad("buffer.memory and max.request.size must be positive");
        }
        if self.request_timeout_ms.is_some_and(|t| t <= 0) {
            return bad("request.timeout.ms must be positive");
        }
        if self.verify.is_some() {
            let smallest = match size {
                Size::Fixed(n) => *n as usize,
                Size::Uniform { min, .. } => *min as usize,
                Size::Table(sizes) => sizes.iter().copied().min().unwrap_or(0) as usize,
                Size::Payload(bytes) => bytes.len(),
            };
            if smallest < MARKED_VALUE_BYTES {
                return Err(Error::Config(format!(
                    "verify: every value carries its send time and a mark of {MARKED_VALUE_BYTES} bytes in all, so messageSize must be at least {MARKED_VALUE_BYTES} bytes (the smallest is {smallest})"
                )));
            }
        }
        Ok(())
    }
}

impl ProducerConfig {
    fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::Config(m.to_string()));
        if self.topics.is_empty() {
            return bad("no topics");
        }
        if ![0, 1, -1].contains(&self.acks) {
            return bad("acks must be 0, 1 or -1");
        }
        if self.idempotence && self.acks != -1 {
            return bad("idempotence needs acks = -1 (all)");
        }
        if self.max_in_flight == 0 || self.batch_size == 0 {
            return bad("maxInFlight and batchSize must be positive");
        }
        match &self.message_size {
            Size::Uniform { min, max } if min > max => {
                return bad("messageSize min is above max");
            }
            Size::Table(sizes) if sizes.is_empty() => return bad("the size table is empty"),
            _ => {}
        }
        if matches!(self.keys, Keys::RoundRobin(0)) {
            return bad("roundRobin needs at least one key");
        }
        if self.rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
            return bad("rate must be a positive number");
        }
        if !self.clock_offset_micros.is_finite() {
            return bad("clockOffsetMicros must be a finite number");
        }
        Ok(())
    }
}

/// With verification: (topic, partition) of each partition slot, and the sequences acknowledged
/// in each, shared with the engine task.
type Verified = (Vec<(String, i32)>, Arc<Mutex<Vec<Ranges>>>);

/// A running producer.
#[derive(Debug)]
pub struct Producer {
    task: EngineTask,
    effective: Vec<(&'static str, String)>,
    /// With verification: (topic, partition) of each partition slot, and what was acknowledged.
    verified: Option<Verified>,
    verify: Option<u32>,
}

impl Producer {
    /// Bootstraps (metadata, producer id) and starts producing on the current tokio runtime.
    pub async fn start(config: ProducerConfig) -> Result<Producer> {
        Self::start_with(config, ProducerProperties::default()).await
    }

    /// Like `start`, with Kafka producer properties beyond the knobs.
    pub async fn start_with(
        config: ProducerConfig,
        properties: ProducerProperties,
    ) -> Result<Producer> {
        config.validate()?;
        properties.validate(&config.message_size)?;
        let mut metadata =
            MetadataClient::connect_with(&config.bootstrap, &properties.security).await?;
        metadata.set_request_timeout(Duration::from_millis(
            properties.request_timeout_ms.unwrap_or(REQUEST_TIMEOUT_MS) as u64,
        ));
        let cluster = metadata
            .fetch(&config.topics, Duration::from_secs(10))
            .await?;
        let produce_version = metadata.versions().pick::<ProduceRequest>()?;
        let producer = if config.idempotence {
            init_producer_id(&mut metadata).await?
        } else {
            ProducerFields::NONE
        };
        let shared = Arc::new(Shared::default());
        let engine = Engine::new(
            config,
            &properties,
            shared.clone(),
            metadata,
            cluster,
            produce_version,
            producer,
        );
        let effective = engine.effective_properties();
        let verify = properties.verify;
        let verified = engine.acknowledged.clone().map(|acked| {
            let names = engine
                .partitions
                .iter()
                .map(|p| (engine.cluster.topics[p.topic].name.clone(), p.index))
                .collect();
            (names, acked)
        });
        Ok(Producer {
            task: EngineTask::spawn(shared, engine.run()),
            effective,
            verified,
            verify,
        })
    }

    /// The producer number its values are marked with; None without verification.
    pub fn verify_number(&self) -> Option<u32> {
        self.verify
    }

    /// With verification, the sequences acknowledged so far in each partition (topic, partition,
    /// ranges); empty without.
    pub fn acknowledged(&self) -> Vec<(String, i32, Ranges)> {
        let Some((names, acked)) = &self.verified else {
            return vec![];
        };
        let acked = acked.lock().unwrap_or_else(|e| e.into_inner());
        names
            .iter()
            .zip(acked.iter())
            .map(|((t, p), r)| (t.clone(), *p, r.clone()))
            .collect()
    }

    /// The Kafka producer properties this producer runs with, by their Java names, defaults included.
    pub fn effective_properties(&self) -> &[(&'static str, String)] {
        &self.effective
    }

    pub fn take_interval(&self) -> IntervalStats {
        self.task.take_interval()
    }

    pub fn last_error(&self) -> Option<String> {
        self.task.last_error()
    }

    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Resolves when the records or duration are done, or after `stop`.
    pub async fn finished(&self) {
        self.task.finished().await;
    }

    /// Stops generating, waits briefly for requests in flight, and ends the run. Idempotent.
    pub async fn stop(&self) {
        self.task.stop().await;
    }
}

async fn init_producer_id(metadata: &mut MetadataClient) -> Result<ProducerFields> {
    let request = InitProducerIdRequest::default()
        .with_transactional_id(None)
        .with_transaction_timeout_ms(-1)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    let response = metadata.call(&request).await?;
    if response.error_code != 0 {
        return Err(Error::Kafka {
            api: "InitProducerId",
            code: response.error_code,
        });
    }
    Ok(ProducerFields {
        producer_id: response.producer_id.0,
        producer_epoch: response.producer_epoch,
        base_sequence: 0,
    })
}

/// A closed batch waiting to be sent, in flight, or waiting for a retry.
#[derive(Debug)]
struct ClosedBatch {
    partition: usize,
    bytes: Bytes,
    /// Send time of each record (intended or appended), µs since the epoch.
    times: Vec<f64>,
    value_bytes: u64,
    /// Uncompressed size, as counted against the buffer limit.
    buffered: usize,
    /// The verification sequence of its first record (its records follow in order).
    first_seq: u64,
}

#[derive(Debug)]
struct PartitionState {
    topic: usize,
    index: i32,
    leader: i32,
    open: BatchBuilder,
    open_times: Vec<f64>,
    open_value_bytes: u64,
    open_since: Option<Instant>,
    ready: VecDeque<ClosedBatch>,
    next_sequence: i32,
    /// The sequence of the next record appended (marked in its value with verification).
    verify_next: u64,
}

#[derive(Debug)]
struct InFlight {
    batches: Vec<ClosedBatch>,
    /// The request's size on the wire, counted when its fate is known (answered or its connection
    /// lost), in the same interval as the records it acknowledges: counted at send, a short
    /// measured window showed fewer wire bytes than value bytes (requests sent in warm-up, acked after).
    wire: u64,
    /// Unanswered past this (`request.timeout.ms` after it was written), it is given up.
    due: Instant,
}

struct Engine {
    config: ProducerConfig,
    shared: Arc<Shared>,
    metadata: MetadataClient,
    cluster: ClusterMetadata,
    produce_version: i16,
    producer: ProducerFields,
    topic_names: Vec<TopicName>,
    /// Index in `partitions` of partition 0 of each topic.
    topic_base: Vec<usize>,
    partitions: Vec<PartitionState>,
    /// A pipelined connection per leader, up to `max_in_flight` requests awaiting answers each.
    connections: Pool,
    /// Produce requests awaiting an answer, by (connection, correlation id).
    in_flight: HashMap<(u64, i32), InFlight>,
    buffer_limit: usize,
    max_request_size: usize,
    request_timeout_ms: i32,
    /// No request in flight expires before this (see `expire_requests`); None with none in flight.
    next_due: Option<Instant>,
    buffered: usize,
    /// Where the next request to each node starts taking batches (see `take_batches`).
    drain: DrainCursors,
    sticky: usize,
    rng: Rng,
    pool: ValuePool,
    key: Vec<u8>,
    key_counter: u64,
    /// The next entry of a size table.
    size_cursor: usize,
    times_pool: Vec<Vec<f64>>,
    generated: u64,
    settled: u64,
    refresh_needed: bool,
    retry_at: Option<Instant>,
    /// With verification: the sequences acknowledged, per partition slot.
    acknowledged: Option<Arc<Mutex<Vec<Ranges>>>>,
    verify: Option<u32>,
    /// Values carry no send time (see `ProducerProperties::unstamped`).
    unstamped: bool,
}

impl Engine {
    fn new(
        config: ProducerConfig,
        properties: &ProducerProperties,
        shared: Arc<Shared>,
        metadata: MetadataClient,
        cluster: ClusterMetadata,
        produce_version: i16,
        producer: ProducerFields,
    ) -> Engine {
        let mut rng = Rng::seeded_from_clock();
        let pool = ValuePool::new(config.message_size.max() as usize, &mut rng);
        let mut partitions = vec![];
        let mut topic_base = vec![];
        for (t, topic) in cluster.topics.iter().enumerate() {
            topic_base.push(partitions.len());
            for (index, &leader) in topic.leaders.iter().enumerate() {
                partitions.push(PartitionState {
                    topic: t,
                    index: index as i32,
                    leader,
                    open: BatchBuilder::new(config.compression, config.batch_size as usize),
                    open_times: vec![],
                    open_value_bytes: 0,
                    open_since: None,
                    ready: VecDeque::new(),
                    next_sequence: 0,
                    verify_next: 0,
                });
            }
        }
        let partitions_len = partitions.len();
        let buffer_limit = properties.buffer_memory.unwrap_or(match config.rate {
            Some(_) => FIXED_RATE_BUFFER_BYTES,
            // Closed loop: about one full batch per partition waiting, the rest in flight.
            None => config.batch_size as usize * partitions.len().max(1),
        });
        let topic_names = cluster
            .topics
            .iter()
            .map(|t| TopicName(StrBytes::from_string(t.name.clone())))
            .collect();
        let connections = Pool::new(crate::connect::options(
            config.max_in_flight as usize,
            &properties.security,
        ));
        Engine {
            shared,
            metadata,
            cluster,
            produce_version,
            producer,
            topic_names,
            topic_base,
            partitions,
            connections,
            in_flight: HashMap::new(),
            buffer_limit,
            max_request_size: properties.max_request_size.unwrap_or(MAX_REQUEST_BYTES),
            request_timeout_ms: properties.request_timeout_ms.unwrap_or(REQUEST_TIMEOUT_MS),
            next_due: None,
            buffered: 0,
            drain: DrainCursors::default(),
            sticky: 0,
            rng,
            pool,
            key: Vec::with_capacity(32),
            key_counter: 0,
            size_cursor: 0,
            times_pool: vec![],
            generated: 0,
            settled: 0,
            refresh_needed: false,
            retry_at: None,
            acknowledged: properties
                .verify
                .map(|_| Arc::new(Mutex::new(vec![Ranges::new(); partitions_len]))),
            verify: properties.verify,
            unstamped: properties.unstamped,
            config,
        }
    }

    fn stats(&self) -> &SharedStats {
        &self.shared.stats
    }

    fn effective_properties(&self) -> Vec<(&'static str, String)> {
        let c = &self.config;
        vec![
            (
                "acks",
                if c.acks == -1 {
                    "all".to_string()
                } else {
                    c.acks.to_string()
                },
            ),
            ("batch.size", c.batch_size.to_string()),
            ("linger.ms", c.linger_ms.to_string()),
            (
                "compression.type",
                compression_name(c.compression).to_string(),
            ),
            ("enable.idempotence", c.idempotence.to_string()),
            (
                "max.in.flight.requests.per.connection",
                c.max_in_flight.to_string(),
            ),
            ("buffer.memory", self.buffer_limit.to_string()),
            ("max.request.size", self.max_request_size.to_string()),
            ("request.timeout.ms", self.request_timeout_ms.to_string()),
        ]
    }

    async fn run(mut self) {
        let start = Instant::now();
        let start_micros = now_micros();
        let generate_until = self.config.duration.map(|d| start + d);
        let mut stop_deadline = None;
        loop {
            let now = Instant::now();
            let stopping = self.shared.stopping.load(Ordering::Acquire);
            if stopping && stop_deadline.is_none() {
                stop_deadline = Some(now + DRAIN_ON_STOP);
                self.drop_unsent();
            }
            let generating = !stopping
                && generate_until.is_none_or(|end| now < end)
                && self.config.records.is_none_or(|n| self.generated < n);
            if generating {
                self.generate(start, start_micros);
            }
            if self.refresh_needed && self.retry_at.is_none_or(|t| now >= t) {
                self.refresh_metadata().await;
            }
            if !stopping {
                self.send_ready(!generating).await;
            }
            if self.next_due.is_some_and(|d| now >= d) && self.expire_requests(now) {
                // Their records are back in the queues and a refresh is due: round again now.
                continue;
            }
            let nothing_pending = self.in_flight.is_empty()
                && (stopping || (self.buffered == 0 && self.settled >= self.generated));
            if !generating && nothing_pending {
                break;
            }
            if stop_deadline.is_some_and(|d| now >= d) {
                break;
            }
            let wake = self.next_wakeup(generating, start, generate_until, stop_deadline);
            tokio::select! {
                biased;
                response = self.connections.recv() => {
                    self.on_response(response);
                    while let Some(more) = self.connections.try_recv() {
                        self.on_response(more);
                    }
                }
                _ = self.shared.stop.notified() => {}
                _ = sleep_until(wake) => {}
            }
        }
        self.connections.clear();
    }

    /// Gives up on the requests unanswered for `request.timeout.ms`, as the Java client does: their
    /// connection is closed and their records are sent again. Without it a broker that holds
    /// requests (a paused node) or a connection that died without a word (a half-open TCP
    /// connection) would leave them waiting for good, and the run would measure the wait.
    /// Called once `next_due` has passed (so not on every turn of the loop), it sets `next_due`
    /// anew; true when it gave any up.
    fn expire_requests(&mut self, now: Instant) -> bool {
        let mut expired: Vec<u64> = self
            .in_flight
            .iter()
            .filter(|(_, f)| now >= f.due)
            .map(|(&(connection, _), _)| connection)
            .collect();
        expired.sort_unstable();
        expired.dedup();
        for &connection in &expired {
            self.stats().error(format!(
                "produce: no answer within request.timeout.ms ({} ms): connection closed, its records sent again",
                self.request_timeout_ms
            ));
            self.connection_lost(connection);
        }
        self.next_due = self.in_flight.values().map(|f| f.due).min();
        !expired.is_empty()
    }

    fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms as u64)
    }

    /// When to look again if no response arrives first.
    fn next_wakeup(
        &self,
        generating: bool,
        start: Instant,
        generate_until: Option<Instant>,
        stop_deadline: Option<Instant>,
    ) -> Option<Instant> {
        let mut wake: Option<Instant> = None;
        let mut at = |t: Instant| wake = Some(wake.map_or(t, |w| w.min(t)));
        if generating {
            if let Some(rate) = self.config.rate {
                if self.buffered < self.buffer_limit {
                    at(start + Duration::from_secs_f64(self.generated as f64 / rate));
                }
            } else if self.buffered < self.buffer_limit {
                at(Instant::now());
            }
            if let Some(end) = generate_until {
                at(end);
            }
        }
        let linger = Duration::from_millis(u64::from(self.config.linger_ms));
        for p in &self.partitions {
            if let Some(since) = p.open_since {
                at(since + linger);
            }
        }
        if let Some(t) = self.retry_at.filter(|_| self.refresh_needed) {
            at(t);
        }
        // The oldest request's expiry, or earlier (its answer may have come: a scan then finds
        // nothing and looks further).
        if let Some(t) = self.next_due {
            at(t);
        }
        if let Some(t) = stop_deadline {
            at(t);
        }
        wake
    }

    /// Appends the records that are due: by the schedule (fixed rate) or up to the buffer limit.
    fn generate(&mut self, start: Instant, start_micros: f64) {
        let limit = self.config.records.unwrap_or(u64::MAX);
        match self.config.rate {
            Some(rate) => {
                let elapsed = start.elapsed().as_secs_f64();
                let due = ((elapsed * rate).floor() as u64 + 1).min(limit);
                while self.generated < due && self.buffered < self.buffer_limit {
                    let intended = start_micros + self.generated as f64 * 1e6 / rate;
                    self.append_record(intended);
                }
            }
            None => {
                while self.generated < limit && self.buffered < self.buffer_limit {
                    self.append_record(now_micros());
                }
            }
        }
    }

    #[inline]
    fn append_record(&mut self, send_micros: f64) {
        let value_len = match &self.config.message_size {
            Size::Fixed(n) => *n as usize,
            Size::Uniform { min, max } => self.rng.between(*min, *max) as usize,
            Size::Table(sizes) => {
                let n = sizes[self.size_cursor];
                self.size_cursor += 1;
                if self.size_cursor == sizes.len() {
                    self.size_cursor = 0;
                }
                n as usize
            }
            Size::Payload(bytes) => bytes.len(),
        };
        let keyed = self.fill_key();
        let mut partition = if keyed {
            let topic = (self.generated % self.topic_base.len() as u64) as usize;
            let count = self.cluster.topics[topic].leaders.len();
            self.topic_base[topic] + partition_for_key(&self.key, count)
        } else {
            self.sticky
        };
        let timestamp_ms = (send_micros / 1000.0) as i64;
        let key_len = keyed.then_some(self.key.len());
        let p = &self.partitions[partition];
        if !p.open.is_empty()
            && p.open.len() + p.open.record_size(timestamp_ms, key_len, value_len)
                > self.config.batch_size as usize
        {
            self.close(partition);
            if !keyed {
                partition = self.sticky;
            }
        }
        let key = keyed.then_some(&self.key[..]);
        let value = match &self.config.message_size {
            Size::Payload(bytes) => &bytes[..],
            _ => self.pool.next(value_len),
        };
        let p = &mut self.partitions[partition];
        // Validated: with verification every value is long enough for its mark.
        // Every record takes a sequence (a batch's first is its count back from the next).
        let seq = p.verify_next;
        p.verify_next += 1;
        let marked = self.verify.map(|producer| mark(producer, seq));
        let before = p.open.len();
        let stamp = if self.unstamped {
            f64::NAN
        } else {
            send_micros - self.config.clock_offset_micros
        };
        p.open
            .append_marked(timestamp_ms, key, value, stamp, marked.as_ref());
        self.buffered += p.open.len() - before;
        p.open_times.push(send_micros);
        p.open_value_bytes += value_len as u64;
        if p.open_since.is_none() {
            p.open_since = Some(Instant::now());
        }
        self.generated += 1;
    }

    /// Writes this record's key into `self.key`; false when records have no key.
    #[inline]
    fn fill_key(&mut self) -> bool {
        use std::io::Write;
        self.key.clear();
        match self.config.keys {
            Keys::None => return false,
            Keys::Random => {
                let _ = write!(self.key, "{:016x}", self.rng.next_u64());
            }
            Keys::RoundRobin(n) => {
                let _ = write!(self.key, "key-{}", self.key_counter % u64::from(n));
                self.key_counter += 1;
            }
        }
        true
    }

    /// Closes the open batch of a partition into its ready queue; moves the sticky partition on.
    fn close(&mut self, partition: usize) {
        let idempotent = self.config.idempotence;
        let p = &mut self.partitions[partition];
        if p.open.is_empty() {
            return;
        }
        let fields = if idempotent {
            let fields = ProducerFields {
                base_sequence: p.next_sequence,
                ..self.producer
            };
            p.next_sequence = p.next_sequence.wrapping_add(p.open.records()) & i32::MAX;
            fields
        } else {
            ProducerFields::NONE
        };
        // Only record bytes count against the buffer limit, not the batch header.
        let buffered = p.open.len() - crate::batch::HEADER_BYTES;
        match p.open.finish(fields) {
            Ok(bytes) => {
                let spare = self.times_pool.pop().unwrap_or_default();
                let first_seq = p.verify_next - p.open_times.len() as u64;
                let batch = ClosedBatch {
                    partition,
                    first_seq,
                    bytes,
                    times: std::mem::replace(&mut p.open_times, spare),
                    value_bytes: std::mem::take(&mut p.open_value_bytes),
                    buffered,
                };
                p.ready.push_back(batch);
            }
            Err(e) => {
                // Only compression can fail here; the records are lost and counted as settled.
                self.settled += p.open_times.len() as u64;
                self.buffered -= buffered;
                p.open_times.clear();
                p.open_value_bytes = 0;
                self.shared.stats.error(e.to_string());
            }
        }
        p.open_since = None;
        if partition == self.sticky {
            self.sticky = (self.sticky + 1) % self.partitions.len();
        }
    }

    /// Unsent records are dropped on stop: they were never sent, so they have no latency.
    fn drop_unsent(&mut self) {
        for p in &mut self.partitions {
            p.ready.clear();
            p.open_times.clear();
            p.open_value_bytes = 0;
            p.open_since = None;
            let _ = p.open.finish(ProducerFields::NONE);
        }
        self.buffered = 0;
    }

    /// Sends produce requests to every leader with a free in-flight slot and batches to send.
    /// `flush` sends open batches regardless of linger (nothing more is coming).
    async fn send_ready(&mut self, flush: bool) {
        let mut leaders: Vec<i32> = self.partitions.iter().map(|p| p.leader).collect();
        leaders.sort_unstable();
        leaders.dedup();
        let linger = Duration::from_millis(u64::from(self.config.linger_ms));
        for node in leaders {
            loop {
                let acks = self.config.acks;
                let free = match self.connection(node).await {
                    Some(c) => acks == 0 || c.has_room(),
                    None => false,
                };
                if !free {
                    break;
                }
                let now = Instant::now();
                let batches = self.take_batches(node, now, linger, flush);
                if batches.is_empty() {
                    break;
                }
                if !self.send_request(node, batches).await {
                    break;
                }
            }
        }
    }

    /// One batch per partition led by `node`, up to the request size limit, taken round the
    /// partitions from where the previous request to `node` stopped (as the Java client's
    /// accumulator does). Starting at partition 0 every time starved the last partitions whenever
    /// the first ones filled a request: with 100 partitions and 128 KiB batches under a closed loop,
    /// their oldest records waited longer and longer, the whole run.
    fn take_batches(
        &mut self,
        node: i32,
        now: Instant,
        linger: Duration,
        flush: bool,
    ) -> Vec<ClosedBatch> {
        let mut batches = vec![];
        let mut bytes = 0;
        // The cursors are taken out for the walk, whose visits need the rest of the engine.
        let mut drain = std::mem::take(&mut self.drain);
        drain.walk(node, self.partitions.len(), |i| {
            let p = &self.partitions[i];
            if p.leader != node {
                return Visit::Skip;
            }
            if p.ready.is_empty() {
                let expired = p.open_since.is_some_and(|s| flush || now >= s + linger);
                if !expired {
                    return Visit::Skip;
                }
                self.close(i);
            }
            let p = &mut self.partitions[i];
            let Some(next) = p.ready.front() else {
                return Visit::Skip;
            };
            if !batches.is_empty() && bytes + next.bytes.len() > self.max_request_size {
                return Visit::Full;
            }
            let batch = p.ready.pop_front().expect("front exists");
            bytes += batch.bytes.len();
            self.buffered -= batch.buffered;
            batches.push(batch);
            Visit::Took
        });
        self.drain = drain;
        batches
    }

    /// The connection to `node`, connecting if needed; None (error counted) if unreachable.
    async fn connection(&mut self, node: i32) -> Option<&mut Connection> {
        let addr = self.cluster.leader_addr(node)?;
        if self.connections.get(addr).is_none() {
            if self.retry_at.is_some_and(|t| Instant::now() < t) {
                return None;
            }
            if let Err(e) = self.connections.connect(addr).await {
                self.shared.stats.error(e.to_string());
                self.refresh_needed = true;
                self.retry_at = Some(Instant::now() + RETRY_BACKOFF);
                return None;
            }
        }
        self.connections.get(addr)
    }

    /// Sends one produce request; false (batches requeued) if the connection failed.
    async fn send_request(&mut self, node: i32, batches: Vec<ClosedBatch>) -> bool {
        let request = self.produce_request(&batches);
        let acks = self.config.acks;
        let version = self.produce_version;
        let connection = self
            .cluster
            .leader_addr(node)
            .and_then(|a| self.connections.get(a));
        let Some(connection) = connection else {
            self.requeue(batches);
            return false;
        };
        let id = connection.id();
        match connection.send(version, &request, acks != 0).await {
            Ok((correlation_id, wire)) => {
                if acks == 0 {
                    self.stats().add_wire_bytes(wire as u64);
                    self.acked(batches, now_micros());
                } else {
                    let wire = wire as u64;
                    let due = Instant::now() + self.request_timeout();
                    self.in_flight
                        .insert((id, correlation_id), InFlight { batches, wire, due });
                    self.next_due = Some(self.next_due.map_or(due, |d| d.min(due)));
                }
                true
            }
            Err(e) => {
                self.stats().error(e.to_string());
                self.requeue(batches);
                self.connection_lost(id);
                false
            }
        }
    }

    fn produce_request(&self, batches: &[ClosedBatch]) -> ProduceRequest {
        let mut topics: Vec<TopicProduceData> = vec![];
        for batch in batches {
            let p = &self.partitions[batch.partition];
            let data = PartitionProduceData::default()
                .with_index(p.index)
                .with_records(Some(batch.bytes.clone()));
            match topics
                .iter_mut()
                .find(|t| t.name == self.topic_names[p.topic])
            {
                Some(t) => t.partition_data.push(data),
                None => topics.push(
                    TopicProduceData::default()
                        .with_name(self.topic_names[p.topic].clone())
                        .with_topic_id(self.cluster.topics[p.topic].id)
                        .with_partition_data(vec![data]),
                ),
            }
        }
        ProduceRequest::default()
            .with_acks(self.config.acks)
            .with_timeout_ms(self.request_timeout_ms)
            .with_topic_data(topics)
    }

    /// Closes connection `id` (if the pool has not already) and requeues what awaited it.
    fn connection_lost(&mut self, id: u64) {
        self.connections.remove(id);
        let lost: Vec<_> = self
            .in_flight
            .keys()
            .filter(|(c, _)| *c == id)
            .copied()
            .collect();
        for key in lost {
            if let Some(f) = self.in_flight.remove(&key) {
                self.stats().add_wire_bytes(f.wire);
                self.requeue(f.batches);
            }
        }
        self.refresh_needed = true;
    }

    /// Puts batches back at the front of their partitions' queues, in their original order.
    fn requeue(&mut self, batches: Vec<ClosedBatch>) {
        let records: usize = batches.iter().map(|b| b.times.len()).sum();
        self.stats().add_retries(records as u64);
        for batch in batches.into_iter().rev() {
            self.buffered += batch.buffered;
            self.partitions[batch.partition].ready.push_front(batch);
        }
    }

    /// An answer from the pool (matched to its request there), or why a connection died.
    fn on_response(&mut self, response: Response) {
        let frame = match response.frame {
            Ok(frame) => frame,
            Err(e) => {
                self.stats().error(e.to_string());
                self.connection_lost(response.connection);
                return;
            }
        };
        let Some(in_flight) = self
            .in_flight
            .remove(&(response.connection, response.correlation_id))
        else {
            return;
        };
        self.stats().add_wire_bytes(in_flight.wire);
        let ack_micros = now_micros();
        let response = match decode_response::<ProduceRequest>(frame, self.produce_version) {
            Ok(r) => r,
            Err(e) => {
                self.stats().error(e.to_string());
                self.requeue(in_flight.batches);
                self.connection_lost(response.connection);
                return;
            }
        };
        let codes = self.partition_codes(&response);
        let mut acked = Vec::with_capacity(in_flight.batches.len());
        let mut retry = vec![];
        for batch in in_flight.batches {
            let code = codes
                .iter()
                .find(|(p, _)| *p == batch.partition)
                .map_or(13, |(_, c)| *c); // a partition missing from the response: retry
            if code == 0 || code == DUPLICATE_SEQUENCE_NUMBER {
                acked.push(batch);
            } else if is_retriable(code) {
                self.stats()
                    .error(format!("produce: {}, retrying", kafka_error(code)));
                self.refresh_needed = true;
                retry.push(batch);
            } else {
                self.stats()
                    .error(format!("produce: {}", kafka_error(code)));
                self.settled += batch.times.len() as u64;
                self.recycle(batch);
            }
        }
        self.requeue(retry);
        self.acked(acked, ack_micros);
    }

    /// (partition slot, error code) for each partition of a produce response.
    fn partition_codes(&self, response: &ProduceResponse) -> Vec<(usize, i16)> {
        let mut codes = vec![];
        for topic in &response.responses {
            let t = self.cluster.topics.iter().position(|m| {
                m.name == topic.name.as_str() || (!m.id.is_nil() && m.id == topic.topic_id)
            });
            let Some(t) = t else { continue };
            for p in &topic.partition_responses {
                if let Ok(i) = usize::try_from(p.index) {
                    if i < self.cluster.topics[t].leaders.len() {
                        codes.push((self.topic_base[t] + i, p.error_code));
                    }
                }
            }
        }
        codes
    }

    fn acked(&mut self, batches: Vec<ClosedBatch>, ack_micros: f64) {
        if batches.is_empty() {
            return;
        }
        let mut records = 0;
        self.shared.stats.add_measured(|h| {
            let mut value_bytes = 0;
            for batch in &batches {
                for &t in &batch.times {
                    h.record(ack_micros - t);
                }
                records += batch.times.len() as u64;
                value_bytes += batch.value_bytes;
            }
            (records, value_bytes)
        });
        self.settled += records;
        if let Some(acknowledged) = &self.acknowledged {
            let mut ranges = acknowledged.lock().unwrap_or_else(|e| e.into_inner());
            for batch in &batches {
                let end = batch.first_seq + batch.times.len() as u64;
                ranges[batch.partition].insert(batch.first_seq, end);
            }
        }
        for batch in batches {
            self.recycle(batch);
        }
    }

    fn recycle(&mut self, mut batch: ClosedBatch) {
        batch.times.clear();
        if self.times_pool.len() < 1024 {
            self.times_pool.push(batch.times);
        }
    }

    async fn refresh_metadata(&mut self) {
        let topics = self.config.topics.clone();
        match self.metadata.fetch(&topics, Duration::ZERO).await {
            Ok(cluster) => {
                for p in &mut self.partitions {
                    if let Some(&leader) = cluster.topics[p.topic].leaders.get(p.index as usize) {
                        p.leader = leader;
                    }
                }
                // Connections to nodes that lead nothing now are closed when dropped.
                self.cluster.brokers = cluster.brokers;
                self.refresh_needed = false;
                self.retry_at = None;
            }
            Err(e) => {
                self.stats().error(format!("metadata refresh: {e}"));
                self.retry_at = Some(Instant::now() + RETRY_BACKOFF);
            }
        }
    }
}

/// A codec by its Kafka name.
fn compression_name(c: Compression) -> &'static str {
    match c {
        Compression::None => "none",
        Compression::Gzip => "gzip",
        Compression::Snappy => "snappy",
        Compression::Lz4 => "lz4",
        Compression::Zstd => "zstd",
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Where the next produce request to each node starts taking partitions' batches: just after the
/// last partition the previous request took from, or at the partition that did not fit in it.
#[derive(Debug, Default)]
struct DrainCursors(HashMap<i32, usize>);

/// What a request did with one partition on its walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visit {
    /// Not this node's, or nothing ready: on to the next.
    Skip,
    /// Its batch went into the request.
    Took,
    /// Its batch does not fit: the request is full, and this partition starts the next one.
    Full,
}

impl DrainCursors {
    /// The partition index a request to `node` starts at, among `len` partitions.
    fn start(&self, node: i32, len: usize) -> usize {
        self.0
            .get(&node)
            .map_or(0, |&at| if at < len { at } else { 0 })
    }

    /// Visits `node`'s request round all `len` partitions from its cursor, and moves the cursor on
    /// past the last partition taken (or to the one that did not fit).
    fn walk(&mut self, node: i32, len: usize, mut visit: impl FnMut(usize) -> Visit) {
        let start = self.start(node, len);
        let mut resume = start;
        for i in (0..len).map(|k| (start + k) % len) {
            match visit(i) {
                Visit::Skip => {}
                Visit::Took => resume = (i + 1) % len,
                Visit::Full => {
                    resume = i;
                    break;
                }
            }
        }
        self.0.insert(node, resume);
    }
}

#[cfg(test)]
mod drain_tests {
    use super::*;

    /// Requests to node 1 over `len` partitions that always have a batch ready, each full after
    /// `per_request` batches: how many requests each partition was in.
    fn saturated(len: usize, per_request: usize, requests: usize) -> Vec<usize> {
        let mut drain = DrainCursors::default();
        let mut served = vec![0; len];
        for _ in 0..requests {
            let mut taken = 0;
            drain.walk(1, len, |i| {
                if taken == per_request {
                    return Visit::Full;
                }
                taken += 1;
                served[i] += 1;
                Visit::Took
            });
        }
        served
    }

    #[test]
    fn full_requests_take_every_partition_in_turn() {
        // 33 partitions always full, 8 batches a request: after 33 requests each was in 8.
        assert_eq!(saturated(33, 8, 33), vec![8; 33]);
        // No partition waits more than ceil(len / per_request) requests.
        let served = saturated(100, 8, 13);
        assert!(served.iter().all(|&n| n >= 1), "{served:?}");
    }

    #[test]
    fn a_request_that_skips_partitions_resumes_after_the_last_one_taken() {
        let mut drain = DrainCursors::default();
        // Only partitions 2 and 5 of 8 have batches: the next request starts at 6.
        drain.walk(1, 8, |i| {
            if i == 2 || i == 5 {
                Visit::Took
            } else {
                Visit::Skip
            }
        });
        assert_eq!(drain.start(1, 8), 6);
        // The next request starts at 6 and wraps round: 6, 7, 0, 1, ... in that order.
        let mut order = vec![];
        drain.walk(1, 8, |i| {
            order.push(i);
            Visit::Skip
        });
        assert_eq!(order, vec![6, 7, 0, 1, 2, 3, 4, 5]);
        // Nothing taken: the cursor stays.
        assert_eq!(drain.start(1, 8), 6);
    }

    #[test]
    fn a_cursor_past_the_partitions_starts_again_at_the_first() {
        let mut drain = DrainCursors::default();
        assert_eq!(drain.start(2, 10), 0);
        drain.0.insert(2, 12);
        assert_eq!(drain.start(2, 10), 0);
        drain.walk(2, 0, |_| Visit::Took);
        assert_eq!(drain.start(2, 10), 0);
        assert_eq!(drain.start(3, 10), 0);
    }
}
