#!/usr/bin/env python3
"""weft's one mutation tool: builds known-bad copies of production source for the checkers.

Two kinds of spec share one format (`key: value` lines; `#` starts a comment line):
  * models/twins/*.twin — a Relacy model's known-bad twin: `model:`, `expect:`, and the mutation
    of a header (`file:` relative to runtime/include);
  * sim/tests/variants/*.variant — a known-bad variant of the runtime for the simulator's
    detection-power test: `scenario:`, `seeds:`, `expect:` (optional `fuzz-args:`), and the
    mutation of a header or source (`file:` relative to runtime/, `include/...` or `src/...`);
  * tools/mutants/*.mutant — a mutant of the mutation campaign (docs/mutation.md): `protocol:`
    (one of PROTOCOLS below), `bug:` (one line: what breaks, as a user would notice), and the
    mutation of a header or source (`file:` as for a variant). No other key is accepted.
The mutation: `find:` (the text to replace) and `replace:` (may be empty). `\\n` in either stands
for a line break, so a find may span lines (a literal backslash followed by n is not expressible;
no production line needs one). The find must occur exactly once — or exactly `occurrences:`
times, with `occurrence:` (1-based) naming the one meant. Anything else fails the build with the
count: a find that no longer matches after a refactor must fail loudly, never yield an unmutated
(and so passing) checker.

usage:
  mutate.py apply SPEC ROOT OUT_DIR OUTPUT
      Mutates ROOT/<file>. A header (`.hpp`/`.h`) is written to OUT_DIR/<file>, which the build
      puts ahead of the production include directory, and OUTPUT is a stamp saying what was done;
      a source is written to OUTPUT, which the build compiles in place of the production file.
      Lines before the mutation keep their numbers; a trailer names the spec.
  mutate.py includers HEADER -I DIR [-I DIR ...] -- TU [TU ...]
      (Each TU may be written tu=PATH: meson makes every existing source file named by a
      configure-time command a configure dependency, so a plain path would reconfigure the build
      at each edit of a TU; the guard below covers edits instead.)
      Prints, one a line, the TUs whose #include closure reaches HEADER (a path under one of the
      -I directories, e.g. weft/platform/parker.hpp). A textual scan: every #include line counts,
      whatever #if it sits in, so the answer is a superset of what the compiler would include
      (safe: it may recompile too much, never too little); a computed include (`#include MACRO`)
      is an error. Quoted includes are looked up beside the including file first.
  mutate.py guard HEADER STAMP DEPFILE -I DIR [...] -- TU [TU ...]
      The build-time check behind reusing production objects in a variant: fails if any TU
      reaches HEADER (the sources changed since meson was configured: reconfigure). Writes
      STAMP, and DEPFILE listing every file scanned, so the check reruns when any of them changes.
  mutate.py campaign --work DIR [--source ROOT] [--only NAME ...] [--list FILE] [--seeds N] ...
      The mutation campaign (docs/mutation.md; `campaign --help` lists every flag): each mutant
      applied alone to a copy of ROOT in DIR, the sim-flavor binaries rebuilt, every scenario of
      `weft-sim list` fuzzed and the properties run; prints the kill rate and seeds-to-kill.
      Exit status: 0 measured, 1 the kill rate is below --min-kill-rate, 2 a bad flag, 3 nothing
      could be measured (a stale or non-compiling mutant, a failing baseline, a build error).
  mutate.py orders --model NAME --header PATH --work DIR [--source ROOT] [--timeout S]
      The order sweep (docs/models.md, *Which orders the models tell apart*): for every
      acquire/release/acq_rel/seq_cst in the code of HEADER (relative to runtime/include), one at
      a time, builds the Relacy model NAME (models/src/NAME_model.cpp) against a copy with that
      one order relaxed, runs it, and prints a markdown row: rejected (the model fails) or
      accepted. The unmutated model must pass first. Exit status: 0 measured, 2 a bad flag,
      3 nothing measured (the baseline failed or did not compile).
"""
import os
import re
import sys

REQUIRED = {
    ".twin": ("model", "expect", "file", "find", "replace"),
    ".variant": ("scenario", "seeds", "expect", "file", "find", "replace"),
}


class SpecError(Exception):
    """A bad spec or argument; main() turns it into `mutate.py: error: ...` and exit status 1."""


def fail(message):
    raise SpecError(message)


