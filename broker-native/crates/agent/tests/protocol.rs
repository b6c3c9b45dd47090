//! Protocol v1 against a real agent and the bundled broker, both in-process, spoken by a plain
//! TCP client as the controller does: a full run, and every refusal the protocol promises.

mod common;

use std::time::Duration;

use common::{Controller, TOKEN};
use kbench_agent::{AgentConfig, AgentHandle};
use kbench_broker_core::{BrokerConfig, BrokerHandle};
use serde_json::{json, Value};

async fn broker(dir: &std::path::Path, topics: &[&str]) -> BrokerHandle {
    let broker = kbench_broker_core::start(BrokerConfig::new(dir))
        .await
        .unwrap();
    for topic in topics {
        broker.broker().log.create_topic(topic, 3, false).unwrap();
    }
    broker
}

fn target(broker: &BrokerHandle) -> String {
    format!("127.0.0.1:{}", broker.port())
}

async fn agent(configure: impl FnOnce(&mut AgentConfig)) -> AgentHandle {
    let mut config = AgentConfig::new("127.0.0.1:0", TOKEN);
    configure(&mut config);
    kbench_agent::start(config).await.unwrap()
}

/// The bundled broker with `topics` and an agent, in-process.
struct Bench {
    _dir: tempfile::TempDir,
    broker: BrokerHandle,
    target: String,
    agent: AgentHandle,
}

impl Bench {
    async fn new(topics: &[&str], configure: impl FnOnce(&mut AgentConfig)) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path(), topics).await;
        let target = target(&broker);
        let agent = agent(configure).await;
        Bench {
            _dir: dir,
            broker,
            target,
            agent,
        }
    }

    async fn stop(self) {
        self.agent.close().await;
        self.broker.stop().await.unwrap();
    }
}

fn producer(target: &str, topic: &str, records: Option<u64>, rate: f64) -> Value {
    json!({
        "bootstrap": [target], "topics": [topic], "acks": 1, "messageSize": 100,
        "keys": "none", "compression": "none", "batchSize": 16384, "lingerMs": 0,
        "maxInFlight": 5, "idempotence": false, "ratePerSec": rate, "records": records,
    })
}

fn consumer(target: &str, topic: &str, group: &str) -> Value {
    json!({ "bootstrap": [target], "topics": [topic], "fromBeginning": true, "groupId": group })
}

async fn prepare(c: &mut Controller, run: &str, target: &str, offset: f64) -> Value {
    c.call(json!({ "op": "prepare", "run": run, "target": [target], "clockOffsetMicros": offset }))
        .await
}

/// Sums of what `take` replies carried.
#[derive(Debug, Default)]
struct Totals {
    produced: u64,
    produced_latencies: u64,
    consumed: u64,
    consumed_latencies: u64,
    /// The smallest and largest end-to-end latency bucket floors seen, µs.
    e2e_min: Option<u64>,
    e2e_max: u64,
    producers_finished: bool,
}

