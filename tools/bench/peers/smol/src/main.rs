// weft-bench-smol — the benchmark scenarios on smol's async-executor: one shared `Executor` run by 2
// threads (each `async_io::block_on(ex.run(..))`, as smol does, so idle threads drive async-io's
// timer reactor). Prints `scenario=<name> runtime=async-executor value=<number> unit=<unit>`.
// The workloads mirror tools/bench/weft_scenarios.cpp; see tools/bench/README.md.
#[path = "../../common/bench_common.rs"]
mod common;

use async_executor::Executor;
use common::*;
use futures_lite::future;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const RT: &str = "async-executor";

// An executor with `workers` threads; dropping it stops and joins them.
struct Pool {
    ex: &'static Executor<'static>,
    stop: Option<async_channel::Sender<()>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Pool {
    fn new(workers: usize) -> Pool {
        // Leaked so tasks can capture `&'static Executor` to spawn from inside (a few per run).
        let ex: &'static Executor<'static> = Box::leak(Box::new(Executor::new()));
        let (tx, rx) = async_channel::bounded::<()>(1);
        let threads = (0..workers)
            .map(|_| {
                let rx = rx.clone();
                std::thread::spawn(move || {
                    async_io::block_on(ex.run(async move {
                        let _ = rx.recv().await; // ends when the sender is dropped
                    }))
                })
            })
            .collect();
        Pool { ex, stop: Some(tx), threads }
    }
    // Runs `body` as a task on the executor and blocks the caller until it finished.
    fn run_in_task<T: Send + 'static>(&self, body: impl std::future::Future<Output = T> + Send + 'static) -> T {
        future::block_on(self.ex.spawn(body))
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        drop(self.stop.take());
        for t in self.threads.drain(..) {
            t.join().unwrap();
        }
    }
}

fn spawn_join_1(a: &Args) {
    let pool = Pool::new(2);
    let n = a.count(20_000);
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let t0 = Instant::now();
        let v = future::block_on(pool.ex.spawn(async move { i }));
        samples.push(t0.elapsed().as_nanos() as f64);
        assert_eq!(v, i);
    }
    report("spawn_join_1", RT, median(samples), "ns");
}

fn spawn_join_1024(a: &Args) {
    let pool = Pool::new(2);
    let ex = pool.ex;
    let batches = a.count(200);
    let samples = pool.run_in_task(async move {
        let mut samples = Vec::with_capacity(batches);
        for _ in 0..batches {
            let t0 = Instant::now();
            let handles: Vec<_> = (0..1024u64).map(|i| ex.spawn(async move { i })).collect();
            let mut sum = 0;
            for h in handles {
                sum += h.await;
            }
            samples.push(t0.elapsed().as_nanos() as f64 / 1e3);
            assert_eq!(sum, 1023 * 1024 / 2);
        }
        samples
    });
    report("spawn_join_1024", RT, median(samples), "us");
}

// yield_storm's run: 10,000 tasks x 8 yields spawned from a task, 20 reps; median ms. The executor
// is already shared by its threads, so pool_yield_storm is the same run.
fn yield_storm_ms(a: &Args) -> f64 {
    let pool = Pool::new(2);
    let ex = pool.ex;
    let reps = a.count(20);
    let tasks = a.count(10_000);
    let samples = pool.run_in_task(async move {
        let mut samples = Vec::with_capacity(reps);
        for _ in 0..reps {
            let t0 = Instant::now();
            let handles: Vec<_> = (0..tasks)
                .map(|_| {
                    ex.spawn(async {
                        for _ in 0..8 {
                            future::yield_now().await;
                        }
                    })
                })
                .collect();
            for h in handles {
                h.await;
            }
            samples.push(t0.elapsed().as_nanos() as f64 / 1e6);
        }
        samples
    });
    median(samples)
}

fn yield_storm(a: &Args) {
    report("yield_storm", RT, yield_storm_ms(a), "ms");
}

