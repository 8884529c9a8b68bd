#!/usr/bin/env python3
"""Turns compare.sh's raw result lines into the table of medians and weft/peer ratios.

  summarize.py RAW_FILE [--machine FILE]

RAW_FILE holds `scenario=... runtime=... value=... unit=...` lines from every round (other lines
are ignored). Prints a Markdown table: the median of each figure per runtime (over rounds), the
number of rounds, weft/peer ratios, and each figure's target against tokio with met / MISSED;
then the I/O scenarios' tables (tcp_echo against the peers and a raw liburing server, file_read
against a plain pread loop) with their targets.
"""
import re
import statistics
import sys

LINE = re.compile(r"^scenario=([a-z0-9_]+) runtime=([A-Za-z0-9_.-]+) value=(-?[0-9.]+) unit=(\S+)$")
RUNTIMES = ["weft", "tokio", "async-executor", "asio"]
FIGURES = ["spawn_join_1", "spawn_join_1024", "yield_storm", "ping_pong", "ping_pong_cross",
           "ping_pong_pinned", "ping_pong_local", "timers_100k", "timeout_churn", "cpu_1w", "cpu_2w", "cpu_speedup", "task_memory", "task_memory_frame", "task_memory_rss"]
# Figures of the machine itself (runtime=machine): ping_pong_floor, two plain threads bouncing a
# cache line, is the least a cross-core round trip can cost; cpu_speedup_bare, cpu_scaling's
# kernels on two plain threads against one, the speedup of the work itself.
MACHINE_FIGURES = ["ping_pong_floor", "cpu_speedup_bare"]
SIM_FIGURES = ["sim_seeds_per_s", "sim_steps_per_s", "sim_seeds_per_cpu_s",
               "sim_world_seeds_per_s", "sim_world_steps_per_s", "sim_world_seeds_per_cpu_s"]
HIGHER_IS_BETTER = {"cpu_1w", "cpu_2w", "cpu_speedup", "steal_imbalance"} | {
    "external_producers_%d" % n for n in (1, 2, 4, 8)}
# No better or worse, so no ratio: ping_pong_cross (the share of messages that crossed threads) and
# task_memory_frame (the size of the user's coroutine or future).
# priority_latency_ratio: a ratio of each runtime's own figures, compared with a bound, not a peer.
DIAGNOSTIC = {"ping_pong_cross", "task_memory_frame", "priority_latency_ratio"}
# The targets (docs/benchmarks.md): (kind, reference, bound). "peer_max": weft/reference <= bound,
# the reference a peer runtime; "machine_max" / "machine_min": weft / the machine's own figure
# `reference` <= / >= bound; "abs_min" / "abs_max": weft's own value >= / <= bound.
TARGETS = {
    "spawn_join_1": ("peer_max", "tokio", 0.3),
    "spawn_join_1024": ("peer_max", "tokio", 0.2),
    "yield_storm": ("peer_max", "tokio", 0.3),
    "ping_pong_pinned": ("machine_max", "ping_pong_floor", 2.0),
    "ping_pong_local": ("peer_max", "tokio", 0.6),
    "timers_100k": ("peer_max", "tokio", 0.3),
    "timeout_churn": ("peer_max", "tokio", 0.5),
    "cpu_speedup": ("machine_min", "cpu_speedup_bare", 0.97),
    "task_memory_rss": ("peer_max", "async-executor", 1.0),
}

# The work-stealing pool's scenarios: weft's stealing_pool against tokio's multi-thread runtime and
# async-executor (2 workers each; no Asio). priority_latency_ratio is each runtime's high p99 /
# background p99 (tokio and async-executor have one queue: their two kinds of probe are alike).
POOL_RUNTIMES = ["weft", "tokio", "async-executor"]
POOL_FIGURES = (["pool_spawn_join_1024", "pool_yield_storm", "pool_nested_spawn", "steal_imbalance"] +
                ["external_producers_%d" % n for n in (1, 2, 4, 8)] +
                ["priority_latency_%s_%s" % (k, q) for k in ("high", "background") for q in ("p50", "p99")] +
                ["priority_latency_ratio"])
POOL_TARGETS = {
    "pool_spawn_join_1024": ("peer_max", "tokio", 0.6),
    "pool_yield_storm": ("peer_max", "tokio", 0.6),
    "pool_nested_spawn": ("peer_max", "tokio", 0.6),
    "steal_imbalance": ("abs_min", None, 1.85),
    "priority_latency_ratio": ("abs_max", None, 0.25),
}

