#!/usr/bin/env python3
"""weft's one mutation tool: builds known-bad copies of production source for the checkers.

Two kinds of spec share one format (`key: value` lines; `#` starts a comment line):
  * models/twins/*.twin — a Relacy model's known-bad twin: `model:`, `expect:`, and the mutation
    of a header (`file:` relative to runtime/include);
  * sim/tests/variants/*.variant — a known-bad variant of the runtime for the simulator's
    detection-power test: `scenario:`, `seeds:`, `expect:` (optional `fuzz-args:`), and the
    mutation of a header or source (`file:` relative to runtime/, `include/...` or `src/...`).
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
"""
import os
import re
import sys

REQUIRED = {
    ".twin": ("model", "expect", "file", "find", "replace"),
    ".variant": ("scenario", "seeds", "expect", "file", "find", "replace"),
}


def fail(message):
    sys.exit(f"mutate.py: error: {message}")


def parse(path):
    kind = os.path.splitext(path)[1]
    if kind not in REQUIRED:
        fail(f"{path}: unknown spec kind (expected a .twin or a .variant file)")
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
            if key in fields:
                fail(f"{path}:{number}: `{key}:` given twice")
            fields[key] = value[1:] if value.startswith(" ") else value
    for key in REQUIRED[kind]:
        if key not in fields:
            fail(f"{path}: missing `{key}:`")
    return kind, fields


def apply(spec, root, out_dir, output):
    kind, s = parse(spec)
    find = s["find"].replace("\\n", "\n")
    replace = s["replace"].replace("\\n", "\n")
    if not find:
        fail(f"{spec}: `find:` is empty")
    source = os.path.join(root, s["file"])
    try:
        with open(source, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        fail(f"{spec}: cannot read the file it mutates: {e}")
    count = text.count(find)
    expected = int(s.get("occurrences", "1"))
    which = int(s.get("occurrence", "1"))
    if count != expected:
        fail(f"{spec}: `find:` occurs {count} times in {source}, the spec expects {expected} "
             f"(stale after a change to {s['file']}? update the spec with the code it mutates)")
    if not 1 <= which <= count:
        fail(f"{spec}: `occurrence: {which}` is not between 1 and {count}")
    at = -1
    for _ in range(which):
        at = text.index(find, at + 1)
    mutated = text[:at] + replace + text[at + len(find):]
    name = os.path.basename(spec)
    label = "TWIN" if kind == ".twin" else "VARIANT"
    trailer = f"// KNOWN-BAD {label} generated from {s['file']} by {name}\n"
    line = text[:at].count("\n") + 1
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


def main(argv):
    if len(argv) < 2:
        fail("usage: mutate.py apply|includers|guard ... (see the docstring)")
    command, rest = argv[1], argv[2:]
    if command == "apply" and len(rest) == 4:
        apply(*rest)
    elif command == "includers" and len(rest) >= 1:
        includers(rest[0], rest[1:])
    elif command == "guard" and len(rest) >= 3:
        guard(rest[0], rest[1], rest[2], rest[3:])
    else:
        fail(f"bad arguments for {command!r} (see the docstring)")


if __name__ == "__main__":
    main(sys.argv)
