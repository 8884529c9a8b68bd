// weft-bench-tokio — the benchmark scenarios on tokio's multi-thread runtime (2 workers unless a
// scenario says otherwise). Prints `scenario=<name> runtime=tokio value=<number> unit=<unit>`.
// The workloads mirror tools/bench/weft_scenarios.cpp; see tools/bench/README.md.
#[path = "../../common/bench_common.rs"]
mod common;

use common::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const RT: &str = "tokio";

fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_time()
        .build()
        .expect("tokio runtime")
}

// Runs `body` as a task on a worker and blocks the caller until it finished.
fn run_in_task<F, T>(rt: &tokio::runtime::Runtime, body: F) -> T
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    rt.block_on(rt.spawn(body)).expect("root task")
}

fn spawn_join_1(a: &Args) {
    let rt = runtime(2);
    let n = a.count(20_000);
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let t0 = Instant::now();
        let h = rt.spawn(async move { i });
        let v = rt.block_on(h).unwrap();
        samples.push(t0.elapsed().as_nanos() as f64);
        assert_eq!(v, i);
    }
    report("spawn_join_1", RT, median(samples), "ns");
}

fn spawn_join_1024(a: &Args) {
    let rt = runtime(2);
    let batches = a.count(200);
    let samples = run_in_task(&rt, async move {
        let mut samples = Vec::with_capacity(batches);
        for _ in 0..batches {
            let t0 = Instant::now();
            let handles: Vec<_> = (0..1024u64).map(|i| tokio::spawn(async move { i })).collect();
            let mut sum = 0;
            for h in handles {
                sum += h.await.unwrap();
            }
            samples.push(t0.elapsed().as_nanos() as f64 / 1e3);
            assert_eq!(sum, 1023 * 1024 / 2);
        }
        samples
    });
    report("spawn_join_1024", RT, median(samples), "us");
}

fn yield_storm(a: &Args) {
    let rt = runtime(2);
    let reps = a.count(20);
    let tasks = a.count(10_000);
    let samples = run_in_task(&rt, async move {
        let mut samples = Vec::with_capacity(reps);
        for _ in 0..reps {
            let t0 = Instant::now();
            let handles: Vec<_> = (0..tasks)
                .map(|_| {
                    tokio::spawn(async {
                        for _ in 0..8 {
                            tokio::task::yield_now().await;
                        }
                    })
                })
                .collect();
            for h in handles {
                h.await.unwrap();
            }
            samples.push(t0.elapsed().as_nanos() as f64 / 1e6);
        }
        samples
    });
    report("yield_storm", RT, median(samples), "ms");
}

// The timed exchange on a runtime of `workers` workers; ns per round trip.
fn ping_pong_ns(a: &Args, workers: usize) -> f64 {
    let rt = runtime(workers);
    let n = a.count(100_000) as u64;
    let to_b = Arc::new(Mailbox::new());
    let to_a = Arc::new(Mailbox::new());
    let t0 = Instant::now();
    // tokio cannot pin a task to a worker: the two tasks are spawned separately and the runtime
    // places (and may co-locate) them.
    let b = rt.spawn(pong(to_b.clone(), to_a.clone(), n));
    let a_task = rt.spawn(ping(to_b, to_a, n));
    rt.block_on(a_task).unwrap();
    rt.block_on(b).unwrap();
    t0.elapsed().as_nanos() as f64 / n as f64
}

fn ping_pong(a: &Args) {
    report("ping_pong", RT, ping_pong_ns(a, 2), "ns");
}

// ping_pong_cross: the share of messages received on another thread than the one that sent them,
// from a second, untimed exchange of tagged messages (spawned the same way as above).
fn ping_pong_cross(a: &Args) {
    let rt = runtime(2);
    let n = a.count(20_000) as u64;
    let to_b = Arc::new(Mailbox::new());
    let to_a = Arc::new(Mailbox::new());
    let b = rt.spawn(pong_tagged(to_b.clone(), to_a.clone(), n));
    let a_task = rt.spawn(ping_tagged(to_b, to_a, n));
    let crossed = rt.block_on(a_task).unwrap() + rt.block_on(b).unwrap();
    report("ping_pong_cross", RT, crossed as f64 / (2 * n) as f64, "share");
}

// ping_pong_pinned: the same timed exchange with every message crossing threads. tokio cannot pin
// a task to one worker of a runtime, so each task gets a runtime of its own with one worker: the
// placement weft's `worker_scheduler(i)` and Asio's per-thread io_context give.
fn ping_pong_pinned(a: &Args) {
    let (rt_a, rt_b) = (runtime(1), runtime(1));
    let n = a.count(100_000) as u64;
    let to_b = Arc::new(Mailbox::new());
    let to_a = Arc::new(Mailbox::new());
    let t0 = Instant::now();
    let b = rt_b.spawn(pong(to_b.clone(), to_a.clone(), n));
    let a_task = rt_a.spawn(ping(to_b, to_a, n));
    rt_a.block_on(a_task).unwrap();
    rt_b.block_on(b).unwrap();
    report("ping_pong_pinned", RT, t0.elapsed().as_nanos() as f64 / n as f64, "ns");
}

// ping_pong_local: the same timed exchange with no message crossing threads: a runtime of one
// worker runs both tasks (the placement tokio's scheduler reaches by itself in ping_pong).
fn ping_pong_local(a: &Args) {
    report("ping_pong_local", RT, ping_pong_ns(a, 1), "ns");
}

fn timers_100k(a: &Args) {
    let rt = runtime(2);
    let n = a.count(100_000);
    let ms = run_in_task(&rt, async move {
        let t0 = Instant::now();
        let handles: Vec<_> = (0..n)
            .map(|_| tokio::spawn(async { tokio::time::sleep(Duration::from_millis(1)).await }))
            .collect();
        for h in handles {
            h.await.unwrap();
        }
        t0.elapsed().as_nanos() as f64 / 1e6
    });
    report("timers_100k", RT, ms, "ms");
}

fn cpu_tasks_per_s(workers: usize, n: usize) -> f64 {
    let rt = runtime(workers);
    run_in_task(&rt, async move {
        let t0 = Instant::now();
        let handles: Vec<_> = (0..n as u64).map(|i| tokio::spawn(async move { kernel(i) })).collect();
        let mut acc = 0u64;
        for h in handles {
            acc ^= h.await.unwrap();
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
    std::future::pending::<()>().await
}

// Ends the process: 1,000,000 parked tasks are not torn down (the same in every program).
fn task_memory(a: &Args) -> ! {
    let rt = runtime(2);
    let n = a.count(1_000_000);
    run_in_task(&rt, async {}); // workers started and warm
    let before = rss_bytes();
    run_in_task(&rt, async move {
        for _ in 0..n {
            drop(tokio::spawn(parked_task())); // detached
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
    if a.wants("cpu_scaling") { cpu_scaling(&a); }
    if a.wants("task_memory") { task_memory(&a); }
}
