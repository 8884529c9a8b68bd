#!/usr/bin/env python3
"""Turns compare.sh's raw result lines into the table of medians and weft/peer ratios.

  summarize.py RAW_FILE [--machine FILE]

RAW_FILE holds `scenario=... runtime=... value=... unit=...` lines from every round (other lines
are ignored). Prints a Markdown table: the median of each figure per runtime (over rounds), the
number of rounds, weft/peer ratios, and each figure's target against tokio with met / MISSED.
"""
import re
import statistics
import sys

LINE = re.compile(r"^scenario=([a-z0-9_]+) runtime=([A-Za-z0-9_.-]+) value=(-?[0-9.]+) unit=(\S+)$")
RUNTIMES = ["weft", "tokio", "async-executor", "asio"]
FIGURES = ["spawn_join_1", "spawn_join_1024", "yield_storm", "ping_pong", "ping_pong_cross",
           "ping_pong_pinned", "ping_pong_local", "timers_100k", "cpu_1w", "cpu_2w", "cpu_speedup", "task_memory", "task_memory_frame", "task_memory_rss"]
# Figures of the machine itself (runtime=machine): ping_pong_floor, two plain threads bouncing a
# cache line, is the least a cross-core round trip can cost; cpu_speedup_bare, cpu_scaling's
# kernels on two plain threads against one, the speedup of the work itself.
MACHINE_FIGURES = ["ping_pong_floor", "cpu_speedup_bare"]
SIM_FIGURES = ["sim_seeds_per_s", "sim_steps_per_s", "sim_seeds_per_cpu_s"]
HIGHER_IS_BETTER = {"cpu_1w", "cpu_2w", "cpu_speedup"}
# No better or worse, so no ratio: ping_pong_cross (the share of messages that crossed threads) and
# task_memory_frame (the size of the user's coroutine or future).
DIAGNOSTIC = {"ping_pong_cross", "task_memory_frame"}
# The targets (docs/benchmarks.md): (kind, bound). "ratio_max": weft/tokio <= bound; "abs_min": weft's own value >= bound.
TARGETS = {
    "spawn_join_1": ("ratio_max", 0.8),
    "spawn_join_1024": ("ratio_max", 0.5),
    "yield_storm": ("ratio_max", 0.5),
    "ping_pong": ("ratio_max", 0.8),
    "timers_100k": ("ratio_max", 0.5),
    "cpu_speedup": ("abs_min", 1.9),
    "task_memory": ("ratio_max", 0.5),
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


def main(argv):
    values, units = load(argv[0])
    med = {k: statistics.median(v) for k, v in values.items()}
    rounds = {k: len(v) for k, v in values.items()}
    peers = [r for r in RUNTIMES[1:]]
    head = ["figure", "unit"] + ["%s (n)" % r for r in RUNTIMES] + ["weft/%s" % p for p in peers] + ["target", "verdict"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for fig in FIGURES:
        if not any((fig, r) in med for r in RUNTIMES):
            continue
        row = [fig, units.get(fig, "")]
        for r in RUNTIMES:
            v = med.get((fig, r))
            row.append("%s (%d)" % (fmt(v), rounds[(fig, r)]) if v is not None else "—")
        w = med.get((fig, "weft"))
        for p in peers:
            pv = med.get((fig, p))
            row.append("%.2f" % (w / pv) if w is not None and pv and fig not in DIAGNOSTIC else "—")
        target, verdict = "", ""
        if fig in TARGETS and w is not None:
            kind, bound = TARGETS[fig]
            if kind == "ratio_max":
                t = med.get((fig, "tokio"))
                target = "weft/tokio ≤ %.1f" % bound
                if t:
                    verdict = "met" if w / t <= bound else "MISSED"
            else:
                target = "weft ≥ %.1f" % bound
                verdict = "met" if w >= bound else "MISSED"
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
    one_runtime_table(med, rounds, units, MACHINE_FIGURES, "machine", "machine figure", "measured", [
        "ping_pong_floor: two plain threads bounce one cache line each way (no runtime): the least a",
        "round trip between two cores costs on this machine.",
        "cpu_speedup_bare: cpu_scaling's 2,000 kernels on two plain threads against one (no runtime):",
        "the speedup of the work itself on this machine. A runtime that adds no cost per task matches",
        "it; one whose single worker is slower than a plain thread (cpu_1w) can show more."])
    one_runtime_table(med, rounds, units, SIM_FIGURES, "weft-sim", "simulator figure", "weft-sim", [
        "shutdown_race at 4 workers x 100 tasks, one job; the aim is >= 1,000 seeds/s per core",
        "(sim_seeds_per_cpu_s is seeds per CPU-second of the process, the per-core figure)."])


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
