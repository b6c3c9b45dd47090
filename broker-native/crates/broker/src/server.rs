//! The TCP server: an accept loop that keeps to the connection limits, and
//! one task per connection that reads frames, dispatches them in order and
//! writes the responses back in the same order. A Produce request is
//! appended when read and answered when its acks are met (the sync under
//! fsync `batch`, the replicas for acks=all), while the connection reads
//! and appends its next requests (up to `MAX_IN_FLIGHT` requests and
//! `MAX_IN_FLIGHT_BYTES`).
//!
//! Nothing a client sends can hold the broker: a connection idle for
//! `connections_max_idle` is closed; a frame must be whole within
//! `frame_timeout` of its first byte (both checked by one reaper task, so no
//! timer is armed per request); at a connection cap (in all, or from one
//! address) a new connection evicts the longest-idle one, or is closed at
//! once; and a frame's bytes are read only as a broker-wide budget
//! (`queued_max_request_bytes`) allows, into a buffer that grows as they
//! arrive, so a size prefix alone reserves nothing.
//!
//! A listener may ask for TLS (the handshake runs in the connection's task,
//! within `frame_timeout`) and SASL (a connection answers only ApiVersions,
//! SaslHandshake and SaslAuthenticate until it has authenticated, then goes
//! into the same request loop as any other). The loop is generic over the
//! stream, so a PLAINTEXT connection runs the code it ran before.

use crate::broker::Broker;
use crate::codec::{self, Frame};
use crate::error::{Error, Result};
use crate::handlers::{self, AuthProgress};
use crate::security::{self, sasl};
use crate::stats::Stats;
use bytes::{Buf, Bytes, BytesMut};
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io::IoSlice;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{broadcast, mpsc, Notify, OwnedSemaphorePermit, Semaphore};

/// A connection idle for less than this is never evicted for a newcomer.
const MIN_IDLE_TO_EVICT: Duration = Duration::from_secs(1);
/// Frames up to this size are read without drawing on the byte budget (the
/// per-connection buffer holds about this much in any case).
const SMALL_FRAME: usize = 64 * 1024;
/// The most read from a socket at once into a large frame.
const READ_CHUNK: usize = 256 * 1024;
/// The most Produce requests one connection may have taken in (appended)
/// and not yet answered (waiting for their sync or replicas), and the most
/// bytes of such requests; past either it stops reading until the oldest
/// is answered, so a client cannot queue unbounded work.
const MAX_IN_FLIGHT: usize = 64;
const MAX_IN_FLIGHT_BYTES: usize = 64 << 20;

/// The broker-wide budget for the bytes of large frames (`queued_max_request_bytes`). A frame
/// holds budget for the bytes it has received past its first [`SMALL_FRAME`] and for the chunk
/// it reads next, never for bytes not yet sent, so a size prefix holds nothing. Frames that
/// hold part of the budget could each wait for more that only the others' completion frees:
/// then one frame at a time (the holder of the overdraft) reads the rest of its frame past the
/// budget, so the bytes held never pass the budget plus one frame, and some frame always
/// completes.
struct Budget {
    bytes: Arc<Semaphore>,
    overdraft: Arc<Semaphore>,
}

/// What one frame holds of the [`Budget`] until it has been handled.
#[derive(Default)]
struct Held {
    bytes: Option<OwnedSemaphorePermit>,
    overdraft: Option<OwnedSemaphorePermit>,
}

impl Budget {
    fn new(bytes: usize) -> Budget {
        Budget {
            bytes: Arc::new(Semaphore::new(bytes)),
            overdraft: Arc::new(Semaphore::new(1)),
        }
    }

    /// Makes `held` cover `need` bytes (or the overdraft), waiting for them.
    async fn cover(&self, held: &mut Held, need: usize) {
        let have = held.bytes.as_ref().map_or(0, |p| p.num_permits());
        if held.overdraft.is_some() || need <= have {
            return;
        }
        let more = self.bytes.clone().acquire_many_owned((need - have) as u32);
        let overdraft = self.overdraft.clone().acquire_owned();
        tokio::select! {
            biased;
            more = more => {
                let more = more.expect("budget never closed");
                match held.bytes.as_mut() {
                    Some(bytes) => bytes.merge(more),
                    None => held.bytes = Some(more),
                }
            }
            token = overdraft => held.overdraft = Some(token.expect("budget never closed")),
        }
    }
}