# The I/O scenarios. tcp_echo's figures come from the one load client (weft-echo-client) for each
# echo server; liburing is the machine's reference server (no runtime), pread the file_read one.
IO_RUNTIMES = ["weft", "tokio", "async-executor", "asio", "liburing"]
IO_FIGURES = [load + suffix for load in ("tcp_echo_64", "tcp_echo_4k") for suffix in ("", "_p50", "_p99", "_cpu")]
FILE_RUNTIMES = ["weft", "pread"]
FILE_FIGURES = ["file_read"]
IO_HIGHER_IS_BETTER = {"tcp_echo_64", "tcp_echo_4k", "file_read"}
# Each figure's targets (docs/benchmarks.md): every (peer, kind, bound) must hold. "min": weft/peer
# >= bound (higher is better); "max": weft/peer <= bound.
_ECHO_RT_TARGETS = [("tokio", "min", 1.0), ("async-executor", "min", 1.0), ("asio", "min", 1.0),
                    ("liburing", "min", 0.95)]
IO_TARGETS = {
    "tcp_echo_64": _ECHO_RT_TARGETS,
    "tcp_echo_4k": _ECHO_RT_TARGETS,
    "tcp_echo_64_cpu": [("tokio", "max", 0.8)],
    "tcp_echo_4k_cpu": [("tokio", "max", 0.8)],
    "tcp_echo_64_p99": [("tokio", "max", 1.0)],
    "tcp_echo_4k_p99": [("tokio", "max", 1.0)],
    "file_read": [("pread", "min", 0.9)],
}


def load(path):
    values, units = {}, {}
    with open(path) as f:
        for raw in f:
            m = LINE.match(raw.strip())
            if not m:
                continue
            fig, rt, v, unit = m.group(1), m.group(2), float(m.group(3)), m.group(4)
            values.setdefault((fig, rt), []).append(v)
            units[fig] = unit
    return values, units


def fmt(v):
    if v is None:
        return "—"
    if abs(v) >= 1000:
        return "{:,.0f}".format(v)
    if abs(v) >= 10:
        return "{:.1f}".format(v)
    return "{:.3g}".format(v)


def print_head(runtimes):
    """The head of a table of `runtimes` (weft first): medians, weft/other ratios, target."""
    head = (["figure", "unit"] + ["%s (n)" % r for r in runtimes] + ["weft/%s" % p for p in runtimes[1:]] +
            ["target", "verdict"])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))


def figure_cells(fig, runtimes, med, rounds, units, with_ratios):
    """A row's figure, unit, median (rounds) per runtime and weft/other ratios."""
    row = [fig, units.get(fig, "")]
    for r in runtimes:
        v = med.get((fig, r))
        row.append("%s (%d)" % (fmt(v), rounds[(fig, r)]) if v is not None else "—")
    w = med.get((fig, "weft"))
    for p in runtimes[1:]:
        pv = med.get((fig, p))
        row.append("%.2f" % (w / pv) if with_ratios and w is not None and pv else "—")
    return row


def target_cells(fig, med, targets):
    """(target text, verdict) of figure `fig` under `targets` ({fig: (kind, reference, bound)}, see
    TARGETS); no verdict while a figure it needs is missing."""
    w = med.get((fig, "weft"))
    if fig not in targets or w is None:
        return "", ""
    kind, ref, bound = targets[fig]
    if kind == "abs_min":
        return "weft ≥ %.3g" % bound, "met" if w >= bound else "MISSED"
    if kind == "abs_max":
        return "weft ≤ %.3g" % bound, "met" if w <= bound else "MISSED"
    if kind == "peer_max":
        text, r = "weft/%s ≤ %.2g" % (ref, bound), med.get((fig, ref))
    else:
        text, r = "weft/%s %s %.2g" % (ref, "≤" if kind == "machine_max" else "≥", bound), med.get((ref, "machine"))
    if not r:
        return text, ""
    ratio = w / r
    return text, "met" if (ratio >= bound if kind == "machine_min" else ratio <= bound) else "MISSED"


def main_table(med, rounds, units):
    """The runtime scenarios' table (none when only the pool's scenarios ran)."""
    if not any((fig, r) in med for fig in FIGURES for r in RUNTIMES):
        return
    print_head(RUNTIMES)
    for fig in FIGURES:
        if not any((fig, r) in med for r in RUNTIMES):
            continue
        row = figure_cells(fig, RUNTIMES, med, rounds, units, fig not in DIAGNOSTIC)
        target, verdict = target_cells(fig, med, TARGETS)
        row += [target, verdict]
        print("| " + " | ".join(row) + " |")
    print()
    print("Medians over rounds (n = rounds with a result). Times: lower is better; tasks/s and the")
    print("speedup: higher is better. Ratios are weft/peer of the medians.")
    print("ping_pong_cross: the share of ping_pong's messages received on another thread than")
    print("their sender's (an untimed second exchange of tagged messages): 1 = every message crossed.")
    print("ping_pong_pinned: the same exchange with every message crossing threads: tokio and")
    print("async-executor give each task a single-worker executor of its own; weft and Asio already")
    print("place each task on its own worker, so theirs is ping_pong run again.")
    print("ping_pong_local: the same exchange with no message crossing threads, in every runtime: one")
    print("worker (tokio: a one-worker runtime; async-executor: one executor, one thread; Asio: one")
    print("io_context, one thread) runs both tasks.")


