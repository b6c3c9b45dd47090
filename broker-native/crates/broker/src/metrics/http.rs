//! A small HTTP/1.1 server for `GET /metrics` alone: one request per
//! connection (`Connection: close`), the request head bounded in size and
//! in time, and a cap on connections. Bytes from the network are hostile:
//! nothing here grows with what a client sends.

use super::{render, Collect};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// The largest request head (request line and headers) read.
pub const MAX_HEAD_BYTES: usize = 8 * 1024;
/// Connections served at once; more are closed as they arrive.
pub const MAX_CONNECTIONS: usize = 16;
/// A head must arrive whole within this (a slow client is cut off).
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// A client must take the response within this.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// The endpoint, serving until dropped.
pub struct MetricsServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl MetricsServer {
    /// Binds `addr` (`HOST:PORT`; port 0 picks one) and serves there.
    pub async fn start(addr: &str, collect: Collect) -> io::Result<MetricsServer> {
        MetricsServer::serve(TcpListener::bind(addr).await?, collect)
    }

    /// Serves on a listener already bound (on the current tokio runtime).
    pub fn serve(listener: TcpListener, collect: Collect) -> io::Result<MetricsServer> {
        let addr = listener.local_addr()?;
        let task = tokio::spawn(accept_loop(listener, collect));
        Ok(MetricsServer { addr, task })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting (connections being served finish on their own).
    pub fn stop(&self) {
        self.task.abort();
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn accept_loop(listener: TcpListener, collect: Collect) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors and the like: wait rather than spin.
                tracing::warn!(error = %e, "metrics: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            continue; // dropped: closed at once
        };
        let collect = collect.clone();
        tokio::spawn(async move {
            serve(stream, collect).await;
            drop(slot);
        });
    }
}

async fn serve(mut stream: TcpStream, collect: Collect) {
    let response = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut stream)).await {
        Err(_) => return, // too slow: closed without a word
        Ok(Err(_)) => return,
        Ok(Ok(Head::TooLarge)) => plain(
            431,
            "Request Header Fields Too Large",
            "request head over 8 KiB\n",
        ),
        Ok(Ok(Head::Complete(head))) => respond(&head, &collect).await,
    };
    let _ = tokio::time::timeout(WRITE_TIMEOUT, async {
        stream.write_all(&response).await?;
        stream.shutdown().await
    })
    .await;
}

enum Head {
    Complete(Vec<u8>),
    TooLarge,
}

/// Reads until the blank line that ends the head, at most `MAX_HEAD_BYTES`.
async fn read_head(stream: &mut TcpStream) -> io::Result<Head> {
    let mut buf = vec![0u8; MAX_HEAD_BYTES];
    let mut len = 0;
    loop {
        if len == buf.len() {
            return Ok(Head::TooLarge);
        }
        let n = stream.read(&mut buf[len..]).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        // The end may straddle two reads: look back three bytes.
        let from = len.saturating_sub(3);
        len += n;
        if let Some(end) = buf[from..len].windows(4).position(|w| w == b"\r\n\r\n") {
            buf.truncate(from + end);
            return Ok(Head::Complete(buf));
        }
    }
}

/// The response to a complete request head.
async fn respond(head: &[u8], collect: &Collect) -> Vec<u8> {
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.trim_end_matches('\r').split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return plain(400, "Bad Request", "malformed request line\n");
    };
    if !version.starts_with("HTTP/1.") {
        return plain(400, "Bad Request", "HTTP/1.x only\n");
    }
    let path = target.split('?').next().unwrap_or_default();
    if path != "/metrics" {
        return plain(404, "Not Found", "only /metrics is served here\n");
    }
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => {
            return response(
                405,
                "Method Not Allowed",
                PLAIN,
                "Allow: GET, HEAD\r\n",
                "GET /metrics only\n",
            )
        }
    };
    let body = render(&collect().await);
    let mut out = response(200, "OK", EXPOSITION, "", &body);
    if head_only {
        out.truncate(out.len() - body.len());
    }
    out
}

const PLAIN: &str = "text/plain; charset=utf-8";
/// The Prometheus text format's content type.
const EXPOSITION: &str = "text/plain; version=0.0.4; charset=utf-8";

fn plain(status: u16, reason: &str, body: &str) -> Vec<u8> {
    response(status, reason, PLAIN, "", body)
}

/// A whole response; `headers` are extra lines, each ending in CRLF.
fn response(status: u16, reason: &str, content_type: &str, headers: &str, body: &str) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{headers}Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}