/// Serves `listener` with the TLS and SASL that `security` asks for until
/// `shutdown` completes, then closes every connection and returns once
/// they have all finished.
pub async fn run(
    listener: TcpListener,
    broker: Arc<Broker>,
    security: Arc<security::Listener>,
    shutdown: impl Future,
) {
    let (notify_shutdown, _) = broadcast::channel::<()>(1);
    let (shutdown_complete_tx, mut shutdown_complete_rx) = mpsc::channel::<()>(1);
    let accept = accept_loop(
        listener,
        broker,
        security,
        notify_shutdown.clone(),
        shutdown_complete_tx,
    );
    tokio::select! {
        result = accept => {
            if let Err(e) = result {
                tracing::error!(error = %e, "accept loop failed");
            }
        }
        _ = shutdown => {}
    }
    // Dropping the sender tells each connection to stop; every connection
    // holds a clone of `shutdown_complete_tx`, so recv returns once all are gone.
    drop(notify_shutdown);
    let _ = shutdown_complete_rx.recv().await;
}

/// What the accept loop knows of one open connection.
struct Slot {
    ip: IpAddr,
    /// Milliseconds since `Registry::epoch` when it last became idle; 0
    /// while it is receiving or handling a frame.
    idle_since: AtomicU64,
    /// Milliseconds since `Registry::epoch` when the first byte of the frame
    /// being received arrived; 0 between frames.
    frame_since: AtomicU64,
    /// Set when it was chosen for eviction (it no longer counts).
    evicted: AtomicBool,
    /// Why the reaper closed it (`CLOSED_IDLE`, `CLOSED_SLOW`), else 0.
    expired: AtomicU8,
    close: Notify,
}

const CLOSED_IDLE: u8 = 1;
const CLOSED_SLOW: u8 = 2;

impl Slot {
    fn set_busy(&self) {
        self.idle_since.store(0, Ordering::Relaxed);
    }

    fn set_idle(&self, epoch: Instant) {
        self.idle_since.store(since(epoch), Ordering::Relaxed);
    }

    fn frame_started(&self, epoch: Instant) {
        self.frame_since.store(since(epoch), Ordering::Relaxed);
    }

    fn frame_done(&self) {
        self.frame_since.store(0, Ordering::Relaxed);
    }
}

/// Milliseconds since `epoch`, at least 1 (0 means "not set").
fn since(epoch: Instant) -> u64 {
    (epoch.elapsed().as_millis() as u64).max(1)
}

/// How often the reaper looks for connections past a deadline.
const REAP_EVERY: Duration = Duration::from_millis(250);

/// Closes connections idle past `connections_max_idle` and connections whose
/// frame is not whole within `frame_timeout`. One task for all of them, so
/// the read path arms no timer per request.
async fn reap(registry: Arc<Registry>, limits: crate::config::Limits) {
    let idle_ms = limits.connections_max_idle.as_millis() as u64;
    let frame_ms = limits.frame_timeout.as_millis() as u64;
    loop {
        tokio::time::sleep(REAP_EVERY).await;
        let now = since(registry.epoch);
        let slots = registry.slots.lock().expect("connection registry");
        for slot in slots.values() {
            if slot.expired.load(Ordering::Relaxed) != 0 {
                continue;
            }
            let idle = slot.idle_since.load(Ordering::Relaxed);
            let frame = slot.frame_since.load(Ordering::Relaxed);
            let why = if frame > 0 && now.saturating_sub(frame) > frame_ms {
                CLOSED_SLOW
            } else if frame == 0 && idle > 0 && now.saturating_sub(idle) > idle_ms {
                CLOSED_IDLE
            } else {
                continue;
            };
            slot.expired.store(why, Ordering::Relaxed);
            slot.close.notify_one();
        }
    }
}

