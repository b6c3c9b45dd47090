//! The stream under a connection, and the one place where TLS and SASL will plug in.
//!
//! [`open`] connects TCP, then would wrap the stream for the [`Security`] asked (TLS: a
//! `Transport::Tls` variant around a rustls stream, with `ReadHalf::Tls` and `WriteHalf::Tls`
//! from `tokio::io::split`), split it into the halves a connection reads and writes, and run
//! the handshake on them (SASL: SaslHandshake and SaslAuthenticate, one frame at a time) before
//! the first request. Today only [`Security::Plaintext`] exists, so both steps are empty.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use kafka_protocol::protocol::StrBytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

use crate::backoff::Backoff;
use crate::error::{Error, Result};

/// How a connection is secured and authenticated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Security {
    /// Plain TCP, no authentication (Kafka's PLAINTEXT).
    #[default]
    Plaintext,
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
            security: Security::Plaintext,
        }
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
    let transport = match options.security {
        Security::Plaintext => Transport::Plain(stream),
    };
    let (mut read, mut write) = transport.into_split();
    handshake(&mut read, &mut write, addr, options).await?;
    Ok((read, write))
}

/// What runs on a fresh stream before its first request: SASL's exchange will go here.
async fn handshake(
    _read: &mut ReadHalf,
    _write: &mut WriteHalf,
    _addr: &str,
    options: &ConnectOptions,
) -> Result<()> {
    match options.security {
        Security::Plaintext => Ok(()),
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
        }
    }
}

#[derive(Debug)]
pub enum ReadHalf {
    Plain(OwnedReadHalf),
}

#[derive(Debug)]
pub enum WriteHalf {
    Plain(OwnedWriteHalf),
}

impl AsyncRead for ReadHalf {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ReadHalf::Plain(s) => Pin::new(s).poll_read(cx, buf),
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
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}