// The timed exchange on an executor run by `threads` threads; ns per round trip.
fn ping_pong_ns(a: &Args, threads: usize) -> f64 {
    let pool = Pool::new(threads);
    let n = a.count(100_000) as u64;
    let to_b = Arc::new(Mailbox::new());
    let to_a = Arc::new(Mailbox::new());
    let t0 = Instant::now();
    // async-executor has one shared queue: it cannot pin a task to a thread; either thread may
    // run either task.
    let b = pool.ex.spawn(pong(to_b.clone(), to_a.clone(), n));
    let a_task = pool.ex.spawn(ping(to_b, to_a, n));
    future::block_on(a_task);
    future::block_on(b);
    t0.elapsed().as_nanos() as f64 / n as f64
}

fn ping_pong(a: &Args) {
    report("ping_pong", RT, ping_pong_ns(a, 2), "ns");
}

// ping_pong_cross: the share of messages received on another thread than the one that sent them,
// from a second, untimed exchange of tagged messages (spawned the same way as above).
fn ping_pong_cross(a: &Args) {
    let pool = Pool::new(2);
    let n = a.count(20_000) as u64;
    let to_b = Arc::new(Mailbox::new());
    let to_a = Arc::new(Mailbox::new());
    let b = pool.ex.spawn(pong_tagged(to_b.clone(), to_a.clone(), n));
    let a_task = pool.ex.spawn(ping_tagged(to_b, to_a, n));
    let crossed = future::block_on(a_task) + future::block_on(b);
    report("ping_pong_cross", RT, crossed as f64 / (2 * n) as f64, "share");
}

// ping_pong_pinned: the same timed exchange with every message crossing threads. async-executor
// cannot pin a task to one thread of an executor, so each task gets an executor of its own run by
// one thread: the placement weft's `worker_scheduler(i)` and Asio's per-thread io_context give.
fn ping_pong_pinned(a: &Args) {
    let (pool_a, pool_b) = (Pool::new(1), Pool::new(1));
    let n = a.count(100_000) as u64;
    let to_b = Arc::new(Mailbox::new());
    let to_a = Arc::new(Mailbox::new());
    let t0 = Instant::now();
    let b = pool_b.ex.spawn(pong(to_b.clone(), to_a.clone(), n));
    let a_task = pool_a.ex.spawn(ping(to_b, to_a, n));
    future::block_on(a_task);
    future::block_on(b);
    report("ping_pong_pinned", RT, t0.elapsed().as_nanos() as f64 / n as f64, "ns");
}

// ping_pong_local: the same timed exchange with no message crossing threads: an executor run by
// one thread runs both tasks.
fn ping_pong_local(a: &Args) {
    report("ping_pong_local", RT, ping_pong_ns(a, 1), "ns");
}

// timeout_churn: 1,000,000 sequential timeouts of an hour around a future ready at once, on one
// loop (the calling thread's block_on); total ms. async-io's timeout is a race with a Timer.
fn timeout_churn(a: &Args) {
    let n = a.count(1_000_000);
    let ms = async_io::block_on(async move {
        let t0 = Instant::now();
        let mut done = 0usize;
        for _ in 0..n {
            let timer = async {
                async_io::Timer::after(Duration::from_secs(3600)).await;
                0usize
            };
            done += future::or(future::ready(1usize), timer).await;
        }
        assert_eq!(done, n, "timeout_churn: a ready future timed out");
        t0.elapsed().as_nanos() as f64 / 1e6
    });
    report("timeout_churn", RT, ms, "ms");
}

fn timers_100k(a: &Args) {
    let pool = Pool::new(2);
    let ex = pool.ex;
    let n = a.count(100_000);
    let ms = pool.run_in_task(async move {
        let t0 = Instant::now();
        let handles: Vec<_> = (0..n)
            .map(|_| {
                ex.spawn(async {
                    async_io::Timer::after(Duration::from_millis(1)).await;
                })
            })
            .collect();
        for h in handles {
            h.await;
        }
        t0.elapsed().as_nanos() as f64 / 1e6
    });
    report("timers_100k", RT, ms, "ms");
}

