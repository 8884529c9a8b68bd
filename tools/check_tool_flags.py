#!/usr/bin/env python3
"""Runs weft's own programs with bad flags and checks each is refused as a usage error.

A bad flag (negative, 2^64, zero where zero is meaningless, text, unknown, missing its value)
must end the program with exit status 2 before any work, and its one-line message on stderr
must name the flag. One good command line per program must still succeed.

  check_tool_flags.py --demo PATH --runtime-demo PATH --bench-scenarios PATH [--bench-sim PATH]
                      [--echo-client PATH]

The echo client's good command line runs against a small echo server in this script (127.0.0.1,
a free port), whose own PID it is given as --server-pid.
"""
import argparse
import os
import socketserver
import subprocess
import sys
import threading

EXIT_USAGE = 2
TIMEOUT_S = 60  # a flag that wrapped into a huge count shows up as a timeout, not a hang
TWO_TO_64 = str(2**64)
U64_MAX = str(2**64 - 1)

# (program key, arguments, the flag stderr must name)
BAD = [
    ("demo", ["--producers", "-1"], "--producers"),
    ("demo", ["--producers", TWO_TO_64], "--producers"),
    ("demo", ["--producers", "0"], "--producers"),
    ("demo", ["--items", "ten"], "--items"),
    ("demo", ["--items", "12abc"], "--items"),
    ("demo", ["--items", TWO_TO_64], "--items"),
    ("demo", ["--items"], "--items"),
    ("demo", ["--bogus", "1"], "--bogus"),
    ("runtime-demo", ["--workers", "-1"], "--workers"),
    ("runtime-demo", ["--workers", "0"], "--workers"),
    ("runtime-demo", ["--workers", TWO_TO_64], "--workers"),
    ("runtime-demo", ["--jobs", "-1"], "--jobs"),
    ("runtime-demo", ["--jobs", "0"], "--jobs"),
    ("runtime-demo", ["--jobs", "many"], "--jobs"),
    ("runtime-demo", ["--jobs"], "--jobs"),
    ("runtime-demo", ["--bogus", "1"], "--bogus"),
    ("bench-scenarios", ["--scale", "-1"], "--scale"),
    ("bench-scenarios", ["--scale", "0"], "--scale"),
    ("bench-scenarios", ["--scale", TWO_TO_64], "--scale"),
    ("bench-scenarios", ["--scale", "tiny"], "--scale"),
    ("bench-scenarios", ["--scale", "nan"], "--scale"),
    ("bench-scenarios", ["--scale", "0.5x"], "--scale"),
    ("bench-scenarios", ["--scale"], "--scale"),
    ("bench-scenarios", ["--scenario"], "--scenario"),
    ("bench-scenarios", ["--scenario", "no_such"], "--scenario"),
    ("bench-scenarios", ["--bogus"], "--bogus"),
    ("bench-sim", ["--seeds", "-1"], "--seeds"),
    ("bench-sim", ["--seeds", "0"], "--seeds"),
    ("bench-sim", ["--seeds", TWO_TO_64], "--seeds"),
    ("bench-sim", ["--seeds", "five"], "--seeds"),
    ("bench-sim", ["--start", "-1"], "--start"),
    ("bench-sim", ["--start", TWO_TO_64], "--start"),
    ("bench-sim", ["--start", U64_MAX, "--seeds", "2"], "--start"),
    ("bench-sim", ["--workers", "-1"], "--workers"),
    ("bench-sim", ["--workers", "0"], "--workers"),
    ("bench-sim", ["--workers", TWO_TO_64], "--workers"),
    ("bench-sim", ["--tasks", "0"], "--tasks"),
    ("bench-sim", ["--tasks", "x"], "--tasks"),
    ("bench-sim", ["--seeds"], "--seeds"),
    ("bench-sim", ["--scenario", "no_such"], "--scenario"),
    ("bench-sim", ["--world", "--workers", "2"], "--world"),
    ("bench-sim", ["--scenario", "shutdown_race", "--world"], "--world"),
    ("bench-sim", ["--bogus", "1"], "--bogus"),
    # The echo client's required flags come first so that each case fails on the flag it names;
    # "{pid}" is this script's PID (a process that exists).
    ("echo-client", ["--port", "-1", "--server-pid", "{pid}"], "--port"),
    ("echo-client", ["--port", "0", "--server-pid", "{pid}"], "--port"),
    ("echo-client", ["--port", "65536", "--server-pid", "{pid}"], "--port"),
    ("echo-client", ["--port", "80x", "--server-pid", "{pid}"], "--port"),
    ("echo-client", ["--server-pid", "{pid}"], "--port"),
    ("echo-client", ["--port", "9"], "--server-pid"),
    ("echo-client", ["--port", "9", "--server-pid", "0"], "--server-pid"),
    ("echo-client", ["--port", "9", "--server-pid", TWO_TO_64], "--server-pid"),
    ("echo-client", ["--port", "9", "--server-pid", "4194304"], "--server-pid"),  # no such process
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--connections", "0"], "--connections"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--connections", "-1"], "--connections"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--connections", "4097"], "--connections"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--size", "0"], "--size"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--size", TWO_TO_64], "--size"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--size", "4k"], "--size"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--seconds", "0"], "--seconds"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--seconds", "-1"], "--seconds"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--seconds", "inf"], "--seconds"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--runtime", "a b"], "--runtime"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--figure", "Tcp"], "--figure"),
    ("echo-client", ["--port", "9", "--server-pid", "{pid}", "--seconds"], "--seconds"),
    ("echo-client", ["--bogus", "1"], "--bogus"),
]

