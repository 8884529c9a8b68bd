// bench_common.rs — what the Rust peers share with each other (and mirror from the C++ programs):
// argument parsing, the result line, medians, the CPU kernel, the one-slot mailbox and RSS.
// Included by tools/bench/peers/{tokio,smol}/src/main.rs through `#[path]`.
#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

/// The ~50 us integer-hash kernel of cpu_scaling. Same constants and iteration count as
/// tools/bench/bench_common.hpp (weft, Asio).
pub const KERNEL_ITERS: u64 = 9_000;

pub fn kernel(seed: u64) -> u64 {
    let mut x = seed;
    for i in 0..KERNEL_ITERS {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^= x >> 33;
        x = x.wrapping_add(i);
    }
    x
}

pub struct Args {
    pub scale: f64,
    pub scenario: String,
}

pub const SCENARIOS: [&str; 7] = [
    "spawn_join_1",
    "spawn_join_1024",
    "yield_storm",
    "ping_pong",
    "timers_100k",
    "cpu_scaling",
    "task_memory",
];

pub fn parse_args() -> Args {
    let mut args = Args { scale: 1.0, scenario: "all".to_string() };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--scale" => args.scale = it.next().and_then(|v| v.parse().ok()).expect("--scale needs a number"),
            "--scenario" => args.scenario = it.next().expect("--scenario needs a name"),
            "--list" => {
                for s in SCENARIOS {
                    println!("{}", s);
                }
                std::process::exit(0);
            }
            other => {
                eprintln!("usage: [--scale F] [--scenario NAME|all] [--list]   (unknown: {})", other);
                std::process::exit(2);
            }
        }
    }
    if !(args.scale > 0.0) {
        eprintln!("--scale must be positive");
        std::process::exit(2);
    }
    if args.scenario != "all" && !SCENARIOS.contains(&args.scenario.as_str()) {
        eprintln!("unknown scenario {}", args.scenario);
        std::process::exit(2);
    }
    args
}

impl Args {
    pub fn wants(&self, name: &str) -> bool {
        self.scenario == "all" || self.scenario == name
    }
    /// `base` scaled by --scale, at least 1.
    pub fn count(&self, base: usize) -> usize {
        ((base as f64) * self.scale).round().max(1.0) as usize
    }
}

pub fn report(scenario: &str, runtime: &str, value: f64, unit: &str) {
    println!("scenario={} runtime={} value={:.3} unit={}", scenario, runtime, value, unit);
}

pub fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty());
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// Resident set size of this process in bytes (/proc/self/statm, second field).
pub fn rss_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/self/statm").expect("read /proc/self/statm");
    let pages: u64 = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let page = unsafe { libc_sysconf_pagesize() };
    pages * page
}

extern "C" {
    fn sysconf(name: i32) -> i64;
}
unsafe fn libc_sysconf_pagesize() -> u64 {
    const SC_PAGESIZE: i32 = 30; // _SC_PAGESIZE on Linux
    sysconf(SC_PAGESIZE) as u64
}

// ---- ping_pong's diagnostics (measured after the timed exchange, never inside it) -------------

static NEXT_THREAD_TAG: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
thread_local! {
    // Relaxed: only the uniqueness of the numbers matters, nothing is published through them.
    static THREAD_TAG: u64 = NEXT_THREAD_TAG.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// A small number naming the calling thread (1, 2, ... in order of first use); the same scheme
/// as tools/bench/bench_common.hpp, so ping_pong_cross can tell whether a message crossed threads.
pub fn thread_tag() -> u64 {
    THREAD_TAG.with(|t| *t)
}
const MESSAGE_TAG_BITS: u32 = 16;
/// A message carrying sequence number `seq` from the calling thread.
pub fn tagged_message(seq: u64) -> u64 {
    (seq << MESSAGE_TAG_BITS) | thread_tag()
}
pub fn message_seq(message: u64) -> u64 {
    message >> MESSAGE_TAG_BITS
}
/// Whether `message` was sent from a thread other than the calling one.
pub fn message_crossed(message: u64) -> bool {
    (message & ((1u64 << MESSAGE_TAG_BITS) - 1)) != thread_tag()
}

/// A one-slot mailbox: a mutex over {value, stored waker}. The same design is written for weft
/// and Asio, so ping_pong compares the runtimes' cross-task wake paths, not their channels.
pub struct Mailbox {
    slot: Mutex<Slot>,
}
struct Slot {
    value: Option<u64>,
    waker: Option<Waker>,
}

impl Mailbox {
    pub fn new() -> Self {
        Mailbox { slot: Mutex::new(Slot { value: None, waker: None }) }
    }
    pub fn send(&self, v: u64) {
        let waiting = {
            let mut s = self.slot.lock().unwrap();
            assert!(s.value.is_none(), "mailbox holds one message");
            s.value = Some(v);
            s.waker.take()
        };
        if let Some(w) = waiting {
            w.wake();
        }
    }
    pub fn recv(&self) -> Recv<'_> {
        Recv { mailbox: self }
    }
}

pub struct Recv<'a> {
    mailbox: &'a Mailbox,
}

impl Future for Recv<'_> {
    type Output = u64;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        let mut s = self.mailbox.slot.lock().unwrap();
        if let Some(v) = s.value.take() {
            return Poll::Ready(v);
        }
        let keep = matches!(&s.waker, Some(w) if w.will_wake(cx.waker()));
        if !keep {
            s.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// ping_pong's two sides: `pong` echoes `n` messages back; `ping` sends 0..n and checks each echo.
pub async fn pong(inbox: std::sync::Arc<Mailbox>, outbox: std::sync::Arc<Mailbox>, n: u64) {
    for _ in 0..n {
        let v = inbox.recv().await;
        outbox.send(v);
    }
}

pub async fn ping(outbox: std::sync::Arc<Mailbox>, inbox: std::sync::Arc<Mailbox>, n: u64) {
    for i in 0..n {
        outbox.send(i);
        let v = inbox.recv().await;
        assert_eq!(v, i);
    }
}

/// ping_pong_cross's two sides (the same loops as ping_pong's, with tagged messages): each
/// returns how many of the messages it received had crossed threads.
pub async fn pong_tagged(inbox: std::sync::Arc<Mailbox>, outbox: std::sync::Arc<Mailbox>, n: u64) -> u64 {
    let mut crossed = 0u64;
    for _ in 0..n {
        let m = inbox.recv().await;
        crossed += message_crossed(m) as u64;
        outbox.send(tagged_message(message_seq(m)));
    }
    crossed
}

pub async fn ping_tagged(outbox: std::sync::Arc<Mailbox>, inbox: std::sync::Arc<Mailbox>, n: u64) -> u64 {
    let mut crossed = 0u64;
    for i in 0..n {
        outbox.send(tagged_message(i));
        let m = inbox.recv().await;
        assert_eq!(message_seq(m), i);
        crossed += message_crossed(m) as u64;
    }
    crossed
}
