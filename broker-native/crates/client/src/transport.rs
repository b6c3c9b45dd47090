//! The stream under a connection, and the one place where TLS and SASL plug in.
//!
//! [`open`] connects TCP, wraps the stream for the [`Security`] asked (TLS: `Transport::Tls`
//! around a rustls stream, whose halves come from `tokio::io::split`), splits it into the halves
//! a connection reads and writes, and runs the handshake on them (SASL: SaslHandshake and
//! SaslAuthenticate, one frame at a time) before the first request. Plain TCP keeps its own
//! lock-free halves: the only cost TLS adds to it is the variant's match per read and write.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use kafka_protocol::protocol::StrBytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::backoff::Backoff;
use crate::error::{Error, Result};
use crate::sasl::{self, Sasl};
use crate::tls::Tls;

/// How a connection is secured and authenticated: Kafka's PLAINTEXT (neither), SSL (tls),
/// SASL_PLAINTEXT (sasl) or SASL_SSL (both).
#[derive(Debug, Clone, Default)]
pub struct Security {
    pub tls: Option<Tls>,
    pub sasl: Option<Sasl>,
}

impl Security {
    /// Kafka's name for the security protocol.
    pub fn protocol(&self) -> &'static str {
        match (&self.tls, &self.sasl) {
            (None, None) => "PLAINTEXT",
            (Some(_), None) => "SSL",
            (None, Some(_)) => "SASL_PLAINTEXT",
            (Some(_), Some(_)) => "SASL_SSL",
        }
    }
}

/// What every connection a client or pool opens is given.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// The client id each request header carries.
    pub client_id: StrBytes,
    /// How long a TCP connect may take; None: as long as the system allows.
    pub connect_timeout: Option<Duration>,
    /// Requests a pipelined connection lets await an answer at once.
    pub window: usize,
    /// A pool's wait before connecting again to an address whose connect failed.
    pub backoff: Backoff,
    pub security: Security,
}

impl ConnectOptions {
    pub fn new(client_id: StrBytes) -> ConnectOptions {
        ConnectOptions {
            client_id,
            connect_timeout: None,
            window: 1,
            backoff: Backoff::constant(Duration::from_millis(100)),
            security: Security::default(),
        }
    }

    pub fn with_security(mut self, security: Security) -> ConnectOptions {
        self.security = security;
        self
    }

    pub fn with_connect_timeout(mut self, timeout: Duration) -> ConnectOptions {
        self.connect_timeout = Some(timeout);
        self
    }

    pub fn with_window(mut self, window: usize) -> ConnectOptions {
        self.window = window.max(1);
        self
    }

    pub fn with_backoff(mut self, backoff: Backoff) -> ConnectOptions {
        self.backoff = backoff;
        self
    }
}

/// A connected stream, secured as its options asked (a variant per kind of stream).
#[derive(Debug)]
pub enum Transport {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// Connects to `addr` ("host:port"), secures the stream, splits it and authenticates.
pub async fn open(addr: &str, options: &ConnectOptions) -> Result<(ReadHalf, WriteHalf)> {
    let connect = TcpStream::connect(addr);
    let stream = match options.connect_timeout {
        Some(limit) => tokio::time::timeout(limit, connect)
            .await
            .map_err(|_| Error::io(addr)(io::ErrorKind::TimedOut.into()))?,
        None => connect.await,
    }
    .map_err(Error::io(addr))?;
    stream.set_nodelay(true).map_err(Error::io(addr))?;
    let transport = match &options.security.tls {
        None => Transport::Plain(stream),
        Some(tls) => Transport::Tls(Box::new(tls.connect(stream, addr).await?)),
    };
    let (mut read, mut write) = transport.into_split();
    handshake(&mut read, &mut write, addr, options).await?;
    Ok((read, write))
}

/// What runs on a fresh stream before its first request: SASL's exchange, when asked.
async fn handshake(
    read: &mut ReadHalf,
    write: &mut WriteHalf,
    addr: &str,
    options: &ConnectOptions,
) -> Result<()> {
    match &options.security.sasl {
        None => Ok(()),
        Some(sasl) => sasl::authenticate(read, write, addr, options.client_id.clone(), sasl).await,
    }
}

impl Transport {
    /// Halves that a reader task and a writer own apart (TCP's split takes no lock).
    pub fn into_split(self) -> (ReadHalf, WriteHalf) {
        match self {
            Transport::Plain(stream) => {
                let (read, write) = stream.into_split();
                (ReadHalf::Plain(read), WriteHalf::Plain(write))
            }
            // TLS state is one object, so its halves share it behind tokio's split lock.
            Transport::Tls(stream) => {
                let (read, write) = tokio::io::split(*stream);
                (ReadHalf::Tls(read), WriteHalf::Tls(write))
            }
        }
    }
}

#[derive(Debug)]
pub enum ReadHalf {
    Plain(OwnedReadHalf),
    Tls(tokio::io::ReadHalf<TlsStream<TcpStream>>),
}

#[derive(Debug)]
pub enum WriteHalf {
    Plain(OwnedWriteHalf),
    Tls(tokio::io::WriteHalf<TlsStream<TcpStream>>),
}

impl AsyncRead for ReadHalf {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ReadHalf::Plain(s) => Pin::new(s).poll_read(cx, buf),
            ReadHalf::Tls(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for WriteHalf {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_write(cx, buf),
            WriteHalf::Tls(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_flush(cx),
            WriteHalf::Tls(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_shutdown(cx),
            WriteHalf::Tls(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}
