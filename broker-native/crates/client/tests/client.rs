//! The client against a scripted broker on a loopback socket: answers matched in order, a
//! bounded window, frames nobody asked for refused, and the pool's reconnect back-off.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::ApiVersionsRequest;
use kafka_protocol::protocol::StrBytes;
use kbench_client::{Backoff, ConnectOptions, Error, Pool, SimpleClient};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// ApiVersions v0 is the request with the smallest answer: an error code and an empty array.
const V0: i16 = 0;

fn options() -> ConnectOptions {
    ConnectOptions::new(StrBytes::from_static_str("test")).with_window(2)
}

/// An ApiVersions v0 answer with `correlation_id`.
fn answer(correlation_id: i32) -> Bytes {
    let mut out = BytesMut::new();
    out.put_i32(4 + 2 + 4);
    out.put_i32(correlation_id);
    out.put_i16(0);
    out.put_i32(0);
    out.freeze()
}

/// A broker that answers each request with what `script` returns for (its index, its
/// correlation id); returns its address.
async fn broker(script: impl Fn(usize, i32) -> Vec<Bytes> + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let script = Arc::new(script);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, script.clone()));
        }
    });
    addr
}

async fn serve(mut stream: TcpStream, script: Arc<dyn Fn(usize, i32) -> Vec<Bytes> + Send + Sync>) {
    for nth in 0.. {
        let Ok(size) = stream.read_i32().await else {
            return;
        };
        let mut frame = vec![0; size as usize];
        if stream.read_exact(&mut frame).await.is_err() {
            return;
        }
        let mut header = &frame[4..8];
        let correlation_id = header.get_i32();
        for out in script(nth, correlation_id) {
            if stream.write_all(&out).await.is_err() {
                return;
            }
        }
    }
}

#[tokio::test]
async fn pipelined_answers_come_back_matched_in_order() {
    let addr = broker(|_, id| vec![answer(id)]).await;
    let mut pool = Pool::new(options());
    let c = pool.connect(&addr).await.unwrap();
    let (first, _) = c
        .send(V0, &ApiVersionsRequest::default(), true)
        .await
        .unwrap();
    let (second, _) = c
        .send(V0, &ApiVersionsRequest::default(), true)
        .await
        .unwrap();
    assert_eq!(c.in_flight(), 2);
    for expected in [first, second] {
        let response = pool.recv().await;
        assert_eq!(response.correlation_id, expected);
        let frame = response.frame.unwrap();
        kbench_client::decode_response::<ApiVersionsRequest>(frame, V0).unwrap();
    }
    assert_eq!(pool.get(&addr).unwrap().in_flight(), 0);
}

#[tokio::test]
async fn a_request_beyond_the_window_is_refused() {
    let addr = broker(|_, _| vec![]).await;
    let mut pool = Pool::new(options());
    let c = pool.connect(&addr).await.unwrap();
    for _ in 0..2 {
        c.send(V0, &ApiVersionsRequest::default(), true)
            .await
            .unwrap();
    }
    let e = c
        .send(V0, &ApiVersionsRequest::default(), true)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::WindowFull { window: 2, .. }), "{e}");
    // A request that expects no answer (acks=0) takes no room.
    c.send(V0, &ApiVersionsRequest::default(), false)
        .await
        .unwrap();
}

#[tokio::test]
async fn an_answer_nobody_asked_for_ends_the_connection() {
    // Each request is answered, then a second time.
    let addr = broker(|_, id| vec![answer(id), answer(id + 100)]).await;
    let mut pool = Pool::new(options());
    let c = pool.connect(&addr).await.unwrap();
    let (asked, _) = c
        .send(V0, &ApiVersionsRequest::default(), true)
        .await
        .unwrap();
    let id = c.id();
    assert_eq!(pool.recv().await.correlation_id, asked);
    let e = pool.recv().await.frame.unwrap_err().to_string();
    assert!(
        e.contains("unsolicited response (correlation id 100)"),
        "{e}"
    );
    assert!(pool.get(&addr).is_none(), "connection {id} kept");
}