GOOD = [
    ("demo", ["--producers", "1", "--items", "10"]),
    ("runtime-demo", ["--workers", "1", "--jobs", "10"]),
    ("bench-scenarios", ["--list"]),
    ("bench-sim", ["--seeds", "2", "--start", str(2**64 - 2), "--workers", "2", "--tasks", "10"]),
    ("bench-sim", ["--world", "--seeds", "2"]),
    ("echo-client", ["--port", "{port}", "--server-pid", "{pid}", "--connections", "2", "--size", "100",
                     "--seconds", "0.05"]),
]


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        try:
            while True:
                data = self.request.recv(65536)
                if not data:
                    return
                self.request.sendall(data)
        except ConnectionError:
            return  # the client closes its connections mid-exchange when its window ends


def start_echo_server():
    """A threaded echo server on 127.0.0.1 and a free port, for the echo client's good run."""
    socketserver.ThreadingTCPServer.daemon_threads = True
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def fill(args, port):
    return [a.format(pid=os.getpid(), port=port) for a in args]


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return None, "(timed out after %d s)" % TIMEOUT_S


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--demo", required=True)
    ap.add_argument("--runtime-demo", required=True)
    ap.add_argument("--bench-scenarios")
    ap.add_argument("--bench-sim")
    ap.add_argument("--echo-client")
    a = ap.parse_args()
    programs = {"demo": a.demo, "runtime-demo": a.runtime_demo, "bench-scenarios": a.bench_scenarios,
                "bench-sim": a.bench_sim, "echo-client": a.echo_client}
    port = start_echo_server().server_address[1] if a.echo_client else 0
    failures = 0
    checked = 0
    for key, args, flag in BAD:
        if programs[key] is None:
            continue
        checked += 1
        args = fill(args, port)
        code, err = run([programs[key]] + args)
        lines = [line for line in err.splitlines() if line.strip()]
        named = any((" %s: " % flag) in line for line in lines)  # "<program>: --flag: ..."
        if code != EXIT_USAGE or not named:
            failures += 1
            print("FAIL %s %s: exit %s, stderr %r (want exit %d naming %s)"
                  % (key, " ".join(args), code, err[-300:], EXIT_USAGE, flag))
    for key, args in GOOD:
        if programs[key] is None:
            continue
        checked += 1
        args = fill(args, port)
        code, err = run([programs[key]] + args)
        if code != 0:
            failures += 1
            print("FAIL %s %s: exit %s, stderr %r (want exit 0)" % (key, " ".join(args), code, err[-300:]))
    if programs["bench-scenarios"] is None:
        print("weft-bench-scenarios not built (a sanitizer build): its cases skipped")
    if programs["echo-client"] is None:
        print("weft-echo-client not built (a sanitizer build): its cases skipped")
    if programs["bench-sim"] is None:
        print("weft-bench-sim not built (no sim flavor, or a sanitizer build): its cases skipped")
    print("%d of %d command lines behave" % (checked - failures, checked))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
