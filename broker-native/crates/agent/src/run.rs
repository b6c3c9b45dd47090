//! One run's clients on this agent: the producers and consumers a controller started, their
//! intervals merged into one per role, and stopping them.

use std::collections::HashMap;
use std::future::Future;

use futures::future::{join, join_all};
use kbench_loadgen::options::properties_map;
use kbench_loadgen::verify::Ranges;
use kbench_loadgen::{
    Consumer, ConsumerConfig, ConsumerOptions, ConsumerProperties, IntervalStats, Producer,
    ProducerConfig, ProducerOptions, ProducerProperties,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::MAX_ACKNOWLEDGED_BYTES;

/// The most one partition's entry of an `acknowledged` reply takes as JSON, its topic aside
/// (`{"producer":u32,"topic":,"partition":i32,"starts":[],"ends":[]},`), and one range (two u64).
const ENTRY_JSON_BYTES: usize = 90;
const RANGE_JSON_BYTES: usize = 42;

/// A run claimed by one connection (`prepare`) until it is released.
#[derive(Debug)]
pub(crate) struct Run {
    pub id: String,
    pub target: Vec<String>,
    /// What the agent's clients subtract from their clock: the controller's measured offset,
    /// less the test hook's skew (the clients' clock is the real one).
    pub client_clock_offset_micros: f64,
    pub producers: Vec<Producer>,
    pub consumers: Vec<Consumer>,
}

impl Run {
    /// Counts since the previous take, merged over the run's clients (the `take` reply's body).
    pub fn take(&self) -> serde_json::Map<String, Value> {
        let merge = |intervals: Vec<IntervalStats>| {
            intervals
                .iter()
                .fold(IntervalStats::default(), |mut all, i| {
                    all.merge(i);
                    all
                })
        };
        let producers = merge(self.producers.iter().map(Producer::take_interval).collect());
        let consumers = merge(self.consumers.iter().map(Consumer::take_interval).collect());
        let error = self
            .producers
            .iter()
            .map(Producer::last_error)
            .chain(self.consumers.iter().map(Consumer::last_error))
            .find_map(|e| e);
        let mut body = serde_json::Map::new();
        body.insert("producers".into(), interval_json(&producers));
        body.insert("consumers".into(), interval_json(&consumers));
        body.insert(
            "producersFinished".into(),
            self.producers.iter().all(Producer::is_finished).into(),
        );
        body.insert("error".into(), error.into());
        body
    }

    /// The `acknowledged` reply's body: for each producer that marks its records, the sequences
    /// acknowledged in each partition (see [`acknowledged_body`]).
    pub fn acknowledged(&self) -> Result<serde_json::Map<String, Value>, String> {
        acknowledged_body(
            self.producers
                .iter()
                .filter_map(|p| p.verify_number().map(|n| (n, p.acknowledged())))
                .collect(),
        )
    }

    /// Stops every client at once and waits until each has.
    pub async fn stop(&self) {
        join(
            join_all(self.producers.iter().map(Producer::stop)),
            join_all(self.consumers.iter().map(Consumer::stop)),
        )
        .await;
    }
}

/// What `startProducers` and `startConsumers` have in common, per kind of client.
pub(crate) trait Role: Sized + Send + Sync + 'static {
    /// The request's list field and the op.
    const FIELD: &'static str;
    const OP: &'static str;
    type Options: DeserializeOwned + Send;
    type Engine: Send;
    fn bootstrap(options: &Self::Options) -> &[String];
    /// The engine's config, on the controller's timeline by `clock_offset_micros`.
    fn engine(
        options: Self::Options,
        clock_offset_micros: f64,
    ) -> kbench_loadgen::Result<Self::Engine>;
    fn start(engine: Self::Engine) -> impl Future<Output = kbench_loadgen::Result<Self>> + Send;
    fn stop(&self) -> impl Future<Output = ()> + Send;
    fn effective(&self) -> &[(&'static str, String)];
    fn clients(run: &mut Run) -> &mut Vec<Self>;
}

/// `Role` for a client type: its list field, its op, its options and engine config types.
macro_rules! role {
    ($client:ident, $field:literal, $op:literal, $options:ty, $config:ty, $properties:ty, $list:ident) => {
        impl Role for $client {
            const FIELD: &'static str = $field;
            const OP: &'static str = $op;
            type Options = $options;
            type Engine = ($config, $properties);
            fn bootstrap(options: &$options) -> &[String] {
                &options.bootstrap
            }
            fn engine(mut options: $options, offset: f64) -> kbench_loadgen::Result<Self::Engine> {
                options.clock_offset_micros = Some(offset);
                options.into_engine()
            }
            fn start(
                engine: Self::Engine,
            ) -> impl Future<Output = kbench_loadgen::Result<Self>> + Send {
                $client::start_with(engine.0, engine.1)
            }
            fn stop(&self) -> impl Future<Output = ()> + Send {
                $client::stop(self)
            }
            fn effective(&self) -> &[(&'static str, String)] {
                self.effective_properties()
            }
            fn clients(run: &mut Run) -> &mut Vec<Self> {
                &mut run.$list
            }
        }
    };
}

role!(
    Producer,
    "producers",
    "startProducers",
    ProducerOptions,
    ProducerConfig,
    ProducerProperties,
    producers
);
role!(
    Consumer,
    "consumers",
    "startConsumers",
    ConsumerOptions,
    ConsumerConfig,
    ConsumerProperties,
    consumers
);

/// Starts every client at once; all or none: when one fails, those started are stopped and the
/// error names the first failure by its index (`what[i]: ...`).
pub(crate) async fn start_all<C, S, F>(
    what: &str,
    starts: Vec<F>,
    stop: S,
) -> Result<Vec<C>, String>
where
    F: Future<Output = kbench_loadgen::Result<C>>,
    S: AsyncFn(&C),
{
    let results = join_all(starts).await;
    let failure = results
        .iter()
        .enumerate()
        .find_map(|(i, r)| r.as_ref().err().map(|e| format!("{what}[{i}]: {e}")));
    let started: Vec<C> = results.into_iter().filter_map(Result::ok).collect();
    match failure {
        None => Ok(started),
        Some(message) => {
            join_all(started.iter().map(|c| stop(c))).await;
            Err(message)
        }
    }
}

/// The effective properties of the first client (they share one configuration), as JSON.
pub(crate) fn properties_json(effective: Option<&[(&'static str, String)]>) -> Value {
    let map: HashMap<String, String> = effective.map(properties_map).unwrap_or_default();
    json!(map)
}

/// Each producer's acknowledged ranges, by its number, as the `acknowledged` reply lists them: one
/// entry per producer and partition, the ranges `[starts[i], ends[i])`. Refused, before the list
/// is built, when it could take more than [`MAX_ACKNOWLEDGED_BYTES`] as JSON (a lossy run
/// fragments ranges).
pub(crate) fn acknowledged_body(
    marked: Vec<(u32, Vec<(String, i32, Ranges)>)>,
) -> Result<serde_json::Map<String, Value>, String> {
    let (mut partitions, mut ranges, mut bound) = (0usize, 0usize, 0usize);
    for (_, acked) in &marked {
        for (topic, _, r) in acked {
            partitions += 1;
            ranges += r.len();
            bound = bound
                .saturating_add(ENTRY_JSON_BYTES + json!(topic).to_string().len())
                .saturating_add(r.len().saturating_mul(RANGE_JSON_BYTES));
        }
    }
    if bound > MAX_ACKNOWLEDGED_BYTES {
        return Err(format!(
            "acknowledged: {ranges} ranges of sequences over {partitions} partitions of {} producers, up to {bound} bytes, more than a reply carries ({MAX_ACKNOWLEDGED_BYTES}): the acknowledged records are too fragmented to send",
            marked.len()
        ));
    }
    let list: Vec<Value> = marked
        .into_iter()
        .flat_map(|(producer, acked)| {
            acked.into_iter().map(move |(topic, partition, r)| {
                let (starts, ends): (Vec<u64>, Vec<u64>) = r.ranges().unzip();
                json!({
                    "producer": producer, "topic": topic, "partition": partition,
                    "starts": starts, "ends": ends,
                })
            })
        })
        .collect();
    let mut body = serde_json::Map::new();
    body.insert("acknowledged".into(), Value::Array(list));
    Ok(body)
}

/// The protocol's Interval: the napi `NativeInterval` with the latency histogram nested.
fn interval_json(s: &IntervalStats) -> Value {
    json!({
        "records": s.records,
        "valueBytes": s.value_bytes,
        "wireBytes": s.wire_bytes,
        "errors": s.errors,
        "errorMessages": s.error_messages.iter()
            .map(|(message, count)| json!({ "message": message, "count": count }))
            .collect::<Vec<_>>(),
        "latency": {
            "buckets": s.latency.buckets,
            "counts": s.latency.counts,
            "count": s.latency.count,
            "sum": s.latency.sum,
            "max": s.latency.max,
        },
        "busy": s.busy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(list: &[(u64, u64)]) -> Ranges {
        let mut r = Ranges::new();
        for &(s, e) in list {
            r.insert(s, e);
        }
        r
    }

    #[test]
    fn acknowledged_lists_each_producer_and_partition_with_its_ranges() {
        let body = acknowledged_body(vec![
            (
                3,
                vec![
                    ("t".into(), 0, ranges(&[(0, 100), (102, 110)])),
                    ("t".into(), 1, Ranges::new()),
                ],
            ),
            (4, vec![("t".into(), 0, ranges(&[(0, 7)]))]),
        ])
        .unwrap();
        assert_eq!(
            Value::Object(body),
            json!({ "acknowledged": [
                { "producer": 3, "topic": "t", "partition": 0, "starts": [0, 102], "ends": [100, 110] },
                { "producer": 3, "topic": "t", "partition": 1, "starts": [], "ends": [] },
                { "producer": 4, "topic": "t", "partition": 0, "starts": [0], "ends": [7] },
            ] })
        );
    }

    #[test]
    fn acknowledged_ranges_too_fragmented_for_a_reply_are_refused_naming_their_count() {
        // Every other sequence acknowledged: one range per record.
        let n = MAX_ACKNOWLEDGED_BYTES / RANGE_JSON_BYTES + 1;
        let fragmented: Vec<(u64, u64)> = (0..n as u64).map(|i| (2 * i, 2 * i + 1)).collect();
        let error =
            acknowledged_body(vec![(0, vec![("t".into(), 0, ranges(&fragmented))])]).unwrap_err();
        assert!(
            error.starts_with(&format!(
                "acknowledged: {n} ranges of sequences over 1 partitions of 1 producers, up to "
            )) && error.ends_with("the acknowledged records are too fragmented to send"),
            "{error}"
        );
        // The bound is an upper bound: what fits is never longer than it says.
        let fits = MAX_ACKNOWLEDGED_BYTES / RANGE_JSON_BYTES - 10;
        let big = (0..fits as u64).map(|i| (u64::MAX - 2 * i - 1, u64::MAX - 2 * i));
        let body = acknowledged_body(vec![(
            u32::MAX,
            vec![("t".into(), i32::MIN, ranges(&big.collect::<Vec<_>>()))],
        )])
        .unwrap();
        assert!(serde_json::to_vec(&body).unwrap().len() <= MAX_ACKNOWLEDGED_BYTES);
    }
}