/// The open connections, for the connection caps.
struct Registry {
    epoch: Instant,
    slots: Mutex<HashMap<u64, Arc<Slot>>>,
    next_id: AtomicU64,
}

/// Which connections an eviction may choose from.
type SlotScope = Box<dyn Fn(&Slot) -> bool>;

impl Registry {
    /// Admits a connection from `ip` if the caps allow, evicting the
    /// longest-idle connection of the full scope if need be; `None` refuses it.
    fn admit(&self, ip: IpAddr, max_total: usize, max_per_ip: usize) -> Option<(u64, Arc<Slot>)> {
        let mut slots = self.slots.lock().expect("connection registry");
        let live = |s: &&Arc<Slot>| !s.evicted.load(Ordering::Relaxed);
        let total = slots.values().filter(live).count();
        let from_ip = slots.values().filter(live).filter(|s| s.ip == ip).count();
        let scope: Option<SlotScope> = if from_ip >= max_per_ip {
            Some(Box::new(move |s: &Slot| s.ip == ip))
        } else if total >= max_total {
            Some(Box::new(|_: &Slot| true))
        } else {
            None
        };
        if let Some(in_scope) = scope {
            let now = self.epoch.elapsed().as_millis() as u64;
            let oldest = slots
                .values()
                .filter(live)
                .filter(|s| in_scope(s))
                .map(|s| (s.idle_since.load(Ordering::Relaxed), s))
                .filter(|(since, _)| {
                    *since > 0 && now.saturating_sub(*since) >= MIN_IDLE_TO_EVICT.as_millis() as u64
                })
                .min_by_key(|(since, _)| *since)
                .map(|(_, s)| s.clone())?;
            oldest.evicted.store(true, Ordering::Relaxed);
            oldest.close.notify_one();
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(Slot {
            ip,
            idle_since: AtomicU64::new(0),
            frame_since: AtomicU64::new(0),
            evicted: AtomicBool::new(false),
            expired: AtomicU8::new(0),
            close: Notify::new(),
        });
        slot.set_idle(self.epoch);
        slots.insert(id, slot.clone());
        Some((id, slot))
    }

    fn remove(&self, id: u64) {
        self.slots.lock().expect("connection registry").remove(&id);
    }
}

async fn accept_loop(
    listener: TcpListener,
    broker: Arc<Broker>,
    security: Arc<security::Listener>,
    notify_shutdown: broadcast::Sender<()>,
    shutdown_complete: mpsc::Sender<()>,
) -> Result<()> {
    let registry = Arc::new(Registry {
        epoch: Instant::now(),
        slots: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(0),
    });
    let budget = Arc::new(Budget::new(broker.config.limits.queued_max_request_bytes));
    let reaper = reap(registry.clone(), broker.config.limits.clone());
    tokio::pin!(reaper);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = accept(&listener) => accepted?,
            _ = &mut reaper => unreachable!("the reaper never ends"),
        };
        let config = &broker.config.limits;
        let Some((id, slot)) = registry.admit(
            peer.ip(),
            config.max_connections,
            config.max_connections_per_ip,
        ) else {
            tracing::warn!(%peer, "connection refused: at the connection limit with no idle connection to evict");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let connection = Connection {
            stream,
            buffer: BytesMut::new(),
            broker: broker.clone(),
            peer,
            slot,
            epoch: registry.epoch,
            budget: budget.clone(),
        };
        let mut shutdown = notify_shutdown.subscribe();
        let done = shutdown_complete.clone();
        let registry = registry.clone();
        let security = security.clone();
        tokio::spawn(async move {
            let broker = connection.broker.clone();
            broker.stats.connections.fetch_add(1, Ordering::Relaxed);
            let session = security.sasl.clone().map(sasl::Session::new);
            let served = match &security.tls {
                None => connection.serve(&mut shutdown, session).await,
                Some(acceptor) => match connection.tls(acceptor, &mut shutdown).await {
                    Ok(Some(tls)) => tls.serve(&mut shutdown, session).await,
                    Ok(None) => Ok(()),
                    Err(e) => Err(e),
                },
            };
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "connection closed");
            }
            broker.stats.connections.fetch_sub(1, Ordering::Relaxed);
            registry.remove(id);
            drop(done);
        });
    }
}

