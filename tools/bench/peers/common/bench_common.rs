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

/// steal_imbalance's and priority_latency's shorter busy loop: ~20 us (as bench_common.hpp).
pub const SHORT_KERNEL_ITERS: u64 = 3_600;

pub fn kernel(seed: u64) -> u64 {
    kernel_n(seed, KERNEL_ITERS)
}

/// The kernel with `iters` rounds.
pub fn kernel_n(seed: u64, iters: u64) -> u64 {
    let mut x = seed;
    for i in 0..iters {
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

pub const SCENARIOS: [&str; 14] = [
    "spawn_join_1",
    "spawn_join_1024",
    "yield_storm",
    "ping_pong",
    "timers_100k",
    "timeout_churn",
    "cpu_scaling",
    "task_memory",
    // The work-stealing pool's scenarios (weft's stealing_pool against these runtimes).
    "pool_spawn_join_1024",
    "pool_yield_storm",
    "pool_nested_spawn",
    "steal_imbalance",
    "external_producers",
    "priority_latency",
];

/// pool_nested_spawn's shape: 65,536 tasks (scaled), rounded down to a full binary tree.
pub const TREE_TASKS: usize = 65_536;
/// external_producers' numbers of outside threads.
pub const PRODUCER_COUNTS: [usize; 4] = [1, 2, 4, 8];
/// priority_latency's load: tasks of short kernels, each yielding after every kernel.
pub const SATURATION_CHAINS: usize = 64;
/// priority_latency's pause between two probes.
pub const PROBE_INTERVAL: std::time::Duration = std::time::Duration::from_micros(200);

/// The depth of the largest full binary tree of at most `tasks` nodes (at least one node), as
/// weft_scenarios.cpp's tree_depth_for.
pub fn tree_depth_for(tasks: usize) -> u32 {
    let mut depth = 0u32;
    while (2u64 << (depth + 1)) - 1 <= tasks as u64 {
        depth += 1;
    }
    depth
}

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

/// The nearest-rank percentile `q` (0 < q <= 1) of `v`, as bench_common.hpp's.
pub fn percentile(mut v: Vec<f64>, q: f64) -> f64 {
    assert!(!v.is_empty());
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// priority_latency's five lines, as bench_common.hpp's. These runtimes have one queue and no
/// priorities: "high" and "background" are the same kind of probe, taken in turn.
pub fn report_priority_latency(runtime: &str, high: Vec<f64>, background: Vec<f64>) {
    let high_p99 = percentile(high.clone(), 0.99);
    let background_p99 = percentile(background.clone(), 0.99);
    assert!(background_p99 > 0.0, "no background latency measured");
    report("priority_latency_high_p50", runtime, percentile(high, 0.5), "us");
    report("priority_latency_high_p99", runtime, high_p99, "us");
    report("priority_latency_background_p50", runtime, percentile(background, 0.5), "us");
    report("priority_latency_background_p99", runtime, background_p99, "us");
    report("priority_latency_ratio", runtime, high_p99 / background_p99, "x");
}

/// steal_imbalance's figure: `reps` runs of `run(workers)` (seconds) with 1 and with 2 workers,
/// interleaved; the median with 1 over the median with 2.
pub fn imbalance_speedup(reps: usize, mut run: impl FnMut(usize) -> f64) -> f64 {
    let (mut one, mut two) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        one.push(run(1));
        two.push(run(2));
    }
    median(one) / median(two)
}

/// external_producers' run: `producers` threads each run `body` once, released together;
/// seconds from the release to the end of the last one.
pub fn timed_producers<F: Fn() + Send + Sync + 'static>(producers: usize, body: F) -> f64 {
    use std::sync::atomic::{AtomicBool, Ordering};
    let body = std::sync::Arc::new(body);
    let go = std::sync::Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..producers)
        .map(|_| {
            let (body, go) = (body.clone(), go.clone());
            std::thread::spawn(move || {
                while !go.load(Ordering::Acquire) {
                    // pairs with the release store of `go` below
                    std::thread::yield_now();
                }
                body();
            })
        })
        .collect();
    let t0 = std::time::Instant::now();
    go.store(true, Ordering::Release); // pairs with the producers' acquire loads
    for t in threads {
        t.join().unwrap();
    }
    t0.elapsed().as_secs_f64()
}

/// priority_latency's background load: SATURATION_CHAINS tasks each running short kernels with a
/// yield after each until `stop`.
pub struct Saturation {
    stop: std::sync::atomic::AtomicBool,
    kernels: std::sync::atomic::AtomicUsize,
    live_chains: std::sync::atomic::AtomicUsize,
}

impl Saturation {
    pub fn new() -> std::sync::Arc<Saturation> {
        use std::sync::atomic::{AtomicBool, AtomicUsize};
        std::sync::Arc::new(Saturation {
            stop: AtomicBool::new(false),
            kernels: AtomicUsize::new(0),
            live_chains: AtomicUsize::new(SATURATION_CHAINS),
        })
    }
    /// One kernel of a background task; true while the task goes on (yields, then the next).
    pub fn step(&self, seed: u64) -> bool {
        use std::sync::atomic::Ordering;
        assert!(kernel_n(seed, SHORT_KERNEL_ITERS) != 1); // keeps the result alive
        self.kernels.fetch_add(1, Ordering::Relaxed); // a progress count only
        // Acquire pairs with finish()'s release store.
        if self.stop.load(Ordering::Acquire) {
            self.live_chains.fetch_sub(1, Ordering::Release); // pairs with finish()'s acquire load
            return false;
        }
        true
    }
    /// Returns once every chain has run a kernel.
    pub fn wait_saturated(&self) {
        while self.kernels.load(std::sync::atomic::Ordering::Relaxed) < SATURATION_CHAINS {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
    /// Ends every chain and waits until they ended.
    pub fn finish(&self) {
        use std::sync::atomic::Ordering;
        self.stop.store(true, Ordering::Release); // pairs with step()'s acquire load
        while self.live_chains.load(Ordering::Acquire) != 0 {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
}

/// priority_latency's probes: `2 * per_kind` probes PROBE_INTERVAL apart, even ones labelled
/// high and odd ones background; `spawn(i, t0)` spawns probe `i`, whose task calls `record(i, t0)`
/// first thing. Prints the figures once `join()` has waited for every probe.
pub struct Probes {
    latency_ns: Vec<std::sync::atomic::AtomicU64>,
}

impl Probes {
    pub fn new(per_kind: usize) -> std::sync::Arc<Probes> {
        std::sync::Arc::new(Probes { latency_ns: (0..2 * per_kind).map(|_| std::sync::atomic::AtomicU64::new(0)).collect() })
    }
    pub fn run(&self, mut spawn: impl FnMut(usize, std::time::Instant)) {
        for i in 0..self.latency_ns.len() {
            spawn(i, std::time::Instant::now());
            std::thread::sleep(PROBE_INTERVAL);
        }
    }
    pub fn record(&self, i: usize, t0: std::time::Instant) {
        // Relaxed: read after the probe's task was joined, which orders it.
        self.latency_ns[i].store(t0.elapsed().as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
    }
    pub fn report(&self, runtime: &str) {
        let us: Vec<f64> =
            self.latency_ns.iter().map(|v| v.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e3).collect();
        let high = us.iter().step_by(2).copied().collect();
        let background = us.iter().skip(1).step_by(2).copied().collect();
        report_priority_latency(runtime, high, background);
    }
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
