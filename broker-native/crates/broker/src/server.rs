//! The TCP server: an accept loop with a connection cap, and one task per
//! connection that reads frames, dispatches them in order and writes the
//! responses back in the same order.

use crate::broker::Broker;
use crate::codec::{self, Frame};
use crate::error::{Error, Result};
use crate::handlers;
use crate::stats::Stats;
use bytes::{Buf, Bytes, BytesMut};
use std::future::Future;
use std::io::IoSlice;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
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
            // A paused cluster node (fault injection) holds every request.
            if let Some(node) = &self.broker.cluster {
                tokio::select! {
                    _ = node.wait_unpaused() => {}
                    _ = shutdown.recv() => return Ok(()),
                }
            }
            let response = tokio::select! {
                response = handlers::dispatch(&self.broker, request, self.peer) => response?,
                _ = shutdown.recv() => return Ok(()),
            };
            if let Some(response) = response {
                write_frame(&mut self.stream, &response).await?;
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
