//! A line past the bound is refused and the connection closed without the agent allocating past
//! the bound: every allocation in this process is watched (this file holds this one test, so
//! nothing else allocates alongside).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Controller, TOKEN};
use kbench_agent::{AgentConfig, MAX_HELLO_LINE_BYTES, MAX_LINE_BYTES};
use tokio::io::AsyncWriteExt;

/// The system allocator, noting the largest single allocation.
struct Watching;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Watching = Watching;

/// Sends `bytes` of `a` without a newline (64 KiB at a time, from one buffer), stopping quietly
/// when the agent has closed the connection.
async fn send_long_line(c: &mut Controller, bytes: usize) {
    let chunk = vec![b'a'; 64 << 10];
    let mut sent = 0;
    while sent < bytes {
        let n = chunk.len().min(bytes - sent);
        if c.writer.write_all(&chunk[..n]).await.is_err() {
            return;
        }
        sent += n;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_over_the_bound_is_refused_without_allocating_past_it() {
    let agent = kbench_agent::start(AgentConfig::new("127.0.0.1:0", TOKEN))
        .await
        .unwrap();

    // Before hello the bound is the hello's: 64 KiB.
    let mut c = Controller::connect(agent.address()).await;
    let sending = send_long_line(&mut c, MAX_LINE_BYTES + 1);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(60), sending).await;
    let reply = c.reply().await.unwrap();
    assert_eq!(
        reply["error"],
        format!("request: a line longer than {MAX_HELLO_LINE_BYTES} bytes")
    );
    assert!(c.closed().await);
    assert!(LARGEST.load(Ordering::Relaxed) < 1 << 20);

    // After hello, 16 MiB: one byte more is refused.
    let mut c = Controller::ready(agent.address()).await;
    send_long_line(&mut c, MAX_LINE_BYTES + 1).await;
    let reply = c.reply().await.unwrap();
    assert_eq!(reply["ok"], false);
    assert_eq!(
        reply["error"],
        format!("request: a line longer than {MAX_LINE_BYTES} bytes")
    );
    assert!(c.closed().await);
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(
        largest <= MAX_LINE_BYTES,
        "an allocation of {largest} bytes"
    );
    agent.close().await;
}