/// Accepts with a short back-off on transient errors (e.g. too many files).
async fn accept(listener: &TcpListener) -> Result<(TcpStream, SocketAddr)> {
    let mut backoff = 1;
    loop {
        match listener.accept().await {
            Ok(accepted) => return Ok(accepted),
            Err(e) if backoff > 64 => return Err(e.into()),
            Err(e) => tracing::warn!(error = %e, "accept failed, retrying"),
        }
        tokio::time::sleep(Duration::from_millis(backoff)).await;
        backoff *= 2;
    }
}

/// A connection's byte stream: TCP, or TLS over TCP.
trait Transport: AsyncRead + AsyncWrite + Unpin + Send {
    /// Waits for bytes on an idle connection and reads them into `buffer`
    /// (0 at EOF), or `None` when woken without any.
    fn read_idle(
        &mut self,
        buffer: &mut BytesMut,
    ) -> impl Future<Output = std::io::Result<Option<usize>>> + Send;
}

impl Transport for TcpStream {
    async fn read_idle(&mut self, buffer: &mut BytesMut) -> std::io::Result<Option<usize>> {
        // Wait for bytes before taking any buffer, so an idle connection
        // holds no more memory than it has.
        self.readable().await?;
        buffer.reserve(SMALL_FRAME);
        match self.try_read_buf(buffer) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Transport for tokio_rustls::server::TlsStream<TcpStream> {
    async fn read_idle(&mut self, buffer: &mut BytesMut) -> std::io::Result<Option<usize>> {
        // The TLS layer may hold decrypted bytes already, so the socket's
        // readiness says nothing: read through it.
        buffer.reserve(SMALL_FRAME);
        self.read_buf(buffer).await.map(Some)
    }
}

struct Connection<S> {
    stream: S,
    buffer: BytesMut,
    broker: Arc<Broker>,
    peer: SocketAddr,
    slot: Arc<Slot>,
    epoch: Instant,
    /// The broker-wide byte budget for frames (`queued_max_request_bytes`).
    budget: Arc<Budget>,
}

impl Connection<TcpStream> {
    /// The TLS handshake, within `frame_timeout`; `None` if the server
    /// stops or the reaper closes the connection first.
    async fn tls(
        self,
        acceptor: &tokio_rustls::TlsAcceptor,
        shutdown: &mut broadcast::Receiver<()>,
    ) -> Result<Option<Connection<tokio_rustls::server::TlsStream<TcpStream>>>> {
        let Connection {
            stream,
            buffer,
            broker,
            peer,
            slot,
            epoch,
            budget,
        } = self;
        let limit = broker.config.limits.frame_timeout;
        let stream = tokio::select! {
            handshake = tokio::time::timeout(limit, acceptor.accept(stream)) => match handshake {
                Ok(stream) => stream?,
                Err(_) => return Err(Error::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("TLS handshake not done within {} ms", limit.as_millis()),
                ))),
            },
            _ = shutdown.recv() => return Ok(None),
            _ = slot.close.notified() => return Ok(None),
        };
        Ok(Some(Connection {
            stream,
            buffer,
            broker,
            peer,
            slot,
            epoch,
            budget,
        }))
    }
}

