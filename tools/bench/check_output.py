#!/usr/bin/env python3
"""Runs a bench program and checks the shape of what it prints (never its numbers' size).

  check_output.py --runtime NAME [--figures A,B,...] [--with-machine] [--with-pool] -- PROGRAM ARGS...
                                                       scenario lines (see README.md)
  check_output.py --google-benchmark -- PROGRAM ARGS...  a Google Benchmark binary
  check_output.py --raw FILE --runtimes "A B ..." [--sim-runtime NAME]
                  [--io-runtimes "A B ..."] [--file-runtimes "A B ..."] [--pool-runtimes "A B ..."]
                                                       compare.sh's raw lines (its --strict run)

Scenario mode: exit status 0; every stdout line is exactly
`scenario=<name> runtime=<NAME> value=<number> unit=<unit>` with a finite number; every figure
of the benchmark scenarios (or of --figures; with --with-pool also the stealing pool's) appears once; runtime=machine is accepted for the machine's own
figures (ping_pong_floor, cpu_speedup_bare), which --figures may name. Google Benchmark mode: exit status 0, JSON output, no benchmark
reported an error. Used by the meson 'bench' suite with tiny counts. Raw mode: every line of a
compare.sh run (all rounds, all programs) is well formed, names one of the listed runtimes, the
machine or the simulator, and every listed runtime printed every figure of the scenarios at least once
(the machine's figures and, with --sim-runtime, the simulator's too); every runtime of
--io-runtimes printed every tcp_echo figure (IO_FIGURES, the load client's lines) and every one of
--file-runtimes the file_read figure; every one of --pool-runtimes every stealing-pool figure (POOL_FIGURES). The I/O lists may name runtimes of their own (the liburing
and pread references).
"""
import json
import math
import re
import subprocess
import sys

LINE = re.compile(r"^scenario=([a-z0-9_]+) runtime=([A-Za-z0-9_.-]+) value=(-?[0-9]+(?:\.[0-9]+)?) unit=(\S+)$")
FIGURES = ["spawn_join_1", "spawn_join_1024", "yield_storm", "ping_pong", "ping_pong_cross",
           "ping_pong_pinned", "ping_pong_local", "timers_100k", "timeout_churn", "cpu_1w", "cpu_2w", "cpu_speedup", "task_memory", "task_memory_frame", "task_memory_rss"]
# The work-stealing pool's figures (weft's stealing_pool, tokio, async-executor; not Asio).
POOL_FIGURES = (["pool_spawn_join_1024", "pool_yield_storm", "pool_nested_spawn", "steal_imbalance"] +
                ["external_producers_%d" % n for n in (1, 2, 4, 8)] +
                ["priority_latency_%s_%s" % (k, q) for k in ("high", "background") for q in ("p50", "p99")] +
                ["priority_latency_ratio"])
# Figures of the machine rather than of a runtime (runtime=machine), printed by weft's program.
MACHINE_FIGURES = ["ping_pong_floor", "cpu_speedup_bare"]
# tcp_echo's figures, printed by weft-echo-client for each echo server: per load, round trips/s,
# the p50 and p99 latency and the server's CPU per 100,000 round trips.
IO_FIGURES = [load + suffix for load in ("tcp_echo_64", "tcp_echo_4k") for suffix in ("", "_p50", "_p99", "_cpu")]
FILE_FIGURES = ["file_read"]
# The simulator's throughput figures (weft-bench-sim).
SIM_FIGURES = ["sim_seeds_per_s", "sim_steps_per_s", "sim_seeds_per_cpu_s",
               "sim_world_seeds_per_s", "sim_world_steps_per_s", "sim_world_seeds_per_cpu_s"]