fn cpu_tasks_per_s(workers: usize, n: usize) -> f64 {
    let pool = Pool::new(workers);
    let ex = pool.ex;
    pool.run_in_task(async move {
        let t0 = Instant::now();
        let handles: Vec<_> = (0..n as u64).map(|i| ex.spawn(async move { kernel(i) })).collect();
        let mut acc = 0u64;
        for h in handles {
            acc ^= h.await;
        }
        let s = t0.elapsed().as_secs_f64();
        assert!(acc != 1); // keeps the results alive
        n as f64 / s
    })
}

fn cpu_scaling(a: &Args) {
    let n = a.count(2_000);
    let one = cpu_tasks_per_s(1, n);
    let two = cpu_tasks_per_s(2, n);
    report("cpu_1w", RT, one, "tasks/s");
    report("cpu_2w", RT, two, "tasks/s");
    report("cpu_speedup", RT, two / one, "x");
}

static PARKED: AtomicUsize = AtomicUsize::new(0);

async fn parked_task() {
    PARKED.fetch_add(1, Ordering::Relaxed);
    future::pending::<()>().await
}

// Ends the process: 1,000,000 parked tasks are not torn down (the same in every program).
fn task_memory(a: &Args) -> ! {
    let pool = Pool::new(2);
    let ex = pool.ex;
    let n = a.count(1_000_000);
    pool.run_in_task(async {}); // threads started and warm
    let before = rss_bytes();
    pool.run_in_task(async move {
        for _ in 0..n {
            ex.spawn(parked_task()).detach();
        }
    });
    while PARKED.load(Ordering::Relaxed) < n {
        std::thread::sleep(Duration::from_millis(1));
    }
    let after = rss_bytes();
    let per_task = (after.saturating_sub(before)) as f64 / n as f64;
    let frame = std::mem::size_of_val(&parked_task()) as f64;
    // The target's measure: resident memory per idle task minus the future (the "frame"), the future reported
    // separately (and the whole resident growth per task too).
    report("task_memory", RT, per_task - frame, "bytes");
    report("task_memory_frame", RT, frame, "bytes");
    report("task_memory_rss", RT, per_task, "bytes");
    use std::io::Write;
    std::io::stdout().flush().unwrap();
    std::process::exit(0);
}


// ---- the work-stealing pool's scenarios (weft's stealing_pool against this executor) -----------

// From the main thread (outside the executor), spawn 1,024 trivial tasks, then join them all (one
// block_on); 200 batches; median us per batch.
fn pool_spawn_join_1024(a: &Args) {
    let pool = Pool::new(2);
    let batches = a.count(200);
    let mut samples = Vec::with_capacity(batches);
    for _ in 0..batches {
        let t0 = Instant::now();
        let handles: Vec<_> = (0..1024u64).map(|i| pool.ex.spawn(async move { i })).collect();
        let sum = future::block_on(async move {
            let mut sum = 0;
            for h in handles {
                sum += h.await;
            }
            sum
        });
        samples.push(t0.elapsed().as_nanos() as f64 / 1e3);
        assert_eq!(sum, 1023 * 1024 / 2);
    }
    report("pool_spawn_join_1024", RT, median(samples), "us");
}

fn pool_yield_storm(a: &Args) {
    report("pool_yield_storm", RT, yield_storm_ms(a), "ms");
}

// A binary tree `depth` levels below this task: each node spawns its two children and awaits
// them; the number of nodes.
fn tree(ex: &'static Executor<'static>, depth: u32) -> Pin<Box<dyn Future<Output = u64> + Send>> {
    Box::pin(async move {
        if depth == 0 {
            return 1;
        }
        let left = ex.spawn(tree(ex, depth - 1));
        let right = ex.spawn(tree(ex, depth - 1));
        left.await + right.await + 1
    })
}

// A tree of 2^16 - 1 tasks, its root spawned from outside; 20 trees; median ms per tree.
fn pool_nested_spawn(a: &Args) {
    let pool = Pool::new(2);
    let reps = a.count(20);
    let depth = tree_depth_for(a.count(TREE_TASKS));
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t0 = Instant::now();
        let nodes = pool.run_in_task(tree(pool.ex, depth));
        samples.push(t0.elapsed().as_nanos() as f64 / 1e6);
        assert_eq!(nodes, (2u64 << depth) - 1);
    }
    report("pool_nested_spawn", RT, median(samples), "ms");
}