def main(argv):
    values, units = load(argv[0])
    med = {k: statistics.median(v) for k, v in values.items()}
    rounds = {k: len(v) for k, v in values.items()}
    main_table(med, rounds, units)
    one_runtime_table(med, rounds, units, MACHINE_FIGURES, "machine", "machine figure", "measured", [
        "ping_pong_floor: two plain threads bounce one cache line each way (no runtime): the least a",
        "round trip between two cores costs on this machine.",
        "cpu_speedup_bare: cpu_scaling's 2,000 kernels on two plain threads against one (no runtime):",
        "the speedup of the work itself on this machine. A runtime that adds no cost per task matches",
        "it; one whose single worker is slower than a plain thread (cpu_1w) can show more."])
    one_runtime_table(med, rounds, units, SIM_FIGURES, "weft-sim", "simulator figure", "weft-sim", [
        "shutdown_race at 4 workers x 100 tasks, one job; the aim is >= 1,000 seeds/s per core",
        "(sim_seeds_per_cpu_s is seeds per CPU-second of the process, the per-core figure).",
        "sim_world_*: kv_crash_recovery with 3 hosts (the key-value server and 2 client hosts); the",
        "aim is >= 200 seeds/s per core."])
    pool_table(med, rounds, units)
    io_table(med, rounds, units, IO_FIGURES, IO_RUNTIMES, [
        "tcp_echo: each echo server driven by the same load client (weft-echo-client); tcp_echo_64 is",
        "32 connections x 64 B, tcp_echo_4k 256 x 4 KiB. Round trips/s (higher is better), the p50 and",
        "p99 round-trip latency in us and the server's CPU time in ms per 100,000 round trips (lower is",
        "better). liburing: a raw io_uring echo loop with no runtime, the machine's reference."])
    io_table(med, rounds, units, FILE_FIGURES, FILE_RUNTIMES, [
        "file_read: sequential 4 KiB reads of a page-cached file, GiB/s (higher is better); pread: a",
        "plain pread(2) loop on one thread, the machine's reference."])


def pool_table(med, rounds, units):
    """The stealing pool's table: weft's stealing_pool, tokio and async-executor, with targets."""
    rows = [f for f in POOL_FIGURES if any((f, r) in med for r in POOL_RUNTIMES)]
    if not rows:
        return
    print()
    print_head(POOL_RUNTIMES)
    for fig in rows:
        row = figure_cells(fig, POOL_RUNTIMES, med, rounds, units, fig not in DIAGNOSTIC)
        print("| " + " | ".join(row + list(target_cells(fig, med, POOL_TARGETS))) + " |")
    print()
    print("The stealing pool (weft::stealing_pool) against tokio's multi-thread runtime and")
    print("async-executor, 2 workers each. steal_imbalance: time with 1 worker / time with 2 (x,")
    print("higher is better); external_producers_N: tasks/s with N outside threads submitting.")
    print("priority_latency: submit-to-start latency of probes under saturation (us); tokio and")
    print("async-executor have no priorities, so their high and background probes share one queue.")


def io_target(fig, med):
    """(target text, verdict) of an I/O figure: met when every bound holds, MISSED when one does
    not, no verdict while weft's figure or a peer's is missing."""
    conds = IO_TARGETS.get(fig)
    if not conds:
        return "", ""
    text, verdict = [], "met"
    for peer, kind, bound in conds:
        text.append("weft/%s %s %.2g" % (peer, "≥" if kind == "min" else "≤", bound))
        w, p = med.get((fig, "weft")), med.get((fig, peer))
        if w is None or not p:
            verdict = ""
        elif verdict and not (w / p >= bound if kind == "min" else w / p <= bound):
            verdict = "MISSED"
    return ", ".join(text), verdict


def io_table(med, rounds, units, figures, runtimes, notes):
    """A table of I/O figures: medians per runtime, weft/other ratios, targets."""
    rows = [f for f in figures if any((f, r) in med for r in runtimes)]
    if not rows:
        return
    print()
    print_head(runtimes)
    for fig in rows:
        row = figure_cells(fig, runtimes, med, rounds, units, True) + list(io_target(fig, med))
        print("| " + " | ".join(row) + " |")
    print()
    for line in notes:
        print(line)


def one_runtime_table(med, rounds, units, figures, runtime, title, column, notes):
    """A table of the figures only `runtime` reports (the machine's, the simulator's), if any."""
    rows = [f for f in figures if (f, runtime) in med]
    if not rows:
        return
    print()
    print("| %s | unit | %s (n) |" % (title, column))
    print("|---|---|---|")
    for fig in rows:
        print("| %s | %s | %s (%d) |" % (fig, units.get(fig, ""), fmt(med[(fig, runtime)]), rounds[(fig, runtime)]))
    print()
    for line in notes:
        print(line)

if __name__ == "__main__":
    main(sys.argv[1:])