def fail(msg):
    print("check_output: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def parse_line(raw):
    """Returns (figure, runtime, value, unit); raises ValueError on a malformed line or a value
    that is not a finite number."""
    m = LINE.match(raw)
    if not m:
        raise ValueError("malformed line: %r" % raw)
    name, rt, value, unit = m.group(1), m.group(2), float(m.group(3)), m.group(4)
    if not math.isfinite(value):
        raise ValueError("not a finite number: %r" % raw)
    return name, rt, value, unit


def parse_lines(text, runtime=None):
    """Returns {figure: (value, unit)}; raises ValueError on a malformed or duplicate line."""
    seen = {}
    for raw in text.splitlines():
        name, rt, value, unit = parse_line(raw)
        if rt == "machine":
            if name not in MACHINE_FIGURES:
                raise ValueError("not a machine figure: %r" % raw)
        elif runtime is not None and rt != runtime:
            raise ValueError("runtime=%s, expected %s: %r" % (rt, runtime, raw))
        if name in seen:
            raise ValueError("figure printed twice: %s" % name)
        seen[name] = (value, unit)
    return seen


def check_raw(path, runtimes, sim_runtime, io_runtimes=(), file_runtimes=(), pool_runtimes=()):
    """compare.sh's raw file: the lines of many programs and rounds, so figures repeat."""
    expected = {rt: list(FIGURES) for rt in runtimes}
    for rt in pool_runtimes:
        expected.setdefault(rt, []).extend(POOL_FIGURES)
    for rt in io_runtimes:
        expected.setdefault(rt, []).extend(IO_FIGURES)
    for rt in file_runtimes:
        expected.setdefault(rt, []).extend(FILE_FIGURES)
    if runtimes:  # weft's program prints the machine's figures with the runtime scenarios
        expected["machine"] = list(MACHINE_FIGURES)
    if sim_runtime:
        expected[sim_runtime] = list(SIM_FIGURES)
    seen = {rt: set() for rt in expected}
    with open(path) as f:
        text = f.read()
    for raw in text.splitlines():
        try:
            name, rt, _, _ = parse_line(raw)
        except ValueError as e:
            fail(str(e))
        if rt not in expected:
            fail("unexpected runtime %r: %r" % (rt, raw))
        seen[rt].add(name)
    for rt, figures in expected.items():
        missing = [f for f in figures if f not in seen[rt]]
        if missing:
            fail("runtime %s is missing figures: %s" % (rt, ", ".join(missing)))
    print("check_output: %d runtimes, every figure present and well formed" % len(expected))


def main(argv):
    if "--raw" in argv:
        path = argv[argv.index("--raw") + 1]
        runtimes = argv[argv.index("--runtimes") + 1].split() if "--runtimes" in argv else []
        pool = argv[argv.index("--pool-runtimes") + 1].split() if "--pool-runtimes" in argv else []
        if not runtimes and not pool:
            fail("--raw needs --runtimes or --pool-runtimes")
        sim = argv[argv.index("--sim-runtime") + 1] if "--sim-runtime" in argv else None
        io = argv[argv.index("--io-runtimes") + 1].split() if "--io-runtimes" in argv else []
        files = argv[argv.index("--file-runtimes") + 1].split() if "--file-runtimes" in argv else []
        check_raw(path, runtimes, sim, io, files, pool)
        return
    if "--" not in argv:
        fail("usage: check_output.py (--runtime NAME | --google-benchmark) -- PROGRAM ARGS...")
    split = argv.index("--")
    opts, cmd = argv[:split], argv[split + 1:]
    if "--google-benchmark" in opts:
        proc = subprocess.run(cmd + ["--benchmark_format=json"], capture_output=True, text=True, timeout=300)
        sys.stderr.write(proc.stderr)
        if proc.returncode != 0:
            fail("exit status %d" % proc.returncode)
        report = json.loads(proc.stdout)
        benches = report.get("benchmarks", [])
        if not benches:
            fail("no benchmarks ran")
        for b in benches:
            if b.get("error_occurred"):
                fail("%s: %s" % (b.get("name"), b.get("error_message")))
        print("check_output: %d benchmarks ran" % len(benches))
        return
    runtime = opts[opts.index("--runtime") + 1]
    figures = opts[opts.index("--figures") + 1].split(",") if "--figures" in opts else list(FIGURES)
    if "--with-machine" in opts:  # the program also reports the machine's own figures
        figures += MACHINE_FIGURES
    if "--with-pool" in opts:  # the program also runs the stealing pool's scenarios
        figures += POOL_FIGURES
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        fail("exit status %d" % proc.returncode)
    try:
        seen = parse_lines(proc.stdout, runtime)
    except ValueError as e:
        fail(str(e))
    missing = [f for f in figures if f not in seen]
    if missing:
        fail("missing figures: " + ", ".join(missing))
    print("check_output: %d well-formed figures" % len(seen))


if __name__ == "__main__":
    main(sys.argv[1:])
