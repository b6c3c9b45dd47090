//! kbench's load agent: a controller on another machine connects, authenticates with a token and
//! runs native producers and consumers here against one run's target, asking every sample
//! interval for what they did. Protocol v1, one JSON object per line: docs/agents.md.
//!
//! `start` binds and serves until `AgentHandle::close`; the `kbench-agent` binary and the napi
//! addon's `startAgent` are thin shells over it.

mod clock;
mod connection;
mod line;
mod run;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kbench_broker_core::TlsFiles;
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tokio::task::{JoinHandle, JoinSet};

/// The protocol versions this agent speaks.
pub const PROTOCOL_VERSION: u64 = 1;
/// The longest line a controller may send once it has said hello.
pub const MAX_LINE_BYTES: usize = 16 << 20;
/// The longest line before hello (a hello is a few hundred bytes): a peer without the token
/// cannot make the agent hold more than this.
pub const MAX_HELLO_LINE_BYTES: usize = 64 << 10;
/// A connection must say hello (after its TLS handshake, if any) within this long.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection holding a run that sends nothing for this long has lost its controller.
pub const RUN_SILENCE_TIMEOUT: Duration = Duration::from_secs(30);
/// The most an `acknowledged` reply's list may take as JSON: well within the controller's line
/// bound (`MAX_LINE_BYTES`), so that a run whose acknowledged records are badly fragmented gets an
/// error naming why rather than a line the controller refuses.
pub const MAX_ACKNOWLEDGED_BYTES: usize = 8 << 20;
/// Connections served at once. A connection beyond them makes room by closing the oldest that has
/// not said hello yet (so that peers without the token cannot keep a controller out by holding
/// every place); when every one has, it is closed on accept.
pub const MAX_CONNECTIONS: usize = 64;
/// Clients one run may hold (producers and consumers together).
pub const MAX_CLIENTS: usize = 4096;
/// Test hook (docs/agents.md): the agent reports and uses a clock shifted by this many ms.
pub const TEST_CLOCK_SKEW_ENV: &str = "KBENCH_AGENT_TEST_CLOCK_SKEW_MS";
/// The default listen address: this machine only. A load machine passes `0.0.0.0:7755`.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7755";

/// What an agent is started with.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// `host:port` to listen on; port 0 picks a free one.
    pub listen: String,
    /// The secret a controller's hello must carry.
    pub token: String,
    /// Shown to the controller; default: this machine's host name.
    pub name: Option<String>,
    /// `host:port` targets a run may name; None: any.
    pub allow: Option<Vec<String>>,
    /// PEM certificate chain and key: the listener speaks TLS.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The test hook's shift, µs (`KBENCH_AGENT_TEST_CLOCK_SKEW_MS`); 0 otherwise.
    pub clock_skew_micros: f64,
    /// How long a run's connection may stay silent; `RUN_SILENCE_TIMEOUT` unless a test says.
    pub silence_timeout: Duration,
    /// How long a new connection has to say hello; `HELLO_TIMEOUT` unless a test says.
    pub hello_timeout: Duration,
}

impl AgentConfig {
    pub fn new(listen: impl Into<String>, token: impl Into<String>) -> AgentConfig {
        AgentConfig {
            listen: listen.into(),
            token: token.into(),
            name: None,
            allow: None,
            tls: None,
            clock_skew_micros: 0.0,
            silence_timeout: RUN_SILENCE_TIMEOUT,
            hello_timeout: HELLO_TIMEOUT,
        }
    }

    /// The test hook's skew from the environment (0 when unset).
    pub fn clock_skew_from_env() -> Result<f64, AgentError> {
        match std::env::var(TEST_CLOCK_SKEW_ENV) {
            Err(_) => Ok(0.0),
            Ok(text) => text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|ms| ms.is_finite())
                .map(|ms| ms * 1000.0)
                .ok_or_else(|| AgentError::Invalid {
                    option: TEST_CLOCK_SKEW_ENV,
                    message: format!("{text:?} is not a number of milliseconds"),
                }),
        }
    }

    /// Parses `--allow host:port,...`.
    pub fn parse_allow(list: &str) -> Result<Vec<String>, AgentError> {
        let entries: Vec<String> = list
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(String::from)
            .collect();
        if entries.is_empty() {
            return Err(invalid("allow", "expected host:port,... (at least one)"));
        }
        for entry in &entries {
            if !is_host_port(entry) {
                return Err(invalid("allow", &format!("{entry:?} is not host:port")));
            }
        }
        Ok(entries)
    }
}

/// Why an agent did not start.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// An option's value is unusable; `option` is its flag name without dashes.
    #[error("{option}: {message}")]
    Invalid {
        option: &'static str,
        message: String,
    },
    /// The address could not be bound (in use, not local, ...).
    #[error("cannot listen on {address}: {source}")]
    Listen {
        address: String,
        source: std::io::Error,
    },
}

fn invalid(option: &'static str, message: &str) -> AgentError {
    AgentError::Invalid {
        option,
        message: message.to_string(),
    }
}

/// `host:port` with a numeric port (a bracketed IPv6 host allowed).
pub(crate) fn is_host_port(text: &str) -> bool {
    match text.rsplit_once(':') {
        Some((host, port)) => !host.is_empty() && port.parse::<u16>().is_ok(),
        None => false,
    }
}