// One parent task spawns `n` short kernels and awaits them; seconds.
fn imbalance_s(workers: usize, n: usize) -> f64 {
    let pool = Pool::new(workers);
    let ex = pool.ex;
    pool.run_in_task(async move {
        let t0 = Instant::now();
        let handles: Vec<_> = (0..n as u64).map(|i| ex.spawn(async move { kernel_n(i, SHORT_KERNEL_ITERS) })).collect();
        let mut acc = 0u64;
        for h in handles {
            acc ^= h.await;
        }
        assert!(acc != 1); // keeps the results alive
        t0.elapsed().as_secs_f64()
    })
}

// 4,000 kernels from one parent with 1 and with 2 threads, 5 runs each (interleaved); the speedup
// of the medians.
fn steal_imbalance(a: &Args) {
    let n = a.count(4_000);
    report("steal_imbalance", RT, imbalance_speedup(a.count(5), |workers| imbalance_s(workers, n)), "x");
}

// 1, 2, 4 and 8 outside threads each spawn 20,000 trivial tasks, then join them (one block_on);
// tasks/s from their common start to the last join.
fn external_producers(a: &Args) {
    let per_producer = a.count(20_000);
    for producers in PRODUCER_COUNTS {
        let pool = Pool::new(2);
        let ex = pool.ex;
        let s = timed_producers(producers, move || {
            let handles: Vec<_> = (0..per_producer as u64).map(|i| ex.spawn(async move { i })).collect();
            future::block_on(async move {
                for (i, h) in handles.into_iter().enumerate() {
                    assert_eq!(h.await, i as u64);
                }
            });
        });
        report(&format!("external_producers_{}", producers), RT, (producers * per_producer) as f64 / s, "tasks/s");
    }
}

// One of priority_latency's background tasks: short kernels with a yield after each, until told
// to stop.
async fn background_chain(sat: Arc<Saturation>, mut seed: u64) {
    while sat.step(seed) {
        seed += 1;
        future::yield_now().await;
    }
}

// Both threads busy with 64 background tasks of short kernels; probes from the main thread every
// 200 us. async-executor has no priorities: "high" and "background" probes are the same spawn
// into its one queue.
fn priority_latency(a: &Args) {
    let pool = Pool::new(2);
    let sat = Saturation::new();
    for c in 0..SATURATION_CHAINS {
        pool.ex.spawn(background_chain(sat.clone(), (c as u64) << 32)).detach();
    }
    sat.wait_saturated();
    let probes = Probes::new(a.count(1_000));
    let mut handles = Vec::new();
    probes.run(|i, t0| {
        let p = probes.clone();
        handles.push(pool.ex.spawn(async move { p.record(i, t0) }));
    });
    for h in handles {
        future::block_on(h);
    }
    sat.finish();
    probes.report(RT);
}

fn main() {
    let a = parse_args();
    if a.wants("spawn_join_1") { spawn_join_1(&a); }
    if a.wants("spawn_join_1024") { spawn_join_1024(&a); }
    if a.wants("yield_storm") { yield_storm(&a); }
    if a.wants("ping_pong") {
        ping_pong(&a);
        ping_pong_cross(&a);
        ping_pong_pinned(&a);
        ping_pong_local(&a);
    }
    if a.wants("timers_100k") { timers_100k(&a); }
    if a.wants("timeout_churn") { timeout_churn(&a); }
    if a.wants("cpu_scaling") { cpu_scaling(&a); }
    if a.wants("pool_spawn_join_1024") { pool_spawn_join_1024(&a); }
    if a.wants("pool_yield_storm") { pool_yield_storm(&a); }
    if a.wants("pool_nested_spawn") { pool_nested_spawn(&a); }
    if a.wants("steal_imbalance") { steal_imbalance(&a); }
    if a.wants("external_producers") { external_producers(&a); }
    if a.wants("priority_latency") { priority_latency(&a); }
    if a.wants("task_memory") { task_memory(&a); } // last: it ends the process
}
