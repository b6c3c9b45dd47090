//! One controller's connection: `hello` first, then `time`, `prepare`, `startConsumers`,
//! `startProducers`, `take`, `stop`, `acknowledged` and `release` (docs/agents.md). Every request gets one reply
//! line echoing its id. A connection that holds a run stops its clients and frees the agent when it
//! closes or falls silent.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::FutureExt;
use kbench_loadgen::options::from_json;
use serde_json::{json, Map, Value};
use subtle::ConstantTimeEq;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, WriteHalf};
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use crate::clock::{iso_utc, now_micros, Claim};
use crate::line::{next_line, LineError};
use crate::run::{start_all, Role, Run};
use crate::PROTOCOL_VERSION;
use crate::{
    is_host_port, Shared, MAX_CLIENTS, MAX_CONNECTIONS, MAX_HELLO_LINE_BYTES, MAX_LINE_BYTES,
};

/// The ops served, in the order of a run; hello's reply lists them, so that a controller knows
/// before any load whether an agent serves one added since protocol v1 began (`acknowledged`).
const OPS: [&str; 9] = [
    "hello",
    "time",
    "prepare",
    "startConsumers",
    "startProducers",
    "take",
    "stop",
    "acknowledged",
    "release",
];
/// A reply the controller does not read within this long ends the connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long, and how much, a closing connection reads to let its last reply through.
const LINGER: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 64 << 20;
/// Targets a run may name, and the length of a run id.
const MAX_TARGETS: usize = 256;
const MAX_RUN_ID: usize = 256;

/// A refused request: the error text, and whether the connection closes after the reply.
struct Refusal {
    error: String,
    close: bool,
}

type Outcome = Result<Map<String, Value>, Refusal>;

/// Refused; the connection stays open.
fn refuse(error: impl Into<String>) -> Refusal {
    Refusal {
        error: error.into(),
        close: false,
    }
}

/// Refused; the connection closes after the reply.
fn refuse_and_close(error: impl Into<String>) -> Refusal {
    Refusal {
        error: error.into(),
        close: true,
    }
}

/// One accepted connection: who it is, when its hello is due, and what closes it for room before
/// its hello (see `MAX_CONNECTIONS`).
pub(crate) struct Connection {
    pub peer: SocketAddr,
    pub id: u64,
    pub shared: Arc<Shared>,
    pub hello_by: Instant,
    pub close: Arc<Notify>,
}

