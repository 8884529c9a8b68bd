#!/usr/bin/env python3
"""Builds a known-bad twin: the production header with exactly one line mutated.

usage: mutate.py TWIN_FILE RUNTIME_INCLUDE_DIR OUT_DIR STAMP

TWIN_FILE (models/twins/*.twin) names the header (`file:`, relative to RUNTIME_INCLUDE_DIR), the
text to find (`find:`, which must occur exactly once, on one line) and its replacement
(`replace:`, may be empty). When the text occurs more than once, `occurrence:` (1-based) says
which one is meant, and the count must then equal `occurrences:`. The mutated copy is written to OUT_DIR/<file>, keeping every line
number, so Relacy's reports point at the production line that was mutated; the twin's build puts
OUT_DIR ahead of the production include directory. STAMP records what was done (it is the build
system's handle on this step). A `find:` that no longer matches fails the build: the twin must be
updated together with the production line it mutates.
"""
import os
import sys


def parse(path):
    fields = {}
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            sys.exit(f"{path}: not a `key: value` line: {line!r}")
        fields[key.strip()] = value[1:] if value.startswith(" ") else value
    for key in ("model", "expect", "file", "find", "replace"):
        if key not in fields:
            sys.exit(f"{path}: missing `{key}:`")
    return fields


def main():
    twin_file, include_dir, out_dir, stamp = sys.argv[1:5]
    twin = parse(twin_file)
    source = os.path.join(include_dir, twin["file"])
    text = open(source, encoding="utf-8").read()
    count = text.count(twin["find"])
    expected = int(twin.get("occurrences", "1"))
    if count != expected:
        sys.exit(f"{twin_file}: `find:` occurs {count} times in {source} (the twin expects {expected})")
    at = -1
    for _ in range(int(twin.get("occurrence", "1"))):
        at = text.index(twin["find"], at + 1)
    mutated = text[:at] + twin["replace"] + text[at + len(twin["find"]):]
    target = os.path.join(out_dir, twin["file"])
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as out:
        out.write(mutated)
        out.write(f"// KNOWN-BAD TWIN generated from {twin['file']} by {os.path.basename(twin_file)}\n")
    line = text[:at].count("\n") + 1
    with open(stamp, "w", encoding="utf-8") as out:
        out.write(f"// twin {os.path.basename(twin_file)}: {twin['file']}:{line}\n")
        out.write(f"//   - {twin['find']}\n//   + {twin['replace']}\n")


if __name__ == "__main__":
    main()
