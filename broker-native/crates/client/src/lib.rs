//! kbench's Kafka client, shared by the load engine's producers and consumers and by the
//! cluster's replica fetcher.
//!
//! - [`Connection`]: one pipelined connection. Requests are written in order by the owner; a
//!   reader task hands each response frame to a stream shared by the owner's connections. At
//!   most `window` requests await an answer, and a frame nobody asked for is a protocol error,
//!   so a broker cannot make the client buffer more than the window's answers.
//! - [`Pool`]: pipelined connections keyed by broker address, one response stream for all,
//!   and a reconnect back-off per address.
//! - [`SimpleClient`]: one request at a time over a connection of its own, read in the
//!   caller's task (metadata and group calls, a follower's fetches).
//!
//! Every response is walked with kbench-wire before kafka-protocol decodes it
//! ([`decode_response`]). TLS and SASL plug in at one place, [`transport`]: the stream
//! ([`transport::Transport`], plain or [`tls`]) and the handshake ([`sasl`]: PLAIN, SCRAM,
//! OAUTHBEARER) run after connecting, before any request.

mod backoff;
mod connection;
mod error;
mod frame;
mod pool;
pub mod sasl;
pub mod scram;
mod simple;
pub mod tls;
pub mod transport;

pub use backoff::Backoff;
pub use connection::{Connection, Response};
pub use error::{Error, Result};
pub use frame::decode_response;
pub use pool::Pool;
pub use sasl::{Sasl, TokenSource};
pub use scram::ScramHash;
pub use simple::SimpleClient;
pub use tls::{Tls, TlsOptions};
pub use transport::{ConnectOptions, Security};