/// What every connection shares.
pub(crate) struct Shared {
    pub name: String,
    pub host: String,
    pub cores: usize,
    pub token_digest: ring::digest::Digest,
    pub allow: Option<Vec<String>>,
    pub clock_skew_micros: f64,
    pub silence_timeout: Duration,
    pub hello_timeout: Duration,
    /// The run this agent is busy with, if any.
    pub claim: Mutex<Option<clock::Claim>>,
    /// The connections that have not said hello, oldest first, each with what closes it.
    pub waiting: Mutex<VecDeque<(u64, Arc<Notify>)>>,
}

impl Shared {
    /// Connection `id` said hello, or ended: no longer one to close for room. False when it was
    /// told to close for room already (a hello then must not go on).
    pub(crate) fn stop_waiting(&self, id: u64) -> bool {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        match waiting.iter().position(|(c, _)| *c == id) {
            Some(i) => {
                waiting.remove(i);
                true
            }
            None => false,
        }
    }

    /// Tells the oldest connection that has not said hello to close; false when there is none.
    fn close_oldest_waiting(&self) -> bool {
        let oldest = self
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front();
        match oldest {
            Some((_, close)) => {
                close.notify_one();
                true
            }
            None => false,
        }
    }
}

/// A running agent.
pub struct AgentHandle {
    address: SocketAddr,
    name: String,
    shutdown: watch::Sender<bool>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl AgentHandle {
    /// The address actually bound (port 0 resolved).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Stops accepting, closes every connection and stops any run's clients. Idempotent.
    pub async fn close(&self) {
        let _ = self.shutdown.send(true);
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

impl Drop for AgentHandle {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}

/// Binds and serves on the current tokio runtime until `close`.
pub async fn start(config: AgentConfig) -> Result<AgentHandle, AgentError> {
    if config.token.is_empty() {
        return Err(invalid("token", "empty: a controller must present a token"));
    }
    if let Some(allow) = &config.allow {
        if let Some(bad) = allow.iter().find(|a| !is_host_port(a)) {
            return Err(invalid("allow", &format!("{bad:?} is not host:port")));
        }
    }
    if !config.clock_skew_micros.is_finite() {
        return Err(invalid(TEST_CLOCK_SKEW_ENV, "not a finite number"));
    }
    let tls = match &config.tls {
        None => None,
        Some((cert, key)) => Some(
            kbench_broker_core::security::tls::acceptor(&TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
                client_ca: None,
            })
            .map_err(|e| match e {
                kbench_broker_core::Error::InvalidOption { name, message } => AgentError::Invalid {
                    option: name,
                    message,
                },
                e => AgentError::Invalid {
                    option: "tls-cert",
                    message: e.to_string(),
                },
            })?,
        ),
    };
    let listener =
        TcpListener::bind(&config.listen)
            .await
            .map_err(|source| AgentError::Listen {
                address: config.listen.clone(),
                source,
            })?;
    let address = listener.local_addr().map_err(|source| AgentError::Listen {
        address: config.listen.clone(),
        source,
    })?;
    let host = clock::hostname();
    let name = config
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| host.clone());
    let shared = Arc::new(Shared {
        name: name.clone(),
        host,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        token_digest: ring::digest::digest(&ring::digest::SHA256, config.token.as_bytes()),
        allow: config.allow.clone(),
        clock_skew_micros: config.clock_skew_micros,
        silence_timeout: config.silence_timeout,
        hello_timeout: config.hello_timeout,
        claim: Mutex::new(None),
        waiting: Mutex::new(VecDeque::new()),
    });
    let (shutdown, stopped) = watch::channel(false);
    let task = tokio::spawn(accept_loop(listener, tls, shared, stopped));
    Ok(AgentHandle {
        address,
        name,
        shutdown,
        task: Mutex::new(Some(task)),
    })
}

async fn accept_loop(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shared: Arc<Shared>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    let mut next_id = 0u64;
    loop {
        let accepted = tokio::select! {
            _ = stopped.wait_for(|s| *s) => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, peer)) = accepted else {
            // Out of descriptors or the like: back off a little rather than spin.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        if connections.len() >= MAX_CONNECTIONS && !shared.close_oldest_waiting() {
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        next_id += 1;
        let close = Arc::new(Notify::new());
        shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back((next_id, close.clone()));
        let (id, shared, tls, stopped) = (next_id, shared.clone(), tls.clone(), stopped.clone());
        connections.spawn(async move {
            let hello_by = tokio::time::Instant::now() + shared.hello_timeout;
            let on = connection::Connection {
                peer,
                id,
                shared: shared.clone(),
                hello_by,
                close,
            };
            match tls {
                None => connection::serve(stream, on, stopped).await,
                Some(acceptor) => {
                    let handshake = tokio::select! {
                        h = tokio::time::timeout_at(hello_by, acceptor.accept(stream)) => h.ok(),
                        _ = on.close.notified() => None,
                    };
                    if let Some(Ok(stream)) = handshake {
                        connection::serve(stream, on, stopped).await;
                    }
                }
            }
            shared.stop_waiting(id);
        });
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}