impl<S: Transport> Connection<S> {
    /// Authenticates first if `sasl` asks for it, then serves requests.
    async fn serve(
        mut self,
        shutdown: &mut broadcast::Receiver<()>,
        sasl: Option<sasl::Session>,
    ) -> Result<()> {
        if let Some(session) = sasl {
            if !self.authenticate(session, shutdown).await? {
                return Ok(());
            }
        }
        // Produce requests taken in (appended) whose responses wait for
        // their sync or replicas, oldest first, with their frame sizes.
        let mut in_flight: VecDeque<(handlers::Deferred, usize)> = VecDeque::new();
        let mut in_flight_bytes = 0usize;
        loop {
            let read = if in_flight.is_empty() {
                self.next_frame(shutdown).await?
            } else {
                let room = in_flight.len() < MAX_IN_FLIGHT && in_flight_bytes < MAX_IN_FLIGHT_BYTES;
                let head = &mut in_flight.front_mut().expect("not empty").0;
                let done = if room {
                    tokio::select! {
                        biased;
                        done = head => done,
                        read = self.next_frame(shutdown) => match read? {
                            Some(frame) => {
                                if !self.take(frame, &mut in_flight, &mut in_flight_bytes, shutdown).await? {
                                    return Ok(());
                                }
                                continue;
                            }
                            None => return Ok(()),
                        },
                    }
                } else {
                    tokio::select! {
                        done = head => done,
                        _ = shutdown.recv() => return Ok(()),
                    }
                };
                let (_, bytes) = in_flight.pop_front().expect("not empty");
                in_flight_bytes -= bytes;
                if let Some(response) = done? {
                    self.send(&response).await?;
                }
                continue;
            };
            let Some(frame) = read else {
                return Ok(());
            };
            if !self
                .take(frame, &mut in_flight, &mut in_flight_bytes, shutdown)
                .await?
            {
                return Ok(());
            }
        }
    }

    /// Takes in one request: a Produce joins `in_flight` once appended
    /// (the connection goes on reading while it waits for its sync); any
    /// other request first lets every earlier response go out, then runs
    /// and answers in turn. False when the connection is to end quietly.
    async fn take(
        &mut self,
        (frame, permit): (Bytes, Held),
        in_flight: &mut VecDeque<(handlers::Deferred, usize)>,
        in_flight_bytes: &mut usize,
        shutdown: &mut broadcast::Receiver<()>,
    ) -> Result<bool> {
        let size = frame.len();
        let request = codec::decode_request(frame, &self.broker.apis)?;
        // An isolated cluster node (fault injection) drops the connection.
        if self
            .broker
            .pause
            .refuses(request.header.client_id.as_deref())
        {
            return Ok(false);
        }
        // A paused cluster node (fault injection) holds every request.
        if self.broker.pause.paused() {
            tokio::select! {
                _ = self.broker.pause.wait() => {}
                _ = shutdown.recv() => return Ok(false),
            }
        }
        let request = match handlers::begin(&self.broker, request) {
            Ok(deferred) => {
                drop(permit);
                in_flight.push_back((deferred, size));
                *in_flight_bytes += size;
                return Ok(true);
            }
            Err(request) => *request,
        };
        // Responses go out in request order.
        while let Some((deferred, bytes)) = in_flight.pop_front() {
            *in_flight_bytes -= bytes;
            let done = tokio::select! {
                done = deferred => done?,
                _ = shutdown.recv() => return Ok(false),
            };
            if let Some(response) = done {
                self.send(&response).await?;
            }
        }
        let response = tokio::select! {
            response = handlers::dispatch(&self.broker, request, self.peer) => response?,
            _ = shutdown.recv() => return Ok(false),
        };
        drop(permit);
        if let Some(response) = response {
            self.send(&response).await?;
        }
        Ok(true)
    }

    /// Writes one response frame whole (TLS included: flushed).
    async fn send(&mut self, response: &Frame) -> Result<()> {
        write_frame(&mut self.stream, response).await?;
        // A no-op on TCP; TLS holds encrypted bytes until flushed.
        self.stream.flush().await?;
        Stats::add(&self.broker.stats.bytes_out, response.len() as u64);
        Ok(())
    }

    /// Answers ApiVersions, SaslHandshake and SaslAuthenticate until the
    /// client has authenticated (true), fails to (false, after the
    /// response that says why) or goes away (false). Any other request
    /// first is an error: the connection closes without a response.
    async fn authenticate(
        &mut self,
        mut session: sasl::Session,
        shutdown: &mut broadcast::Receiver<()>,
    ) -> Result<bool> {
        loop {
            let Some((frame, _permit)) = self.next_frame(shutdown).await? else {
                return Ok(false);
            };
            let request = codec::decode_request(frame, &self.broker.apis)?;
            let (response, progress) = handlers::authenticate(&self.broker, &mut session, request)?;
            self.send(&response).await?;
            match progress {
                AuthProgress::Continue => {}
                AuthProgress::Authenticated(user) => {
                    tracing::debug!(peer = %self.peer, %user, "authenticated");
                    return Ok(true);
                }
                AuthProgress::Refused => {
                    tracing::debug!(peer = %self.peer, "SASL authentication refused");
                    return Ok(false);
                }
            }
        }
    }

