//! The TCP server: an accept loop with a connection cap, and one task per
//! connection that reads frames, dispatches them in order and writes the
//! responses back in the same order.

use crate::broker::Broker;
use crate::codec;
use crate::error::{Error, Result};
use crate::handlers;
use crate::stats::Stats;
use bytes::{Buf, Bytes, BytesMut};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{broadcast, mpsc, Semaphore};

/// Serves `listener` until `shutdown` completes, then closes every
/// connection and returns once they have all finished.
pub async fn run(listener: TcpListener, broker: Arc<Broker>, shutdown: impl Future) {
    let (notify_shutdown, _) = broadcast::channel::<()>(1);
    let (shutdown_complete_tx, mut shutdown_complete_rx) = mpsc::channel::<()>(1);
    let limit = Arc::new(Semaphore::new(broker.config.max_connections.max(1)));
    let accept = accept_loop(
        listener,
        broker,
        limit,
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

async fn accept_loop(
    listener: TcpListener,
    broker: Arc<Broker>,
    limit: Arc<Semaphore>,
    notify_shutdown: broadcast::Sender<()>,
    shutdown_complete: mpsc::Sender<()>,
) -> Result<()> {
    loop {
        let permit = limit
            .clone()
            .acquire_owned()
            .await
            .expect("semaphore never closed");
        let (stream, peer) = accept(&listener).await?;
        let _ = stream.set_nodelay(true);
        let connection = Connection {
            stream,
            buffer: BytesMut::with_capacity(64 * 1024),
            broker: broker.clone(),
            peer,
        };
        let mut shutdown = notify_shutdown.subscribe();
        let done = shutdown_complete.clone();
        tokio::spawn(async move {
            connection
                .broker
                .stats
                .connections
                .fetch_add(1, Ordering::Relaxed);
            let broker = connection.broker.clone();
            if let Err(e) = connection.serve(&mut shutdown).await {
                tracing::debug!(%peer, error = %e, "connection closed");
            }
            broker.stats.connections.fetch_sub(1, Ordering::Relaxed);
            drop(permit);
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

struct Connection {
    stream: TcpStream,
    buffer: BytesMut,
    broker: Arc<Broker>,
    peer: SocketAddr,
}

impl Connection {
    async fn serve(mut self, shutdown: &mut broadcast::Receiver<()>) -> Result<()> {
        loop {
            let frame = tokio::select! {
                frame = self.read_frame() => frame?,
                _ = shutdown.recv() => return Ok(()),
            };
            let Some(frame) = frame else {
                return Ok(());
            };
            let request = codec::decode_request(frame, &self.broker.apis)?;
            let response = tokio::select! {
                response = handlers::dispatch(&self.broker, request, self.peer) => response?,
                _ = shutdown.recv() => return Ok(()),
            };
            if let Some(response) = response {
                self.stream.write_all(&response).await?;
                Stats::add(&self.broker.stats.bytes_out, response.len() as u64);
            }
        }
    }

    /// The next whole frame (without its size), or `None` on a clean EOF.
    async fn read_frame(&mut self) -> Result<Option<Bytes>> {
        loop {
            if let Some(size) =
                codec::peek_frame_size(&self.buffer, self.broker.config.max_frame_bytes)?
            {
                if self.buffer.len() >= 4 + size {
                    self.buffer.advance(4);
                    return Ok(Some(self.buffer.split_to(size).freeze()));
                }
                self.buffer.reserve(4 + size - self.buffer.len());
            }
            let n = self.stream.read_buf(&mut self.buffer).await?;
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