/// Serves one connection until it closes, falls silent, breaks the protocol or the agent stops.
pub(crate) async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    on: Connection,
    mut stopped: watch::Receiver<bool>,
) {
    let (reader, mut writer) = tokio::io::split(stream);
    let mut reader = BufReader::with_capacity(64 << 10, reader);
    let Connection {
        peer,
        id,
        shared,
        hello_by,
        close,
    } = on;
    let mut session = Session {
        shared,
        peer,
        id,
        hello: false,
        run: None,
    };
    loop {
        let limit = if session.hello {
            MAX_LINE_BYTES
        } else {
            MAX_HELLO_LINE_BYTES
        };
        let deadline = match (&session.run, session.hello) {
            (_, false) => Some(hello_by),
            (Some(_), true) => Some(Instant::now() + session.shared.silence_timeout),
            (None, true) => None,
        };
        let read = async {
            match deadline {
                Some(at) => tokio::time::timeout_at(at, next_line(&mut reader, limit))
                    .await
                    .ok(),
                None => Some(next_line(&mut reader, limit).await),
            }
        };
        let line = tokio::select! {
            _ = stopped.wait_for(|s| *s) => break,
            _ = close.notified(), if !session.hello => None,
            line = read => Some(line),
        };
        let Some(line) = line else {
            // Closed for room, without the linger: the place is another connection's now.
            let why = format!(
                "hello: this connection is closed to make room: the agent serves {MAX_CONNECTIONS} connections at once, and this one had not said hello"
            );
            let _ = write(&mut writer, Value::Null, Err(refuse_and_close(why))).await;
            let _ = writer.shutdown().await;
            return;
        };
        let (request_id, outcome) = match line {
            None => {
                let why = if session.hello {
                    format!(
                        "run: no request for {} s; its clients are stopped",
                        session.shared.silence_timeout.as_secs_f64()
                    )
                } else {
                    format!(
                        "hello: none within {} s",
                        session.shared.hello_timeout.as_secs_f64()
                    )
                };
                let _ = write(&mut writer, Value::Null, Err(refuse_and_close(why))).await;
                break;
            }
            Some(Ok(None) | Err(LineError::Closed)) => break,
            Some(Err(LineError::TooLong)) => (
                Value::Null,
                Err(refuse_and_close(format!(
                    "request: a line longer than {limit} bytes"
                ))),
            ),
            Some(Ok(Some(line))) => {
                // A request the agent fails on (a panic) must not leave the agent claimed by a run
                // no connection holds: the reply says so and the connection closes, releasing it.
                match std::panic::AssertUnwindSafe(session.handle(&line))
                    .catch_unwind()
                    .await
                {
                    Ok(handled) => handled,
                    Err(panic) => (
                        Value::Null,
                        Err(refuse_and_close(format!(
                            "request: the agent failed on it ({}); the connection is closed and its run's clients are stopped",
                            panic_text(panic.as_ref())
                        ))),
                    ),
                }
            }
        };
        let close = matches!(&outcome, Err(r) if r.close);
        if !write(&mut writer, request_id, outcome).await || close {
            break;
        }
    }
    session.release().await;
    let _ = writer.shutdown().await;
    if !*stopped.borrow() {
        linger(&mut reader).await;
    }
}