    /// The next frame, `None` when the client or the server closes; the
    /// reaper's deadlines end it with an error (frame) or quietly (idle).
    async fn next_frame(
        &mut self,
        shutdown: &mut broadcast::Receiver<()>,
    ) -> Result<Option<(Bytes, Held)>> {
        let slot = self.slot.clone();
        tokio::select! {
            read = self.read_frame() => read,
            _ = shutdown.recv() => Ok(None),
            _ = slot.close.notified() => {
                match slot.expired.load(Ordering::Relaxed) {
                    CLOSED_SLOW => Err(frame_timeout(self.broker.config.limits.frame_timeout)),
                    CLOSED_IDLE => {
                        tracing::debug!(peer = %self.peer, "idle connection closed (connections.max.idle.ms)");
                        Ok(None)
                    }
                    _ => {
                        tracing::debug!(peer = %self.peer, "idle connection evicted for a new one");
                        Ok(None)
                    }
                }
            }
        }
    }

    /// The next whole frame (without its size) and the budget it holds, or
    /// `None` on a clean EOF. Deadlines (idle, frame) are the reaper's.
    async fn read_frame(&mut self) -> Result<Option<(Bytes, Held)>> {
        let config = &self.broker.config.limits;
        let mut permit = Held::default();
        let mut started = false;
        loop {
            if !started && !self.buffer.is_empty() {
                started = true;
                self.slot.set_busy();
                self.slot.frame_started(self.epoch);
            }
            let mut want = SMALL_FRAME;
            if let Some(size) = codec::peek_frame_size(&self.buffer, config.max_frame_bytes)? {
                if self.buffer.len() >= 4 + size {
                    self.slot.frame_done();
                    self.buffer.advance(4);
                    return Ok(Some((self.buffer.split_to(size).freeze(), permit)));
                }
                let missing = 4 + size - self.buffer.len();
                let received = self.buffer.len() - 4;
                if size > SMALL_FRAME && received >= SMALL_FRAME {
                    // Past its first SMALL_FRAME bytes (read as a small
                    // frame's are), the buffer grows by at most a chunk at
                    // a time, each covered by the budget before it is read
                    // (see `Budget`): a size prefix alone holds nothing (six
                    // prefixes claiming the whole budget held every other
                    // client's large frames until the frame timeout).
                    want = missing.min(READ_CHUNK);
                    let need = (received + want - SMALL_FRAME).min(config.queued_max_request_bytes);
                    self.budget.cover(&mut permit, need).await;
                } else if size > SMALL_FRAME {
                    want = missing.min(SMALL_FRAME - received);
                }
            }
            let n = if started {
                self.buffer.reserve(want);
                self.stream.read_buf(&mut self.buffer).await?
            } else {
                self.slot.set_idle(self.epoch);
                match self.stream.read_idle(&mut self.buffer).await? {
                    Some(n) => n,
                    None => continue,
                }
            };
            if n == 0 {
                if self.buffer.is_empty() {
                    return Ok(None);
                }
                return Err(Error::Io(std::io::ErrorKind::UnexpectedEof.into()));
            }
            Stats::add(&self.broker.stats.bytes_in, n as u64);
        }
    }
}

fn frame_timeout(limit: Duration) -> Error {
    Error::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("frame not whole within {} ms", limit.as_millis()),
    ))
}

/// At most this many chunks per `writev`: well under every platform's
/// IOV_MAX (1024 on Linux), and enough for a fetch of many partitions.
const MAX_IOVECS: usize = 64;

/// Writes a whole frame. Chunked frames go out with vectored writes straight
/// from their chunks (record data included, never copied into one buffer),
/// looping over partial writes until every byte is written.
pub(crate) async fn write_frame<W: AsyncWrite + Unpin>(out: &mut W, frame: &Frame) -> Result<()> {
    match frame {
        Frame::Whole(bytes) => out.write_all(bytes).await?,
        Frame::Chunks(chunks) => write_chunks(out, chunks).await?,
    }
    Ok(())
}

