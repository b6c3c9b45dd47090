//! One run's clients on this agent: the producers and consumers a controller started, their
//! intervals merged into one per role, and stopping them.

use std::collections::HashMap;
use std::future::Future;

use futures::future::{join, join_all};
use kbench_loadgen::options::properties_map;
use kbench_loadgen::{
    Consumer, ConsumerConfig, ConsumerOptions, ConsumerProperties, IntervalStats, Producer,
    ProducerConfig, ProducerOptions, ProducerProperties,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

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

/// The protocol's Interval: the napi `NativeInterval` with the latency histogram nested.
fn interval_json(s: &IntervalStats) -> Value {
    json!({
        "records": s.records,
        "valueBytes": s.value_bytes,
        "wireBytes": s.wire_bytes,
        "errors": s.errors,
        "latency": {
            "buckets": s.latency.buckets,
            "counts": s.latency.counts,
            "count": s.latency.count,
            "sum": s.latency.sum,
            "max": s.latency.max,
        },
    })
}