/// Reads and drops what the peer still sends, for a moment, before the socket closes: closed with
/// unread bytes, it would be reset, and the peer could lose the reply that says why.
async fn linger<R: tokio::io::AsyncBufRead + Unpin>(reader: &mut R) {
    let drain = async {
        let mut dropped = 0usize;
        while dropped < LINGER_BYTES {
            match reader.fill_buf().await {
                Ok([]) | Err(_) => return,
                Ok(bytes) => {
                    let n = bytes.len();
                    reader.consume(n);
                    dropped += n;
                }
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}

/// Writes one reply line; false when the connection is gone.
async fn write<S: AsyncWrite>(writer: &mut WriteHalf<S>, id: Value, outcome: Outcome) -> bool {
    let mut reply = Map::new();
    reply.insert("id".into(), id);
    match outcome {
        Ok(body) => {
            reply.insert("ok".into(), true.into());
            reply.extend(body);
        }
        Err(refusal) => {
            reply.insert("ok".into(), false.into());
            reply.insert("error".into(), refusal.error.into());
        }
    }
    let mut bytes = serde_json::to_vec(&reply).unwrap_or_default();
    bytes.push(b'\n');
    let sent = async {
        writer.write_all(&bytes).await?;
        writer.flush().await
    };
    matches!(tokio::time::timeout(WRITE_TIMEOUT, sent).await, Ok(Ok(())))
}

struct Session {
    shared: Arc<Shared>,
    peer: SocketAddr,
    id: u64,
    hello: bool,
    run: Option<Run>,
}

impl Session {
    /// One request line: its id (null when it has none) and the outcome.
    async fn handle(&mut self, line: &[u8]) -> (Value, Outcome) {
        let request: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                return (
                    Value::Null,
                    Err(refuse_and_close(format!("request: not JSON ({e})"))),
                )
            }
        };
        let Value::Object(mut request) = request else {
            return (
                Value::Null,
                Err(refuse_and_close("request: not a JSON object")),
            );
        };
        let id = match request.get("id") {
            Some(id @ Value::Number(_)) => id.clone(),
            _ => {
                return (
                    Value::Null,
                    Err(refuse_and_close("id: missing or not a number")),
                )
            }
        };
        let op = match request.get("op") {
            Some(Value::String(op)) => op.clone(),
            _ => {
                return (
                    id,
                    Err(refuse(format!("op: missing; one of {}", OPS.join(", ")))),
                )
            }
        };
        if !self.hello && op != "hello" {
            return (
                id,
                Err(refuse_and_close(format!("{op}: hello must come first"))),
            );
        }
        let outcome = match op.as_str() {
            "hello" => self.hello(&request),
            "time" => Ok(body([(
                "micros",
                now_micros(self.shared.clock_skew_micros).into(),
            )])),
            "prepare" => self.prepare(&request),
            "startConsumers" => {
                self.start::<kbench_loadgen::Consumer>(request.remove("consumers"))
                    .await
            }
            "startProducers" => {
                self.start::<kbench_loadgen::Producer>(request.remove("producers"))
                    .await
            }
            "take" => self.take(),
            "stop" => match &self.run {
                None => Err(no_run("stop")),
                Some(run) => {
                    run.stop().await;
                    self.take()
                }
            },
            "acknowledged" => match &self.run {
                None => Err(no_run("acknowledged")),
                Some(run) => run.acknowledged().map_err(refuse),
            },
            "release" => {
                self.release().await;
                Ok(Map::new())
            }
            other => Err(refuse(format!(
                "op: {other:?} is not one of {}",
                OPS.join(", ")
            ))),
        };
        (id, outcome)
    }

    fn hello(&mut self, request: &Map<String, Value>) -> Outcome {
        let version = request.get("version");
        if version.and_then(Value::as_u64) != Some(PROTOCOL_VERSION) {
            let given = version.map_or("none".to_string(), Value::to_string);
            return Err(refuse_and_close(format!(
                "hello.version: this agent speaks protocol version {PROTOCOL_VERSION}, not {given}"
            )));
        }
        let token = request.get("token").and_then(Value::as_str).unwrap_or("");
        let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
        if !bool::from(digest.as_ref().ct_eq(self.shared.token_digest.as_ref())) {
            return Err(refuse_and_close("hello.token: refused"));
        }
        if !self.shared.stop_waiting(self.id) {
            return Err(refuse_and_close(format!(
                "hello: this connection was closed to make room: the agent serves {MAX_CONNECTIONS} connections at once, and this one had not said hello"
            )));
        }
        self.hello = true;
        let shared = &self.shared;
        Ok(body([
            ("version", PROTOCOL_VERSION.into()),
            ("ops", json!(OPS)),
            (
                "agent",
                json!({
                    "name": shared.name,
                    "kbench": env!("CARGO_PKG_VERSION"),
                    "host": shared.host,
                    "cores": shared.cores,
                }),
            ),
        ]))
    }

    fn prepare(&mut self, request: &Map<String, Value>) -> Outcome {
        if let Some(run) = &self.run {
            return Err(refuse(format!(
                "prepare: this connection holds run {} already; release it first",
                run.id
            )));
        }
        let run_id = match request.get("run") {
            Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_RUN_ID => s.clone(),
            _ => {
                return Err(refuse(format!(
                    "prepare.run: expected a run id (1 to {MAX_RUN_ID} characters)"
                )))
            }
        };
        let target = match request.get("target") {
            Some(Value::Array(list)) if !list.is_empty() && list.len() <= MAX_TARGETS => list
                .iter()
                .enumerate()
                .map(|(i, v)| match v.as_str() {
                    Some(s) if is_host_port(s) => Ok(s.to_string()),
                    _ => Err(refuse(format!(
                        "prepare.target[{i}]: expected host:port, not {v}"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ => {
                return Err(refuse(format!(
                    "prepare.target: expected a list of 1 to {MAX_TARGETS} host:port"
                )))
            }
        };
        let offset = match request.get("clockOffsetMicros") {
            None | Some(Value::Null) => 0.0,
            Some(v) => v.as_f64().filter(|f| f.is_finite()).ok_or_else(|| {
                refuse(format!(
                    "prepare.clockOffsetMicros: expected a number, not {v}"
                ))
            })?,
        };
        if let Some(allow) = &self.shared.allow {
            let allowed = |t: &String| allow.iter().any(|a| a.eq_ignore_ascii_case(t));
            if let Some(t) = target.iter().find(|t| !allowed(t)) {
                return Err(refuse(format!(
                    "prepare.target: {t} is not allowed by this agent (--allow {})",
                    allow.join(",")
                )));
            }
        }
        {
            let mut claim = lock(&self.shared.claim);
            if let Some(c) = claim.as_ref() {
                return Err(refuse(format!(
                    "busy: run {} from {} since {}",
                    c.run,
                    c.peer,
                    iso_utc(c.since)
                )));
            }
            *claim = Some(Claim {
                run: run_id.clone(),
                peer: self.peer,
                since: SystemTime::now(),
                connection: self.id,
            });
        }
        self.run = Some(Run {
            id: run_id,
            target,
            // The clients' clock is the real one: the skew the agent reports is taken back out.
            client_clock_offset_micros: offset - self.shared.clock_skew_micros,
            producers: vec![],
            consumers: vec![],
        });
        Ok(Map::new())
    }

    /// `startProducers` / `startConsumers`: every client of the list started, or none.
    async fn start<C: Role>(&mut self, given: Option<Value>) -> Outcome {
        let (what, op) = (C::FIELD, C::OP);
        let Some(run) = self.run.as_mut() else {
            return Err(no_run(op));
        };
        let options: Vec<C::Options> =
            from_json(what, given.unwrap_or(Value::Null)).map_err(|e| refuse(config_text(e)))?;
        if run.producers.len() + run.consumers.len() + options.len() > MAX_CLIENTS {
            return Err(refuse(format!(
                "{what}: a run holds at most {MAX_CLIENTS} producers and consumers together"
            )));
        }
        let mut engines = Vec::with_capacity(options.len());
        for (i, options) in options.into_iter().enumerate() {
            let bootstrap = C::bootstrap(&options);
            if !same_addresses(bootstrap, &run.target) {
                return Err(refuse(format!(
                    "{what}[{i}].bootstrap: {bootstrap:?} is not the run's target {:?}",
                    run.target
                )));
            }
            let engine = C::engine(options, run.client_clock_offset_micros)
                .map_err(|e| refuse(format!("{what}[{i}]: {}", config_text(e))))?;
            engines.push(C::start(engine));
        }
        let started = start_all(what, engines, async |c: &C| c.stop().await)
            .await
            .map_err(refuse)?;
        let properties = crate::run::properties_json(started.first().map(C::effective));
        C::clients(run).extend(started);
        Ok(body([("properties", properties)]))
    }

    fn take(&self) -> Outcome {
        let run = self.run.as_ref().ok_or_else(|| no_run("take"))?;
        let mut reply = run.take();
        reply.insert(
            "atMicros".into(),
            now_micros(self.shared.clock_skew_micros).into(),
        );
        Ok(reply)
    }

    /// Stops this connection's run, if any, and frees the agent.
    async fn release(&mut self) {
        let Some(run) = self.run.take() else {
            return;
        };
        run.stop().await;
        drop(run);
        let mut claim = lock(&self.shared.claim);
        if claim.as_ref().is_some_and(|c| c.connection == self.id) {
            *claim = None;
        }
    }
}

/// What a panic said, when it said it with text.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic")
}

fn no_run(op: &str) -> Refusal {
    refuse(format!("{op}: no run prepared on this connection"))
}

fn body<const N: usize>(fields: [(&str, Value); N]) -> Map<String, Value> {
    fields
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// A configuration error without the engine's `invalid configuration: ` prefix.
fn config_text(e: kbench_loadgen::Error) -> String {
    match e {
        kbench_loadgen::Error::Config(message) => message,
        e => e.to_string(),
    }
}

/// The same addresses, in any order (host names compared without case).
fn same_addresses(a: &[String], b: &[String]) -> bool {
    let norm = |list: &[String]| {
        let mut v: Vec<String> = list.iter().map(|s| s.to_ascii_lowercase()).collect();
        v.sort();
        v.dedup();
        v
    };
    norm(a) == norm(b)
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
