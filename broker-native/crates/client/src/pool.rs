//! Pipelined connections keyed by broker address, sharing one response stream, with a
//! reconnect back-off per address.
//!
//! A pool holds a connection per broker it talks to (a handful), so connections are found by
//! a scan rather than a hash. Answers come out of [`Pool::recv`] already matched against their
//! connection's window: a frame from a connection given up is dropped, and one that answers
//! nothing ends its connection with a protocol error.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::connection::{Connection, Response};
use crate::error::{Error, Result};
use crate::transport::ConnectOptions;

/// A failed connect's back-off.
#[derive(Debug)]
struct Retry {
    addr: String,
    wait: Duration,
    at: Instant,
}

#[derive(Debug)]
pub struct Pool {
    options: ConnectOptions,
    connections: Vec<Connection>,
    retries: Vec<Retry>,
    next_id: u64,
    responses_tx: mpsc::UnboundedSender<Response>,
    responses: mpsc::UnboundedReceiver<Response>,
}

impl Pool {
    pub fn new(options: ConnectOptions) -> Pool {
        let (responses_tx, responses) = mpsc::unbounded_channel();
        Pool {
            options,
            connections: vec![],
            retries: vec![],
            next_id: 1,
            responses_tx,
            responses,
        }
    }

    pub fn options(&self) -> &ConnectOptions {
        &self.options
    }

    /// The open connection to `addr`, if any.
    pub fn get(&mut self, addr: &str) -> Option<&mut Connection> {
        self.connections.iter_mut().find(|c| c.addr() == addr)
    }

    /// The connection to `addr`, connecting now if there is none; refused while a failed
    /// connect to `addr` is backing off.
    pub async fn connect(&mut self, addr: &str) -> Result<&mut Connection> {
        if let Some(i) = self.connections.iter().position(|c| c.addr() == addr) {
            return Ok(&mut self.connections[i]);
        }
        let retry = self.retries.iter().position(|r| r.addr == addr);
        if let Some(r) = retry.map(|i| &self.retries[i]) {
            if Instant::now() < r.at {
                return Err(Error::BackingOff {
                    addr: addr.to_string(),
                });
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        match Connection::connect(addr, id, &self.options, self.responses_tx.clone()).await {
            Ok(c) => {
                if let Some(i) = retry {
                    self.retries.swap_remove(i);
                }
                self.connections.push(c);
                Ok(self.connections.last_mut().expect("pushed"))
            }
            Err(e) => {
                let previous = retry.map(|i| self.retries.swap_remove(i).wait);
                let wait = self.options.backoff.next(previous);
                self.retries.push(Retry {
                    addr: addr.to_string(),
                    wait,
                    at: Instant::now() + wait,
                });
                Err(e)
            }
        }
    }

    /// When a connect to `addr` may be tried again (None: now).
    pub fn retry_at(&self, addr: &str) -> Option<Instant> {
        self.retries
            .iter()
            .find(|r| r.addr == addr && Instant::now() < r.at)
            .map(|r| r.at)
    }

    /// Closes connection `id`; answers still on their way from it are dropped.
    pub fn remove(&mut self, id: u64) -> bool {
        let before = self.connections.len();
        self.connections.retain(|c| c.id() != id);
        self.connections.len() != before
    }

    /// Closes every connection.
    pub fn clear(&mut self) {
        self.connections.clear();
    }

    /// The next answer from any connection, or the reason a connection died (it is then
    /// removed). Cancel-safe.
    pub async fn recv(&mut self) -> Response {
        loop {
            let response = self
                .responses
                .recv()
                .await
                .expect("the pool holds a sender");
            if let Some(response) = self.accept(response) {
                return response;
            }
        }
    }

    /// Like [`Pool::recv`], without waiting.
    pub fn try_recv(&mut self) -> Option<Response> {
        while let Ok(response) = self.responses.try_recv() {
            if let Some(response) = self.accept(response) {
                return Some(response);
            }
        }
        None
    }

    /// Matches an answer against its connection's window; None if it is from a connection
    /// given up.
    fn accept(&mut self, mut response: Response) -> Option<Response> {
        let i = self
            .connections
            .iter()
            .position(|c| c.id() == response.connection)?;
        let completed = match &response.frame {
            Ok(_) => self.connections[i].complete(response.correlation_id),
            Err(_) => Ok(()),
        };
        if let Err(e) = completed {
            response.frame = Err(e);
        }
        if response.frame.is_err() {
            self.connections.swap_remove(i);
        }
        Some(response)
    }
}