def read_fields(path, accepted=None):
    """The `key: value` fields of a spec; `accepted`, when given, lists every key it may have."""
    fields = {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition(":")
            if not sep:
                fail(f"{path}:{number}: not a `key: value` line: {line!r}")
            key = key.strip()
            if accepted is not None and key not in accepted:
                fail(f"{path}:{number}: unknown key `{key}:` (accepted: {', '.join(accepted)})")
            if key in fields:
                fail(f"{path}:{number}: `{key}:` given twice")
            fields[key] = value[1:] if value.startswith(" ") else value
    return fields


def require(path, fields, keys):
    for key in keys:
        if key not in fields:
            fail(f"{path}: missing `{key}:`")


def parse(path):
    kind = os.path.splitext(path)[1]
    if kind not in REQUIRED:
        fail(f"{path}: unknown spec kind (expected a .twin or a .variant file)")
    fields = read_fields(path)
    require(path, fields, REQUIRED[kind])
    return kind, fields


def mutate_text(spec, s, text, source):
    """(mutated text, 1-based line of the mutation, find, replace); fails on a stale find."""
    find = s["find"].replace("\\n", "\n")
    replace = s["replace"].replace("\\n", "\n")
    if not find:
        fail(f"{spec}: `find:` is empty")
    count = text.count(find)
    expected = spec_count(spec, s, "occurrences", 1)
    which = spec_count(spec, s, "occurrence", 1)
    if count != expected:
        fail(f"{spec}: `find:` occurs {count} times in {source}, the spec expects {expected} "
             f"(stale after a change to {s['file']}? update the spec with the code it mutates)")
    if not 1 <= which <= count:
        fail(f"{spec}: `occurrence: {which}` is not between 1 and {count}")
    at = -1
    for _ in range(which):
        at = text.index(find, at + 1)
    return text[:at] + replace + text[at + len(find):], text[:at].count("\n") + 1, find, replace


def spec_count(spec, s, key, default):
    value = s.get(key, str(default))
    if not re.fullmatch(r"[1-9][0-9]{0,5}", value):
        fail(f"{spec}: `{key}: {value}` is not a whole number in [1, 999999]")
    return int(value)


def apply(spec, root, out_dir, output):
    kind, s = parse(spec)
    source = os.path.join(root, s["file"])
    try:
        with open(source, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        fail(f"{spec}: cannot read the file it mutates: {e}")
    mutated, line, find, replace = mutate_text(spec, s, text, source)
    name = os.path.basename(spec)
    label = "TWIN" if kind == ".twin" else "VARIANT"
    trailer = f"// KNOWN-BAD {label} generated from {s['file']} by {name}\n"
    if os.path.splitext(s["file"])[1] in (".hpp", ".h"):
        target = os.path.join(out_dir, s["file"])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as out:
            out.write(mutated + trailer)
        with open(output, "w", encoding="utf-8") as out:
            out.write(f"// {name}: {s['file']}:{line} mutated into {target}\n")
            for a, b in zip(find.split("\n"), replace.split("\n") + [""] * find.count("\n")):
                out.write(f"//   - {a}\n//   + {b}\n")
    else:
        with open(output, "w", encoding="utf-8") as out:
            out.write(mutated + trailer)


INCLUDE = re.compile(r'^\s*#\s*include\s*(?:([<"])([^>"]+)[>"]|(\S+))')


def scan(tus, dirs):
    """Yields (tu, set of files its include closure reaches) and the set of every file read."""
    closure_of = {}
    read = set()

    def includes(path):
        if path in closure_of:
            return closure_of[path]
        closure_of[path] = set()  # guards include cycles (every header has #pragma once)
        read.add(path)
        found = set()
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                if m.group(3) is not None:
                    fail(f"{path}:{number}: computed #include; the include scan cannot follow it")
                name = m.group(2)
                candidates = ([os.path.dirname(path)] if m.group(1) == '"' else []) + dirs
                for d in candidates:
                    hit = os.path.normpath(os.path.join(d, name))
                    if os.path.isfile(hit):
                        found.add(hit)
                        found |= includes(hit)
                        break
                # not found under the given directories: a system header, outside the scan
        closure_of[path] = found
        return found

    return [(tu, includes(os.path.normpath(tu))) for tu in tus], read


def split_scan_args(args):
    if "--" not in args:
        fail("expected `-I DIR ... -- TU ...`")
    cut = args.index("--")
    head = args[:cut]
    tus = [t[3:] if t.startswith("tu=") else t for t in args[cut + 1:]]
    dirs = []
    while head:
        if head[0] != "-I" or len(head) < 2:
            fail(f"expected `-I DIR`, got {head[0]!r}")
        dirs.append(os.path.normpath(head[1]))
        head = head[2:]
    if not dirs:
        fail("no -I directory given")
    return dirs, tus


def targets(header, dirs):
    return {os.path.normpath(os.path.join(d, header)) for d in dirs}


def includers(header, args):
    dirs, tus = split_scan_args(args)
    wanted = targets(header, dirs)
    if not any(os.path.isfile(t) for t in wanted):
        fail(f"{header} is under none of the -I directories {dirs}")
    closures, _ = scan(tus, dirs)
    for tu, reached in closures:
        if reached & wanted or os.path.normpath(tu) in wanted:
            print(tu)


def guard(header, stamp, depfile, args):
    dirs, tus = split_scan_args(args)
    closures, read = scan(tus, dirs)
    wanted = targets(header, dirs)
    bad = [tu for tu, reached in closures if reached & wanted]
    if bad:
        fail(f"{header} is now included by {', '.join(bad)}, whose production objects this "
             f"variant reuses unmutated; run `meson setup --reconfigure` on the build directory")
    with open(stamp, "w", encoding="utf-8") as out:
        out.write(f"{len(tus)} reused TUs do not include {header}\n")
    with open(depfile, "w", encoding="utf-8") as out:
        deps = " ".join(p.replace(" ", "\\ ") for p in sorted(read))
        out.write(f"{stamp}: {deps}\n")


# ---- campaign ---------------------------------------------------------------------------------
#
# The mutation campaign: each mutant of tools/mutants/ applied alone to a private copy of the
# tree, the sim-flavor binaries rebuilt, and only the simulator (every registered scenario) and
# the rapidcheck properties run against it. docs/mutation.md is its reference.

PROTOCOLS = ("inbox", "turn", "timers", "stop", "drain", "abort", "blocking", "placement",
             "relocation", "join", "pool")
MUTANT_KEYS = ("protocol", "bug", "file", "find", "replace")
MUTANT_OPTIONAL = ("occurrences", "occurrence")
STRATEGIES = {  # name: the weft-sim fuzz flags it adds
    "random": ["--strategy", "random"],
    "pct": ["--strategy", "pct"],
    "random-swarm": ["--strategy", "random", "--swarm"],
    "pct-swarm": ["--strategy", "pct", "--swarm"],
}
SEEDS_MAX = 10_000_000          # per scenario and strategy
START_MAX = 2**63               # leaves room for start + seeds within weft-sim's 2^64 - 1
FUZZ_JOBS_MAX = 256             # weft-sim fuzz --jobs
BUILD_JOBS_MAX = 64
TIMEOUT_MAX_S = 86_400          # one checker or build step, in seconds
EXIT_BELOW_RATE = 1             # the kill rate is below --min-kill-rate
EXIT_USAGE = 2                  # a bad flag
EXIT_UNMEASURED = 3             # a spec error, a failing baseline, a build or tool error
BUILD_DIR = "build-mutation"    # inside the copy, one level down like every build-*/ of a checkout
                                # (--mirror-build puts it where a given build of the source is)
SIM_TARGETS = ("sim/weft-sim", "properties/weft-properties", "properties/weft-prop-sim")
COPY_SKIP = re.compile(r"^(\.git|build|builddir|build-.*|\.cache)$")  # top-level names not copied
FAILURE_LINE = re.compile(r"^fail: seed=(\d+): (.*)$")
GTEST_FAILED = re.compile(r"^\[  FAILED  \] (\w+\.\w+)")


class Unmeasured(Exception):
    """The campaign cannot measure (exit EXIT_UNMEASURED): the message says why."""


def load_mutant(path):
    fields = read_fields(path, MUTANT_KEYS + MUTANT_OPTIONAL)
    require(path, fields, MUTANT_KEYS)
    if fields["protocol"] not in PROTOCOLS:
        fail(f"{path}: `protocol: {fields['protocol']}` is not one of {', '.join(PROTOCOLS)}")
    if not fields["bug"].strip():
        fail(f"{path}: `bug:` is empty")
    if not re.fullmatch(r"(include/weft/\S+\.hpp|src/\S+\.cpp)", fields["file"]):
        fail(f"{path}: `file: {fields['file']}` is not under runtime/include/weft/ or runtime/src/")
    fields["name"] = os.path.basename(path)[:-len(".mutant")]
    fields["spec"] = path
    return fields


def load_mutants(directory, source_root):
    """Every mutant of `directory`, by name, each checked against the runtime it mutates."""
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".mutant"))
    except OSError as e:
        fail(f"--mutants: cannot list {directory}: {e}")
    if not names:
        fail(f"--mutants: {directory} holds no .mutant file")
    mutants = {}
    for n in names:
        m = load_mutant(os.path.join(directory, n))
        target = os.path.join(source_root, "runtime", m["file"])
        try:
            with open(target, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            fail(f"{m['spec']}: cannot read the file it mutates: {e}")
        mutated, line, _, _ = mutate_text(m["spec"], m, text, target)
        if mutated == text:
            fail(f"{m['spec']}: the replacement equals the find: the mutant changes nothing")
        m["line"] = line
        mutants[m["name"]] = m
    return mutants


def whole(flag, text, low, high):
    if not re.fullmatch(r"[0-9]+", text):
        raise ValueError(f"{flag}: {text!r} is not a whole decimal number")
    value = int(text)
    if not low <= value <= high:
        raise ValueError(f"{flag}: {value} is outside the accepted range [{low}, {high}]")
    return value


def subcommand_parser(name, description, source_help):
    """An argument parser for `mutate.py NAME` with its --source flag (default: this checkout)."""
    import argparse
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(prog="mutate.py " + name, description=description)
    p.add_argument("--source", default=here, help=source_help + " (default: this checkout)")
    return p


def campaign_args(argv):
    p = subcommand_parser("campaign", "Measures the simulator and the properties against the mutants of "
                                      "tools/mutants/ (docs/mutation.md).", "the tree to copy and mutate")
    p.add_argument("--work", required=True, help="working directory: the copy and its build (created)")
    p.add_argument("--mutants", help="directory of .mutant specs (default: SOURCE/tools/mutants)")
    p.add_argument("--only", nargs="+", action="extend", default=[], metavar="NAME",
                   help="run only these mutants (repeatable)")
    p.add_argument("--list", dest="list_file", metavar="FILE",
                   help="run only the mutants named in FILE, one a line (# comments)")
    p.add_argument("--seeds", default="10000", help=f"seeds per scenario and strategy, [1, {SEEDS_MAX}]")
    p.add_argument("--start", default="0", help=f"first seed, [0, {START_MAX}]")
    p.add_argument("--strategies", default="random,random-swarm",
                   help=f"comma-separated, each once: {', '.join(STRATEGIES)}")
    p.add_argument("--jobs", default="1",
                   help=f"weft-sim fuzz --jobs, [1, {FUZZ_JOBS_MAX}], or `auto`: one per CPU (at most {FUZZ_JOBS_MAX})")
    p.add_argument("--build-jobs", default="2", help=f"ninja -j, [1, {BUILD_JOBS_MAX}]")
    p.add_argument("--mirror-build", metavar="DIR",
                   help="a build directory inside SOURCE: the copy is built at the same place in the copy, so "
                        "its compile commands equal DIR's and ccache answers what DIR already compiled "
                        f"(default: WORK/src/{BUILD_DIR})")
    p.add_argument("--timeout", default="1800", help=f"seconds per build or checker run, [1, {TIMEOUT_MAX_S}]")
    p.add_argument("--min-kill-rate", default="0", help="percent, [0, 100]: exit 1 below it")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the results table as Markdown")
    p.add_argument("--check-specs", action="store_true",
                   help="only check every spec against the source and print the mutant table")
    a = p.parse_args(argv)
    try:
        a.seeds = whole("--seeds", a.seeds, 1, SEEDS_MAX)
        a.start = whole("--start", a.start, 0, START_MAX)
        if a.jobs == "auto":
            a.jobs = str(min(os.cpu_count() or 1, FUZZ_JOBS_MAX))
        a.jobs = whole("--jobs", a.jobs, 1, FUZZ_JOBS_MAX)
        a.build_jobs = whole("--build-jobs", a.build_jobs, 1, BUILD_JOBS_MAX)
        a.timeout = whole("--timeout", a.timeout, 1, TIMEOUT_MAX_S)
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", a.min_kill_rate) or not 0 <= float(a.min_kill_rate) <= 100:
            raise ValueError(f"--min-kill-rate: {a.min_kill_rate!r} is not a percentage in [0, 100]")
        a.min_kill_rate = float(a.min_kill_rate)
        strategies = a.strategies.split(",")
        for s in strategies:
            if s not in STRATEGIES:
                raise ValueError(f"--strategies: {s!r} is not one of {', '.join(STRATEGIES)}")
        if len(set(strategies)) != len(strategies):
            raise ValueError(f"--strategies: {a.strategies!r} names a strategy twice")
        a.strategies = strategies
        a.source = os.path.abspath(a.source)
        if not os.path.isfile(os.path.join(a.source, "runtime", "meson.build")):
            raise ValueError(f"--source: {a.source} is not a weft checkout (no runtime/meson.build)")
        a.mutants = os.path.abspath(a.mutants or os.path.join(a.source, "tools", "mutants"))
        if not os.path.isdir(a.mutants):
            raise ValueError(f"--mutants: {a.mutants} is not a directory")
        a.work = os.path.abspath(a.work)
        if not os.path.isdir(os.path.dirname(a.work)):
            raise ValueError(f"--work: the parent of {a.work} is not a directory")
        if os.path.exists(a.work) and not os.path.isdir(a.work):
            raise ValueError(f"--work: {a.work} exists and is not a directory")
        if a.source == a.work or a.source.startswith(a.work + os.sep):
            raise ValueError(f"--work: {a.work} contains the source tree")
        a.build_rel = BUILD_DIR
        if a.mirror_build is not None:
            mirrored = os.path.abspath(a.mirror_build)
            rel = os.path.relpath(mirrored, a.source)
            if not os.path.isdir(mirrored) or rel == os.curdir or rel.split(os.sep)[0] == os.pardir:
                raise ValueError(f"--mirror-build: {a.mirror_build} is not a directory inside {a.source}")
            if not os.path.isdir(os.path.join(mirrored, "meson-private")):
                raise ValueError(f"--mirror-build: {a.mirror_build} is not a meson build directory")
            a.build_rel = rel
            a.mirror_options = mirrored_compile_options(mirrored)
        for flag, path in (("--json", a.json), ("--markdown", a.markdown)):
            if path is not None and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
                raise ValueError(f"{flag}: the directory of {path} does not exist")
        if a.list_file is not None:
            try:
                with open(a.list_file, encoding="utf-8") as f:
                    listed = [l.split("#")[0].strip() for l in f]
            except OSError as e:
                raise ValueError(f"--list: cannot read {a.list_file}: {e}") from None
            listed = [l for l in listed if l]
            if not listed:
                raise ValueError(f"--list: {a.list_file} names no mutant")
            a.only += listed
        if len(set(a.only)) != len(a.only):
            raise ValueError("--only/--list: a mutant is named twice")
    except ValueError as e:
        p.error(str(e))  # exit status 2
    return a, p


def copy_tree(source, dest, work, build_rel):
    """Makes `dest` a copy of `source` (no .git, no build dirs): files whose content differs are
    rewritten, files gone from `source` removed; `dest`'s own build dir (`build_rel` below it) is
    kept."""
    def skipped(rel, name):
        full = os.path.join(source, rel, name)
        return ((rel == "" and COPY_SKIP.match(name)) or full == work
                or os.path.isdir(os.path.join(full, "meson-private")))  # a build dir of any name
    wanted = set()
    for dirpath, dirnames, filenames in os.walk(source):
        rel = os.path.relpath(dirpath, source)
        rel = "" if rel == "." else rel
        dirnames[:] = sorted(d for d in dirnames if not skipped(rel, d))
        os.makedirs(os.path.join(dest, rel), exist_ok=True)
        for name in filenames:
            if skipped(rel, name):
                continue
            wanted.add(os.path.join(rel, name))
            src_file = os.path.join(dirpath, name)
            dst_file = os.path.join(dest, rel, name)
            with open(src_file, "rb") as f:
                data = f.read()
            try:
                with open(dst_file, "rb") as f:
                    same = f.read() == data
            except OSError:
                same = False
            if not same:
                with open(dst_file, "wb") as f:
                    f.write(data)
                os.chmod(dst_file, os.stat(src_file).st_mode & 0o777)
    for dirpath, dirnames, filenames in os.walk(dest):
        rel = os.path.relpath(dirpath, dest)
        rel = "" if rel == "." else rel
        dirnames[:] = [d for d in dirnames if os.path.join(rel, d) != build_rel]
        for name in filenames:
            if os.path.join(rel, name) not in wanted:
                os.remove(os.path.join(dirpath, name))


def toolchain_env(src):
    """The environment tools/toolchain.sh sets up (clang, ccache where installed)."""
    import subprocess
    out = subprocess.run(["bash", "-c", ". ./tools/toolchain.sh && env -0"], cwd=src, check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    return dict(item.split("=", 1) for item in out.split("\0") if "=" in item)


def run_step(command, env, timeout, cwd=None):
    """(exit status or None on timeout, combined output)."""
    import subprocess
    try:
        r = subprocess.run(command, env=env, cwd=cwd, timeout=timeout, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        return r.returncode, r.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode(errors="replace")


def tail(text, lines=15):
    return "\n".join(text.rstrip().split("\n")[-lines:])


def mirrored_compile_options(build_dir):
    """The -D options that make the copy's compile commands the mirrored build's: its optimisation
    level and debug information (ccache serves the copy only when the commands match exactly)."""
    import json
    import subprocess
    try:
        out = subprocess.run(["meson", "introspect", "--buildoptions", build_dir], check=True,
                             capture_output=True, text=True).stdout
        options = {o["name"]: o["value"] for o in json.loads(out)}
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError) as e:
        raise ValueError(f"--mirror-build: cannot read the options of {build_dir}: {e}") from None
    return [f"-Doptimization={options['optimization']}", f"-Ddebug={str(options['debug']).lower()}"]


class Bench:
    """The copy, its build, and the checkers run against what is built there."""

    def __init__(self, a):
        self.a = a
        self.src = os.path.join(a.work, "src")
        self.build = os.path.join(self.src, a.build_rel)
        self.env = None
        self.scenarios = []
        self.properties = False

    def prepare(self):
        os.makedirs(self.src, exist_ok=True)
        copy_tree(self.a.source, self.src, self.a.work, self.a.build_rel)
        self.env = toolchain_env(self.src)
        if not os.path.isfile(os.path.join(self.build, "build.ninja")):
            status, out = run_step(["meson", "setup", self.build, "-Dflavors=sim", "-Dexamples=false"]
                                   + getattr(self.a, "mirror_options", []),
                                   self.env, self.a.timeout, cwd=self.src)
            if status != 0:
                raise Unmeasured(f"meson setup of the copy failed:\n{tail(out)}")
        status, out = run_step(["ninja", "-C", self.build, "-t", "targets", "all"], self.env, self.a.timeout)
        if status != 0:
            raise Unmeasured(f"ninja -t targets failed:\n{tail(out)}")
        known = {line.split(":")[0] for line in out.split("\n")}
        if "sim/weft-sim" not in known:
            raise Unmeasured("the copy's build has no sim/weft-sim (sim flavor not configured?)")
        self.properties = "properties/weft-properties" in known
        self.targets = [t for t in SIM_TARGETS if t in known]

    def compile(self):
        """None when built, else the compiler's complaint."""
        status, out = run_step(["ninja", "-C", self.build, "-j", str(self.a.build_jobs)] + self.targets,
                               self.env, self.a.timeout)
        if status == 0:
            return None
        return "build timed out" if status is None else tail(out)

    def list_scenarios(self):
        status, out = run_step([self.exe("sim/weft-sim"), "list"], self.env, self.a.timeout)
        if status != 0:
            raise Unmeasured(f"weft-sim list failed:\n{tail(out)}")
        self.scenarios = [line.split()[0] for line in out.split("\n") if line and not line[0].isspace()]
        if not self.scenarios:
            raise Unmeasured("weft-sim list printed no scenario")

    def exe(self, target):
        return os.path.join(self.build, target)

    def fuzz(self, scenario, strategy):
        """None when every seed passed, else a kill record."""
        command = [self.exe("sim/weft-sim"), "fuzz", "--scenario", scenario, "--seeds", str(self.a.seeds),
                   "--start", str(self.a.start), "--jobs", str(self.a.jobs), "--max-failures", "1"]
        status, out = run_step(command + STRATEGIES[strategy], self.env, self.a.timeout)
        checker = f"{scenario}/{strategy}"
        if status == 0:
            return None
        if status == EXIT_USAGE:
            raise Unmeasured(f"weft-sim refused the command {' '.join(command)}:\n{tail(out)}")
        if status == 1:
            for line in out.split("\n"):
                m = FAILURE_LINE.match(line)
                if m:
                    seed = int(m.group(1))
                    return {"checker": checker, "seed": seed, "seeds_to_kill": seed - self.a.start + 1,
                            "failure": m.group(2)}
            raise Unmeasured(f"weft-sim fuzz failed without a `fail:` line:\n{tail(out)}")
        # A crash or a hang of the checker itself: detected, but with no seed to count.
        why = "timed out" if status is None else f"exit status {status}"
        return {"checker": checker, "seed": None, "seeds_to_kill": None,
                "failure": f"weft-sim fuzz {why}: {tail(out, 1)}"}

    def run_properties(self):
        """None when every property held, else a kill record. The known-bad tests are left out:
        they measure the properties on planted bugs of their own, not this runtime."""
        env = dict(self.env)
        env["WEFT_SIM_BIN"] = self.exe("sim/weft-sim")
        env["WEFT_PROP_SIM_BIN"] = self.exe("properties/weft-prop-sim")
        status, out = run_step([self.exe("properties/weft-properties"), "--gtest_filter=-*_known_bad.*"],
                               env, self.a.timeout)
        if status == 0:
            return None
        failed = [m.group(1) for m in map(GTEST_FAILED.match, out.split("\n")) if m]
        why = "timed out" if status is None else (", ".join(dict.fromkeys(failed)) or f"exit status {status}")
        return {"checker": "properties", "seed": None, "seeds_to_kill": None, "failure": why}

    def check(self):
        """Every kill record of the built binaries: one per scenario and strategy that failed, and
        one for the properties."""
        kills = []
        for scenario in self.scenarios:
            for strategy in self.a.strategies:
                k = self.fuzz(scenario, strategy)
                if k:
                    kills.append(k)
        if self.properties:
            k = self.run_properties()
            if k:
                kills.append(k)
        return kills


def seeds_to_kill(kills):
    counted = [k["seeds_to_kill"] for k in kills if k["seeds_to_kill"] is not None]
    return min(counted) if counted else None


def median(values):
    v = sorted(values)
    if not v:
        return None
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def first_killer(kills):
    """The kill that counts: the fewest seeds, then the scenario order; properties last."""
    with_seeds = [k for k in kills if k["seeds_to_kill"] is not None]
    if with_seeds:
        return min(with_seeds, key=lambda k: k["seeds_to_kill"])
    return kills[0] if kills else None


def summary(results):
    measured = [r for r in results if r["result"] in ("killed", "survived")]
    killed = [r for r in measured if r["result"] == "killed"]
    rate = 100.0 * len(killed) / len(measured) if measured else 0.0
    med = median([r["seeds_to_kill"] for r in killed if r["seeds_to_kill"] is not None])
    shown = "-" if med is None else (f"{med:g}")
    return {"killed": len(killed), "measured": len(measured), "kill_rate": rate, "median_seeds_to_kill": med,
            "line": f"mutation: {len(killed)}/{len(measured)} killed ({rate:.1f}%), median seeds-to-kill {shown}"}


def killer_text(r):
    k = first_killer(r["kills"])
    if r["result"] == "spec-error":
        return "does not compile"
    if not k:
        return "-"
    more = len(r["kills"]) - 1
    return k["checker"] + (f" (+{more})" if more else "")


def print_table(results, out):
    out.write(f"{'mutant':<40} {'protocol':<10} {'result':<10} {'seeds':>6}  killed by\n")
    for r in results:
        s = "-" if r["seeds_to_kill"] is None else str(r["seeds_to_kill"])
        out.write(f"{r['name']:<40} {r['protocol']:<10} {r['result']:<10} {s:>6}  {killer_text(r)}\n")


def by_protocol(m):
    return PROTOCOLS.index(m["protocol"]), m["name"]


def markdown_table(results):
    lines = ["| mutant | protocol | result | seeds-to-kill | killed by (first) | failure |",
             "|---|---|---|---|---|---|"]
    for r in sorted(results, key=by_protocol):
        k = first_killer(r["kills"])
        s = "-" if r["seeds_to_kill"] is None else str(r["seeds_to_kill"])
        failure = (k["failure"] if k else "").replace("|", "\\|")
        if len(failure) > 90:
            failure = failure[:87] + "..."
        lines.append(f"| `{r['name']}` | {r['protocol']} | {r['result']} | {s} | "
                     f"{killer_text(r)} | {failure} |")
    return "\n".join(lines) + "\n"


def campaign(argv):
    a, parser = campaign_args(argv)
    try:
        mutants = load_mutants(a.mutants, a.source)
    except SpecError as e:
        print(f"mutate.py campaign: spec error: {e}", file=sys.stderr)
        return EXIT_UNMEASURED
    unknown = [n for n in a.only if n not in mutants]
    if unknown:
        parser.error(f"--only/--list: no mutant named {', '.join(unknown)} in {a.mutants} "
                     f"(known: {', '.join(mutants)})")
    chosen = [mutants[n] for n in (a.only or mutants)]
    if a.check_specs:
        print("| mutant | protocol | file | bug |\n|---|---|---|---|")
        for m in sorted(chosen, key=by_protocol):
            print(f"| `{m['name']}` | {m['protocol']} | `{m['file']}:{m['line']}` | {m['bug']} |")
        return 0

    import signal
    import time

    def interrupted(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupted)

    began = time.monotonic()
    bench = Bench(a)
    results = []
    try:
        bench.prepare()
        print(f"campaign: {len(chosen)} mutants, seeds {a.start}..{a.start + a.seeds - 1} per scenario and "
              f"strategy ({', '.join(a.strategies)}), fuzz jobs {a.jobs}; copy in {bench.src}", flush=True)
        problem = bench.compile()
        if problem:
            raise Unmeasured(f"the unmutated copy does not build:\n{problem}")
        bench.list_scenarios()
        print(f"campaign: scenarios {', '.join(bench.scenarios)}; properties "
              f"{'included' if bench.properties else 'not built (no rapidcheck): left out'}", flush=True)
        baseline = bench.check()
        if baseline:
            k = baseline[0]
            raise Unmeasured(f"the unmutated baseline fails {k['checker']}"
                             f"{'' if k['seed'] is None else ' at seed ' + str(k['seed'])}: {k['failure']}; "
                             f"a mutant cannot be measured against a failing checker")
        print(f"campaign: baseline passes every checker ({time.monotonic() - began:.0f} s)", flush=True)
        for i, m in enumerate(chosen, 1):
            results.append(run_mutant(bench, m, i, len(chosen)))
    except Unmeasured as e:
        print(f"mutate.py campaign: error: {e}", file=sys.stderr)
        return EXIT_UNMEASURED
    except KeyboardInterrupt:
        print("mutate.py campaign: interrupted; the copy is restored", file=sys.stderr)
        return 130

    print()
    print_table(results, sys.stdout)
    s = summary(results)
    errors = [r for r in results if r["result"] == "spec-error"]
    print(f"campaign: {time.monotonic() - began:.0f} s; seeds-to-kill counts the sim's kills only "
          f"(a properties-only kill counts as killed, outside the median)")
    print(s["line"])
    report = {"seeds": a.seeds, "start": a.start, "strategies": a.strategies, "scenarios": bench.scenarios,
              "properties": bench.properties, "mutants": results,
              "summary": {k: v for k, v in s.items() if k != "line"}}
    if a.json:
        import json
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    if a.markdown:
        with open(a.markdown, "w", encoding="utf-8") as f:
            f.write(markdown_table(results))
            f.write(f"\n`{s['line']}`\n")
    if errors:
        for r in errors:
            print(f"mutate.py campaign: spec error: {r['name']} does not compile:\n{r['error']}", file=sys.stderr)
        return EXIT_UNMEASURED
    if s["kill_rate"] < a.min_kill_rate:
        survivors = ", ".join(r["name"] for r in results if r["result"] == "survived")
        print(f"mutate.py campaign: kill rate {s['kill_rate']:.1f}% is below --min-kill-rate "
              f"{a.min_kill_rate:g}% (survivors: {survivors})", file=sys.stderr)
        return EXIT_BELOW_RATE
    return 0


def run_mutant(bench, m, index, count):
    """Applies `m` to the copy, rebuilds, runs every checker and restores the file, whatever
    happens in between."""
    import time
    began = time.monotonic()
    path = os.path.join(bench.src, "runtime", m["file"])
    with open(path, encoding="utf-8") as f:
        original = f.read()
    mutated, _, _, _ = mutate_text(m["spec"], m, original, path)
    result = {"name": m["name"], "protocol": m["protocol"], "bug": m["bug"], "file": m["file"],
              "line": m["line"], "result": "survived", "kills": [], "seeds_to_kill": None}
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(mutated)
        problem = bench.compile()
        if problem:
            result["result"] = "spec-error"
            result["error"] = problem
        else:
            result["kills"] = bench.check()
            if result["kills"]:
                result["result"] = "killed"
                result["seeds_to_kill"] = seeds_to_kill(result["kills"])
    finally:
        # Written anew (a fresh mtime), so the next build recompiles what the mutant touched.
        with open(path, "w", encoding="utf-8") as f:
            f.write(original)
    k = first_killer(result["kills"])
    if result["result"] == "killed":
        at = "no seed" if k["seed"] is None else f"seed {k['seed']}"
        said = f"KILLED by {k['checker']} ({at}; seeds-to-kill {result['seeds_to_kill'] or '-'}): {k['failure']}"
    elif result["result"] == "spec-error":
        said = "SPEC ERROR: does not compile"
    else:
        said = "survived"
    print(f"[{index}/{count}] {m['name']}: {said} ({time.monotonic() - began:.0f} s)", flush=True)
    return result


# ---- the order sweep -------------------------------------------------------------------------

ORDER_TOKEN = re.compile(r"std::memory_order_(acquire|release|acq_rel|seq_cst)\b")
ORDER_SWEEP_FLAGS = ["-std=c++20", "-O2", "-g0", "-w", "-DWEFT_FLAVOR_MODEL=1", "-fno-sized-deallocation"]


def orders_args(argv):
    p = subcommand_parser("orders", "Relaxes each non-relaxed memory order of a production header, one at a "
                                    "time, and says whether its Relacy model rejects the result "
                                    "(docs/models.md).", "the tree to read")
    p.add_argument("--model", required=True, help="a model of models/src/ (NAME for NAME_model.cpp)")
    p.add_argument("--header", required=True, help="the header to sweep, relative to runtime/include")
    p.add_argument("--work", required=True, help="working directory for the copies and programs (created)")
    p.add_argument("--timeout", default="900", help="seconds one model run may take, in [1, 86400]")
    a = p.parse_args(argv)
    try:
        a.timeout = whole("--timeout", a.timeout, 1, 86400)
    except ValueError as e:
        p.error(str(e))
    a.source = os.path.abspath(a.source)
    a.model_source = os.path.join(a.source, "models", "src", a.model + "_model.cpp")
    if not re.fullmatch(r"[a-z_]+", a.model) or not os.path.isfile(a.model_source):
        p.error(f"--model: no model named {a.model!r} ({a.model_source} does not exist)")
    a.header_path = os.path.join(a.source, "runtime", "include", a.header)
    if os.path.isabs(a.header) or ".." in a.header.split("/") or not os.path.isfile(a.header_path):
        p.error(f"--header: {a.header!r} is not a header under {os.path.join(a.source, 'runtime', 'include')}")
    try:
        os.makedirs(a.work, exist_ok=True)
    except OSError as e:
        p.error(f"--work: cannot create {a.work}: {e}")
    return a


def order_sites(lines):
    """(line index, column, token) of every non-relaxed order in the code (comments skipped)."""
    sites = []
    for i, line in enumerate(lines):
        code = line.split("//")[0]
        sites.extend((i, m.start(), m.group(0)) for m in ORDER_TOKEN.finditer(code))
    return sites


def run_model(a, overlay, name, env):
    """'rejected', 'accepted', 'timeout' or 'compile error' for the model built over `overlay`."""
    import subprocess
    exe = os.path.join(a.work, name)
    cxx = env.get("CXX", "clang++").split()
    build = subprocess.run(cxx + ORDER_SWEEP_FLAGS + ["-I" + overlay, "-I" + os.path.join(a.source, "models", "include"),
                                                      "-I" + os.path.join(a.source, "runtime", "include"),
                                                      a.model_source, "-o", exe],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    if build.returncode != 0:
        return "compile error", tail(build.stdout.decode(errors="replace"), 5)
    try:
        run = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=a.work,
                             timeout=a.timeout, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    return ("accepted", "") if run.returncode == 0 else ("rejected", "")


def orders(argv):
    a = orders_args(argv)
    env = toolchain_env(a.source)
    lines = open(a.header_path, encoding="utf-8").read().split("\n")
    stem = re.sub(r"[^a-z0-9]+", "_", a.header.lower())
    # The baseline's overlay is empty: the production header itself is found behind it.
    baseline = os.path.join(a.work, stem + "-baseline")
    os.makedirs(baseline, exist_ok=True)
    verdict, detail = run_model(a, baseline, stem + "-baseline.bin", env)
    if verdict != "accepted":
        print(f"mutate.py orders: the unmutated model {a.model} is {verdict}, not accepted: nothing to measure"
              + (f"\n{detail}" if detail else ""), file=sys.stderr)
        return EXIT_UNMEASURED
    sites = order_sites(lines)
    print(f"| {a.header} line | order relaxed | model `{a.model}` |\n|---|---|---|")
    for k, (i, col, token) in enumerate(sites):
        overlay = os.path.join(a.work, f"{stem}-{k}")
        os.makedirs(os.path.join(overlay, os.path.dirname(a.header)), exist_ok=True)
        mutated = list(lines)
        mutated[i] = mutated[i][:col] + "std::memory_order_relaxed" + mutated[i][col + len(token):]
        with open(os.path.join(overlay, a.header), "w", encoding="utf-8") as f:
            f.write("\n".join(mutated))
        verdict, _ = run_model(a, overlay, f"{stem}-{k}.bin", env)
        statement = lines[i].strip().replace("|", "\\|")
        print(f"| {i + 1} | `{token[len('std::memory_order_'):]}` in `{statement}` | {verdict} |", flush=True)
    return 0


def dispatch(argv):
    if len(argv) < 2:
        fail("usage: mutate.py apply|includers|guard|campaign|orders ... (see the docstring)")
    command, rest = argv[1], argv[2:]
    if command == "campaign":
        sys.exit(campaign(rest))
    if command == "orders":
        sys.exit(orders(rest))
    if command == "apply" and len(rest) == 4:
        apply(*rest)
    elif command == "includers" and len(rest) >= 1:
        includers(rest[0], rest[1:])
    elif command == "guard" and len(rest) >= 3:
        guard(rest[0], rest[1], rest[2], rest[3:])
    else:
        fail(f"bad arguments for {command!r} (see the docstring)")


def main(argv):
    try:
        dispatch(argv)
    except SpecError as e:
        sys.exit(f"mutate.py: error: {e}")


if __name__ == "__main__":
    main(sys.argv)
