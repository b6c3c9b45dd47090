//! A controller for the agent's tests: a plain TCP connection speaking protocol v1 line by line,
//! as the TypeScript controller does.

#![allow(dead_code)]

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

pub const TOKEN: &str = "s3cret-token";

pub struct Controller {
    reader: BufReader<OwnedReadHalf>,
    pub writer: OwnedWriteHalf,
    next_id: u64,
}

impl Controller {
    pub async fn connect(address: impl tokio::net::ToSocketAddrs) -> Controller {
        let stream = TcpStream::connect(address).await.unwrap();
        let (reader, writer) = stream.into_split();
        Controller {
            reader: BufReader::new(reader),
            writer,
            next_id: 0,
        }
    }

    /// Connects and says hello with the right token.
    pub async fn ready(address: impl tokio::net::ToSocketAddrs) -> Controller {
        let mut c = Controller::connect(address).await;
        let reply = c.hello(TOKEN).await;
        assert_eq!(reply["ok"], true, "{reply}");
        c
    }

    /// Sends `request` with the next id; returns the reply, whose id must echo it.
    pub async fn call(&mut self, mut request: Value) -> Value {
        self.next_id += 1;
        request["id"] = self.next_id.into();
        self.send_line(&serde_json::to_vec(&request).unwrap()).await;
        let reply = self.reply().await.expect("a reply");
        assert_eq!(reply["id"], self.next_id, "{reply}");
        reply
    }

    pub async fn hello(&mut self, token: &str) -> Value {
        self.call(json!({ "op": "hello", "version": 1, "token": token }))
            .await
    }

    pub async fn send_line(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
    }

    /// The next reply line; None when the agent closed the connection.
    pub async fn reply(&mut self) -> Option<Value> {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(60), self.reader.read_line(&mut line));
        match read.await.expect("a reply within a minute") {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(serde_json::from_str(&line).expect("a JSON reply")),
        }
    }

    /// Every byte until the agent closes the connection (within a minute).
    pub async fn bytes_until_closed(&mut self) -> Vec<u8> {
        use tokio::io::AsyncReadExt;
        let mut bytes = vec![];
        let read = self.reader.read_to_end(&mut bytes);
        let _ = tokio::time::timeout(Duration::from_secs(60), read).await;
        bytes
    }

    /// True once the agent has closed the connection (nothing more to read).
    pub async fn closed(&mut self) -> bool {
        self.reply().await.is_none()
    }

    /// The agent's clock offset from ours, measured as NTP does over 16 round trips: the
    /// offset of the sample with the smallest round trip, and half that round trip.
    pub async fn clock_offset(&mut self) -> (f64, f64) {
        let mut best = (0.0, f64::INFINITY);
        for _ in 0..16 {
            let t0 = now_micros();
            let reply = self.call(json!({ "op": "time" })).await;
            let t1 = now_micros();
            let agent = reply["micros"].as_f64().unwrap();
            if t1 - t0 < best.1 {
                best = (agent - (t0 + t1) / 2.0, t1 - t0);
            }
        }
        (best.0, best.1 / 2.0)
    }
}

pub fn now_micros() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1e6
}