#[tokio::test]
async fn an_answer_with_another_correlation_id_ends_the_connection() {
    let addr = broker(|_, id| vec![answer(id + 7)]).await;
    let mut pool = Pool::new(options());
    let c = pool.connect(&addr).await.unwrap();
    c.send(V0, &ApiVersionsRequest::default(), true)
        .await
        .unwrap();
    let e = pool.recv().await.frame.unwrap_err().to_string();
    assert!(e.contains("unsolicited correlation id 7"), "{e}");
    assert!(pool.get(&addr).is_none());
}

#[tokio::test]
async fn a_lying_frame_size_is_a_protocol_error() {
    let addr = broker(|_, _| vec![Bytes::from_static(b"\xff\xff\xff\xf0")]).await;
    let mut client = SimpleClient::connect(&addr, &options()).await.unwrap();
    let e = client
        .call(V0, &ApiVersionsRequest::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad frame size"), "{e}");
}

#[tokio::test]
async fn a_simple_call_refuses_an_answer_to_another_request() {
    let addr = broker(|nth, id| vec![answer(if nth == 0 { id } else { id + 1 })]).await;
    let mut client = SimpleClient::connect(&addr, &options()).await.unwrap();
    client
        .call(V0, &ApiVersionsRequest::default())
        .await
        .unwrap();
    let e = client
        .call(V0, &ApiVersionsRequest::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("unsolicited correlation id 2"), "{e}");
}

#[tokio::test]
async fn an_answer_that_does_not_fit_its_shape_is_refused_before_decoding() {
    // ApiVersions v0 claiming i32::MAX api keys in four bytes.
    let addr = broker(|_, id| {
        let mut out = BytesMut::new();
        out.put_i32(4 + 2 + 4);
        out.put_i32(id);
        out.put_i16(0);
        out.put_i32(i32::MAX);
        vec![out.freeze()]
    })
    .await;
    let mut client = SimpleClient::connect(&addr, &options()).await.unwrap();
    let e = client
        .call(V0, &ApiVersionsRequest::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("ApiVersionsResponse v0"), "{e}");
}

#[tokio::test]
async fn a_failed_connect_backs_off_doubling_up_to_the_max() {
    // A port nothing listens on: bound, then closed.
    let addr = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().to_string()
    };
    let backoff = Backoff {
        initial: Duration::from_millis(40),
        max: Duration::from_millis(60),
    };
    let mut pool = Pool::new(options().with_backoff(backoff));
    assert!(matches!(pool.connect(&addr).await, Err(Error::Io { .. })));
    assert!(matches!(
        pool.connect(&addr).await,
        Err(Error::BackingOff { .. })
    ));
    let mut seen = vec![];
    for _ in 0..3 {
        let at = pool.retry_at(&addr).expect("backing off");
        seen.push(at - tokio::time::Instant::now());
        tokio::time::sleep_until(at).await;
        assert!(matches!(pool.connect(&addr).await, Err(Error::Io { .. })));
    }
    assert!(seen[0] <= Duration::from_millis(40), "{seen:?}");
    assert!(seen[1] > Duration::from_millis(40), "{seen:?}");
    assert!(seen[2] <= Duration::from_millis(60), "{seen:?}");
}

#[tokio::test]
async fn a_connect_that_succeeds_clears_the_back_off() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    drop(listener);
    let mut pool = Pool::new(options().with_backoff(Backoff::constant(Duration::from_millis(10))));
    assert!(pool.connect(&addr).await.is_err());
    let _listener = TcpListener::bind(&addr).await.unwrap();
    tokio::time::sleep_until(pool.retry_at(&addr).expect("backing off")).await;
    pool.connect(&addr).await.unwrap();
    assert_eq!(pool.retry_at(&addr), None);
}

#[tokio::test]
async fn a_call_given_up_has_its_answer_dropped_by_the_next() {
    // A broker that answers its first request 200 ms late.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        for nth in 0.. {
            let Ok(size) = stream.read_i32().await else {
                return;
            };
            let mut frame = vec![0; size as usize];
            stream.read_exact(&mut frame).await.unwrap();
            if nth == 0 {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            let id = (&frame[4..8]).get_i32();
            stream.write_all(&answer(id)).await.unwrap();
        }
    });
    let mut client = SimpleClient::connect(&addr, &options()).await.unwrap();
    let request = ApiVersionsRequest::default();
    let first = client.call(V0, &request);
    assert!(tokio::time::timeout(Duration::from_millis(20), first)
        .await
        .is_err());
    client.call(V0, &request).await.unwrap();
}
