#!/usr/bin/env python3
"""Builds one known-bad variant of a runtime file for the simulator's detection-power test.

usage: apply_variant.py VARIANT_FILE RUNTIME_DIR OUT_DIR OUTPUT

VARIANT_FILE (sim/tests/variants/*.variant) names the runtime file (`file:`, relative to
RUNTIME_DIR, e.g. `src/task_cell.cpp` or `include/weft/platform/parker.hpp`), the text to find
(`find:`) and its replacement (`replace:`; may be empty). `\\n` in either stands for a line break,
so a find may span lines. The text must occur exactly once (or `occurrences:` times, with
`occurrence:` saying which one is meant). The other fields (`scenario:`, `seeds:`, `expect:`)
are for the test. A mutated source (`src/...`) is written to OUTPUT, which the build compiles in place of the
production file; a mutated header (`include/...`) is written to OUT_DIR/<file>, which the build
puts ahead of the production include directory, and OUTPUT is then a stamp. Each copy ends with
a trailer naming the variant; lines before the mutation keep their numbers, so failures point at
the production lines. A `find:`
that no longer matches fails the build: the variant must be updated with the code it mutates.
This is models/twins/mutate.py's approach, extended to sources and multi-line finds.
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
    for key in ("file", "find", "replace", "scenario", "seeds", "expect"):
        if key not in fields:
            sys.exit(f"{path}: missing `{key}:`")
    return fields


def main():
    variant_file, runtime_dir, out_dir, output = sys.argv[1:5]
    v = parse(variant_file)
    find = v["find"].replace("\\n", "\n")
    replace = v["replace"].replace("\\n", "\n")
    source = os.path.join(runtime_dir, v["file"])
    text = open(source, encoding="utf-8").read()
    count = text.count(find)
    expected = int(v.get("occurrences", "1"))
    if count != expected:
        sys.exit(f"{variant_file}: `find:` occurs {count} times in {source} (the variant expects {expected})")
    at = -1
    for _ in range(int(v.get("occurrence", "1"))):
        at = text.index(find, at + 1)
    mutated = text[:at] + replace + text[at + len(find):]
    trailer = f"// KNOWN-BAD VARIANT generated from {v['file']} by {os.path.basename(variant_file)}\n"
    if v["file"].startswith("include/"):
        target = os.path.join(out_dir, v["file"])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as out:
            out.write(mutated + trailer)
        line = text[:at].count("\n") + 1
        with open(output, "w", encoding="utf-8") as out:
            out.write(f"// variant {os.path.basename(variant_file)}: {v['file']}:{line} mutated into {target}\n")
    else:
        with open(output, "w", encoding="utf-8") as out:
            out.write(mutated + trailer)


if __name__ == "__main__":
    main()