impl Totals {
    fn add(&mut self, reply: &Value) {
        assert_eq!(reply["ok"], true, "{reply}");
        assert_eq!(reply["error"], Value::Null, "{reply}");
        assert!(reply["atMicros"].as_f64().unwrap() > 0.0);
        let (p, c) = (&reply["producers"], &reply["consumers"]);
        for interval in [p, c] {
            let counts: u64 = interval["latency"]["counts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_u64().unwrap())
                .sum();
            assert_eq!(counts, interval["latency"]["count"].as_u64().unwrap());
            assert_eq!(interval["errors"], 0, "{reply}");
        }
        self.produced += p["records"].as_u64().unwrap();
        self.produced_latencies += p["latency"]["count"].as_u64().unwrap();
        self.consumed += c["records"].as_u64().unwrap();
        self.consumed_latencies += c["latency"]["count"].as_u64().unwrap();
        let floors: Vec<u64> = c["latency"]["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| kbench_loadgen::histogram::bucket_floor(b.as_u64().unwrap() as usize))
            .collect();
        if let (Some(&lo), Some(&hi)) = (floors.first(), floors.last()) {
            self.e2e_min = Some(self.e2e_min.map_or(lo, |m| m.min(lo)));
            self.e2e_max = self.e2e_max.max(hi);
        }
        self.producers_finished = reply["producersFinished"].as_bool().unwrap();
    }
}

/// Takes from each controller every 100 ms until `consumed` records arrived through them all.
async fn take_until(controllers: &mut [&mut Controller], consumed: u64) -> Totals {
    let mut totals = Totals::default();
    // A guard against hanging, not a timing assertion.
    for _ in 0..600 {
        for c in controllers.iter_mut() {
            let reply = c.call(json!({ "op": "take" })).await;
            totals.add(&reply);
        }
        if totals.consumed >= consumed {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    totals
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_run_takes_add_up_to_what_was_produced() {
    let bench = Bench::new(&["t"], |c| c.name = Some("loader-1".into())).await;
    let (target, agent) = (bench.target.as_str(), &bench.agent);
    let mut c = Controller::connect(agent.address()).await;
    let hello = c.hello(TOKEN).await;
    assert_eq!(hello["ok"], true, "{hello}");
    assert_eq!(hello["version"], 1);
    assert_eq!(hello["agent"]["name"], "loader-1");
    assert!(hello["agent"]["cores"].as_u64().unwrap() >= 1);
    assert!(hello["agent"]["host"]
        .as_str()
        .is_some_and(|h| !h.is_empty()));
    assert!(hello["agent"]["kbench"].is_string());
    assert!(hello["ops"]
        .as_array()
        .unwrap()
        .contains(&json!("acknowledged")));
    let (offset, uncertainty) = c.clock_offset().await;
    // One machine, one clock: the measured offset is within the round trip.
    assert!(
        offset.abs() <= uncertainty + 1000.0,
        "{offset} ± {uncertainty}"
    );
    assert_eq!(prepare(&mut c, "run-1", target, offset).await["ok"], true);
    let started = c
        .call(json!({ "op": "startConsumers", "consumers": [
            consumer(target, "t", "g"), consumer(target, "t", "g")
        ] }))
        .await;
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(
        started["properties"]["fetch.max.wait.ms"], "250",
        "{started}"
    );
    let started = c
        .call(json!({ "op": "startProducers", "producers": [
            producer(target, "t", Some(3000), 5000.0), producer(target, "t", Some(2000), 5000.0)
        ] }))
        .await;
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(started["properties"]["acks"], "1", "{started}");
    let mut totals = take_until(&mut [&mut c], 5000).await;
    // Once every record is consumed the producers have their acks: finished, and no more.
    let stopped = c.call(json!({ "op": "stop" })).await;
    totals.add(&stopped);
    assert!(totals.producers_finished);
    assert_eq!(totals.produced, 5000);
    assert_eq!(totals.produced_latencies, 5000);
    assert_eq!(totals.consumed, 5000);
    assert_eq!(totals.consumed_latencies, 5000);
    assert_eq!(c.call(json!({ "op": "release" })).await["ok"], true);
    // Released: the agent takes the next run, on this connection or another.
    assert_eq!(prepare(&mut c, "run-2", target, 0.0).await["ok"], true);
    agent.close().await;
    assert!(c.closed().await);
    bench.broker.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_lists_what_each_marking_producer_had_acknowledged_per_partition() {
    let bench = Bench::new(&["t"], |_| {}).await;
    let (target, agent) = (bench.target.as_str(), &bench.agent);
    let mut c = Controller::ready(agent.address()).await;
    let early = c.call(json!({ "op": "acknowledged" })).await;
    assert_eq!(
        early["error"],
        "acknowledged: no run prepared on this connection"
    );
    assert_eq!(prepare(&mut c, "r", target, 0.0).await["ok"], true);
    // Producers 5 and 9 of the run mark their records; a third, unmarked, is not listed.
    let mut five = producer(target, "t", Some(1200), 10_000.0);
    five["verifyProducer"] = 5.into();
    let mut nine = producer(target, "t", Some(600), 10_000.0);
    nine["verifyProducer"] = 9.into();
    let plain = producer(target, "t", Some(300), 10_000.0);
    let started = c
        .call(json!({ "op": "startProducers", "producers": [five, nine, plain] }))
        .await;
    assert_eq!(started["ok"], true, "{started}");
    // A guard against hanging, not a timing assertion.
    for _ in 0..600 {
        if c.call(json!({ "op": "take" })).await["producersFinished"] == true {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(c.call(json!({ "op": "stop" })).await["ok"], true);
    let reply = c.call(json!({ "op": "acknowledged" })).await;
    assert_eq!(reply["ok"], true, "{reply}");
    let entries = reply["acknowledged"].as_array().unwrap();
    // One entry per marking producer and partition (3 partitions); acknowledged in order, each
    // partition's sequences are one range (or none, if the sticky partitioner never chose it).
    let mut by_producer = std::collections::BTreeMap::<u64, (u64, Vec<u64>)>::new();
    for e in entries {
        assert_eq!(e["topic"], "t");
        let (starts, ends) = (
            e["starts"].as_array().unwrap(),
            e["ends"].as_array().unwrap(),
        );
        assert!(starts.len() <= 1 && starts.len() == ends.len(), "{e}");
        let slot = by_producer
            .entry(e["producer"].as_u64().unwrap())
            .or_default();
        for (start, end) in starts.iter().zip(ends) {
            assert_eq!(start, 0);
            slot.0 += end.as_u64().unwrap();
        }
        slot.1.push(e["partition"].as_u64().unwrap());
    }
    by_producer.values_mut().for_each(|(_, p)| p.sort());
    assert_eq!(
        by_producer,
        [(5, (1200, vec![0, 1, 2])), (9, (600, vec![0, 1, 2]))].into()
    );
    bench.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_or_version_is_refused_and_the_connection_closed() {
    let agent = agent(|_| {}).await;
    let mut c = Controller::connect(agent.address()).await;
    let reply = c.hello("s3cret-tokeN").await;
    assert_eq!(reply["ok"], false);
    assert_eq!(reply["error"], "hello.token: refused");
    assert!(c.closed().await);

    let mut c = Controller::connect(agent.address()).await;
    let reply = c
        .call(json!({ "op": "hello", "version": 2, "token": TOKEN }))
        .await;
    assert_eq!(reply["ok"], false);
    assert_eq!(
        reply["error"],
        "hello.version: this agent speaks protocol version 1, not 2"
    );
    assert!(c.closed().await);

    // Anything before hello, even time, is refused and closed.
    let mut c = Controller::connect(agent.address()).await;
    let reply = c.call(json!({ "op": "time" })).await;
    assert_eq!(reply["error"], "time: hello must come first");
    assert!(c.closed().await);
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_without_hello_is_closed_at_the_deadline() {
    let agent = agent(|c| c.hello_timeout = Duration::from_millis(300)).await;
    let mut c = Controller::connect(agent.address()).await;
    let reply = c.reply().await.unwrap();
    assert_eq!(reply["error"], "hello: none within 0.3 s");
    assert!(c.closed().await);
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_controller_is_refused_as_busy_while_a_run_holds_the_agent() {
    let bench = Bench::new(&["t"], |_| {}).await;
    let (target, agent) = (bench.target.as_str(), &bench.agent);
    let mut first = Controller::ready(agent.address()).await;
    assert_eq!(prepare(&mut first, "run-a", target, 0.0).await["ok"], true);
    let mut second = Controller::ready(agent.address()).await;
    // hello and time are served to any number of controllers.
    assert!(second.call(json!({ "op": "time" })).await["micros"].is_f64());
    let busy = prepare(&mut second, "run-b", target, 0.0).await;
    assert_eq!(busy["ok"], false);
    let error = busy["error"].as_str().unwrap();
    assert!(
        error.starts_with("busy: run run-a from 127.0.0.1:") && error.contains(" since 20"),
        "{error}"
    );
    // The busy controller cannot drive the other's run either.
    let take = second.call(json!({ "op": "take" })).await;
    assert_eq!(take["error"], "take: no run prepared on this connection");
    assert_eq!(first.call(json!({ "op": "release" })).await["ok"], true);
    assert_eq!(prepare(&mut second, "run-b", target, 0.0).await["ok"], true);
    bench.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_outside_allow_is_refused_naming_it() {
    let agent = agent(|c| c.allow = Some(vec!["10.0.0.9:9092".into(), "kafka:9093".into()])).await;
    let mut c = Controller::ready(agent.address()).await;
    let reply = c
        .call(json!({ "op": "prepare", "run": "r", "target": ["KAFKA:9093", "127.0.0.1:9092"] }))
        .await;
    assert_eq!(reply["ok"], false);
    assert_eq!(
        reply["error"],
        "prepare.target: 127.0.0.1:9092 is not allowed by this agent (--allow 10.0.0.9:9092,kafka:9093)"
    );
    let reply = c
        .call(json!({ "op": "prepare", "run": "r", "target": ["nonsense"] }))
        .await;
    assert_eq!(
        reply["error"],
        "prepare.target[0]: expected host:port, not \"nonsense\""
    );
    // A target inside the list is taken.
    let reply = c
        .call(json!({ "op": "prepare", "run": "r", "target": ["kafka:9093"] }))
        .await;
    assert_eq!(reply["ok"], true, "{reply}");
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bootstrap_other_than_the_target_is_refused_and_nothing_starts() {
    let bench = Bench::new(&["t"], |_| {}).await;
    let (broker, target, agent) = (&bench.broker, bench.target.as_str(), &bench.agent);
    let mut c = Controller::ready(agent.address()).await;
    assert_eq!(prepare(&mut c, "r", target, 0.0).await["ok"], true);
    let elsewhere = "127.0.0.1:1";
    let reply = c
        .call(json!({ "op": "startProducers", "producers": [
            producer(target, "t", Some(10), 100.0), producer(elsewhere, "t", Some(10), 100.0)
        ] }))
        .await;
    assert_eq!(reply["ok"], false);
    assert_eq!(
        reply["error"],
        format!("producers[1].bootstrap: [\"{elsewhere}\"] is not the run's target [\"{target}\"]")
    );
    let reply = c
        .call(json!({ "op": "startConsumers", "consumers": [consumer(elsewhere, "t", "g")] }))
        .await;
    assert!(reply["error"]
        .as_str()
        .unwrap()
        .starts_with("consumers[0].bootstrap:"));
    // Options are checked as the addon checks them, named by their path.
    let mut bad = producer(target, "t", Some(10), 100.0);
    bad["acks"] = "all".into();
    let reply = c
        .call(json!({ "op": "startProducers", "producers": [bad] }))
        .await;
    assert!(
        reply["error"]
            .as_str()
            .unwrap()
            .starts_with("producers[0].acks: invalid type"),
        "{reply}"
    );
    // Nothing was started: a take counts nothing.
    let take = c.call(json!({ "op": "take" })).await;
    assert_eq!(take["producers"]["records"], 0);
    assert_eq!(broker.stats().produce_requests, 0);
    bench.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_bytes_get_an_error_and_the_connection_closed() {
    let agent = agent(|_| {}).await;
    for garbage in [
        &b"\x00\xff\xfe not json"[..],
        b"[1,2,3]",
        b"{\"op\":\"hello\"}",
    ] {
        let mut c = Controller::connect(agent.address()).await;
        c.send_line(garbage).await;
        let reply = c.reply().await.unwrap();
        assert_eq!(reply["id"], Value::Null);
        assert_eq!(reply["ok"], false);
        let error = reply["error"].as_str().unwrap();
        assert!(
            error.starts_with("request: not JSON")
                || error == "request: not a JSON object"
                || error == "id: missing or not a number",
            "{error}"
        );
        assert!(c.closed().await);
    }
    // After hello too.
    let mut c = Controller::ready(agent.address()).await;
    c.send_line(b"{\"id\":7,\"op\":\"take\"").await;
    assert!(c.reply().await.unwrap()["error"]
        .as_str()
        .unwrap()
        .starts_with("request: not JSON"));
    assert!(c.closed().await);
    // An unknown op is an error that keeps the connection.
    let mut c = Controller::ready(agent.address()).await;
    let reply = c.call(json!({ "op": "dance" })).await;
    assert_eq!(
        reply["error"],
        "op: \"dance\" is not one of hello, time, prepare, startConsumers, startProducers, take, stop, acknowledged, release"
    );
    assert!(c.call(json!({ "op": "time" })).await["ok"] == true);
    agent.close().await;
}

/// Waits until a new controller can prepare a run (the agent is free), then returns it.
async fn prepared_when_free(agent: &AgentHandle, target: &str) -> Controller {
    let mut c = Controller::ready(agent.address()).await;
    // A guard against hanging, not a timing assertion.
    for _ in 0..300 {
        let reply = prepare(&mut c, "next", target, 0.0).await;
        if reply["ok"] == true {
            return c;
        }
        assert!(reply["error"].as_str().unwrap().starts_with("busy:"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the agent stayed busy");
}

/// Starts endless producers on a run of its own; returns the controller holding it.
async fn endless_load(agent: &AgentHandle, target: &str) -> Controller {
    let mut c = Controller::ready(agent.address()).await;
    assert_eq!(prepare(&mut c, "endless", target, 0.0).await["ok"], true);
    let started = c
        .call(json!({ "op": "startProducers", "producers": [producer(target, "t", None, 2000.0)] }))
        .await;
    assert_eq!(started["ok"], true, "{started}");
    c
}

/// The broker's produce requests stop growing: a second look after a while sees none more.
async fn assert_no_more_load(broker: &BrokerHandle) {
    let before = broker.stats().produce_requests;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(broker.stats().produce_requests, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_that_disconnects_stops_the_load_and_frees_the_agent() {
    let bench = Bench::new(&["t"], |_| {}).await;
    let (broker, target, agent) = (&bench.broker, bench.target.as_str(), &bench.agent);
    let c = endless_load(agent, target).await;
    // The load is flowing.
    for _ in 0..300 {
        if broker.stats().produce_requests > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(broker.stats().produce_requests > 0);
    drop(c);
    let _next = prepared_when_free(agent, target).await;
    assert_no_more_load(broker).await;
    bench.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_silent_during_a_run_stops_the_load_and_frees_the_agent() {
    let bench = Bench::new(&["t"], |c| c.silence_timeout = Duration::from_secs(1)).await;
    let (broker, target, agent) = (&bench.broker, bench.target.as_str(), &bench.agent);
    let mut silent = endless_load(agent, target).await;
    let reply = silent.reply().await.unwrap();
    assert_eq!(
        reply["error"],
        "run: no request for 1 s; its clients are stopped"
    );
    assert!(silent.closed().await);
    let _next = prepared_when_free(agent, target).await;
    assert_no_more_load(broker).await;
    bench.stop().await;
}

/// Runs producers on `producing` and consumers on `consuming`, each prepared with the offset
/// given; returns what the consumers saw.
async fn two_agent_run(
    producing: &AgentHandle,
    producing_offset: f64,
    consuming: &AgentHandle,
    consuming_offset: f64,
    broker: &BrokerHandle,
    topic: &str,
) -> Totals {
    let target = target(broker);
    let mut p = Controller::ready(producing.address()).await;
    let mut c = Controller::ready(consuming.address()).await;
    assert_eq!(
        prepare(&mut p, topic, &target, producing_offset).await["ok"],
        true
    );
    assert_eq!(
        prepare(&mut c, topic, &target, consuming_offset).await["ok"],
        true
    );
    let started = c
        .call(json!({ "op": "startConsumers", "consumers": [consumer(&target, topic, topic)] }))
        .await;
    assert_eq!(started["ok"], true, "{started}");
    let started = p
        .call(json!({ "op": "startProducers", "producers": [producer(&target, topic, Some(2000), 4000.0)] }))
        .await;
    assert_eq!(started["ok"], true, "{started}");
    let totals = take_until(&mut [&mut p, &mut c], 2000).await;
    assert_eq!(totals.consumed_latencies, 2000);
    for x in [&mut p, &mut c] {
        assert_eq!(x.call(json!({ "op": "release" })).await["ok"], true);
    }
    totals
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_measured_clock_offset_cancels_an_agents_skewed_clock() {
    let dir = tempfile::tempdir().unwrap();
    let broker = broker(dir.path(), &["corrected", "uncorrected"]).await;
    // The test hook: this agent's clock reads 4 s behind the real one.
    let skewed = agent(|c| c.clock_skew_micros = -4e6).await;
    let plain = agent(|_| {}).await;
    let (offset, uncertainty) = Controller::ready(skewed.address())
        .await
        .clock_offset()
        .await;
    assert!(
        (offset + 4e6).abs() <= uncertainty + 1000.0,
        "{offset} ± {uncertainty}"
    );
    let (plain_offset, _) = Controller::ready(plain.address())
        .await
        .clock_offset()
        .await;
    // Producers on the skewed agent, consumers on the other, each told its measured offset:
    // end-to-end latency is the real one (well under the 4 s skew).
    let corrected =
        two_agent_run(&skewed, offset, &plain, plain_offset, &broker, "corrected").await;
    assert!(corrected.e2e_max < 2_000_000, "{corrected:?}");
    // Told no offset, the skewed producers stamp 4 s early: every record looks 4 s late.
    let uncorrected = two_agent_run(&skewed, 0.0, &plain, 0.0, &broker, "uncorrected").await;
    assert!(uncorrected.e2e_min.unwrap() >= 3_990_000, "{uncorrected:?}");
    skewed.close().await;
    plain.close().await;
    broker.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_with_a_pem_certificate_and_key() {
    use std::sync::Arc;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio_rustls::rustls::{self, pki_types::ServerName, RootCertStore};

    let dir = tempfile::tempdir().unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let (cert_file, key_file) = (dir.path().join("agent.pem"), dir.path().join("agent.key"));
    std::fs::write(&cert_file, cert.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    let agent = agent(|c| c.tls = Some((cert_file.clone(), key_file.clone()))).await;

    let mut roots = RootCertStore::empty();
    roots.add(cert.der().clone()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(agent.address())
        .await
        .unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let mut tls = BufReader::new(tls);
    let mut reply = String::new();
    for request in [
        json!({ "id": 1, "op": "hello", "version": 1, "token": TOKEN }),
        json!({ "id": 2, "op": "time" }),
    ] {
        let mut line = serde_json::to_vec(&request).unwrap();
        line.push(b'\n');
        tls.get_mut().write_all(&line).await.unwrap();
        reply.clear();
        tls.read_line(&mut reply).await.unwrap();
        let reply: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(
            (reply["id"].clone(), reply["ok"].clone()),
            (request["id"].clone(), true.into())
        );
    }
    // A plaintext hello gets no reply (a TLS alert at most) and the connection closed.
    let mut plain = Controller::connect(agent.address()).await;
    plain
        .send_line(br#"{"id":1,"op":"hello","version":1}"#)
        .await;
    assert!(!plain.bytes_until_closed().await.contains(&b'{'));
    // A missing key file is named.
    let mut config = AgentConfig::new("127.0.0.1:0", TOKEN);
    config.tls = Some((cert_file, dir.path().join("missing.key")));
    let err = kbench_agent::start(config).await.err().unwrap().to_string();
    assert!(
        err.starts_with("tls-key: ") && err.contains("missing.key"),
        "{err}"
    );
    agent.close().await;
}