async fn write_chunks<W: AsyncWrite + Unpin>(out: &mut W, chunks: &[Bytes]) -> std::io::Result<()> {
    // Position of the first unwritten byte: chunk index and offset in it.
    let (mut index, mut offset) = (0usize, 0usize);
    let mut slices = [IoSlice::new(&[]); MAX_IOVECS];
    loop {
        while index < chunks.len() && offset == chunks[index].len() {
            index += 1;
            offset = 0;
        }
        if index == chunks.len() {
            return Ok(());
        }
        let mut used = 0;
        for (i, chunk) in chunks[index..].iter().enumerate() {
            if used == MAX_IOVECS {
                break;
            }
            let rest = if i == 0 { &chunk[offset..] } else { &chunk[..] };
            if !rest.is_empty() {
                slices[used] = IoSlice::new(rest);
                used += 1;
            }
        }
        let mut written = out.write_vectored(&slices[..used]).await?;
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        // Advance past what was written, possibly several chunks.
        while written > 0 && index < chunks.len() {
            let rest = chunks[index].len() - offset;
            if written < rest {
                offset += written;
                written = 0;
            } else {
                written -= rest;
                index += 1;
                offset = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A writer that takes at most `limit` bytes per call, every other call
    /// pending first, recording how many slices each vectored write offered.
    struct Trickle {
        out: Vec<u8>,
        limit: usize,
        vectored: bool,
        pending_next: bool,
        max_slices: usize,
    }

    impl Trickle {
        fn new(limit: usize, vectored: bool) -> Self {
            Trickle {
                out: Vec::new(),
                limit,
                vectored,
                pending_next: true,
                max_slices: 0,
            }
        }
    }

    impl AsyncWrite for Trickle {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            self.poll_write_vectored(cx, &[IoSlice::new(buf)])
        }

        fn poll_write_vectored(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            bufs: &[IoSlice<'_>],
        ) -> Poll<std::io::Result<usize>> {
            self.pending_next = !self.pending_next;
            if !self.pending_next {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.max_slices = self.max_slices.max(bufs.len());
            let bufs = if self.vectored { bufs } else { &bufs[..1] };
            let mut budget = self.limit;
            let mut n = 0;
            for buf in bufs {
                let take = buf.len().min(budget);
                self.out.extend_from_slice(&buf[..take]);
                budget -= take;
                n += take;
                if budget == 0 {
                    break;
                }
            }
            Poll::Ready(Ok(n))
        }

        fn is_write_vectored(&self) -> bool {
            self.vectored
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn chunked(count: usize) -> (Frame, Vec<u8>) {
        let chunks: Vec<Bytes> = (0..count)
            .map(|i| Bytes::from(vec![i as u8; (i * 7) % 23]))
            .collect();
        let flat = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        (Frame::Chunks(chunks), flat)
    }

    #[tokio::test]
    async fn partial_vectored_writes_deliver_every_byte_in_order() {
        for count in [0, 1, 5, 200] {
            let (frame, expected) = chunked(count);
            for limit in [1, 2, 3, 7, 22, 23, 100, 1 << 20] {
                for vectored in [true, false] {
                    let mut out = Trickle::new(limit, vectored);
                    write_frame(&mut out, &frame).await.unwrap();
                    assert_eq!(out.out, expected, "{count} chunks, limit {limit}");
                    assert!(out.max_slices <= MAX_IOVECS);
                }
            }
        }
    }

    #[tokio::test]
    async fn whole_frames_are_written_as_is() {
        let frame = Frame::from(Bytes::from_static(b"whole frame"));
        let mut out = Trickle::new(3, true);
        write_frame(&mut out, &frame).await.unwrap();
        assert_eq!(out.out, b"whole frame");
    }

    #[tokio::test]
    async fn a_writer_that_takes_nothing_is_an_error() {
        let (frame, _) = chunked(5);
        let mut out = Trickle::new(0, true);
        assert!(write_frame(&mut out, &frame).await.is_err());
    }
}
