#!/usr/bin/env python3
"""Checks the mutation campaign's specs and its command line without building anything.

  check_mutants.py --root DIR

  * every tools/mutants/*.mutant applies to DIR's runtime exactly as it says (`campaign
    --check-specs`), there are at least MUTANTS_MIN of them, every protocol has one, and the
    mutants docs/mutation.md requires by name exist;
  * no mutant duplicates a simulator variant or a Relacy twin (the same file mutated into the
    same text);
  * a stale find, an unknown key, an unknown protocol, an unknown --only name and each bad flag
    are refused with the documented exit status (3 for a spec, 2 for a flag) and a message that
    names the culprit.
Exit status 0 when every check passes, 1 otherwise (each failure printed).
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

MUTANTS_MIN = 28
REQUIRED = ("stop_closes_admission_late", "drain_waits_before_closing", "remote_wake_as_macrotask")
EXIT_USAGE = 2
EXIT_UNMEASURED = 3


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--root", required=True)
    root = pathlib.Path(p.parse_args().root).resolve()
    tool = root / "tools" / "mutate.py"
    sys.path.insert(0, str(root / "tools"))
    import mutate  # the campaign's own parser: the checks below judge what it accepts

    failures = []

    def check(ok, message):
        print(("ok:   " if ok else "FAIL: ") + message)
        if not ok:
            failures.append(message)

    def campaign(*args):
        r = subprocess.run([sys.executable, str(tool), "campaign", *args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        return r.returncode, r.stdout + r.stderr

    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "work")
        status, out = campaign("--source", str(root), "--work", work, "--check-specs")
        check(status == 0, f"--check-specs passes on the tree (exit {status}){'' if status == 0 else ': ' + out}")
        try:
            mutants = mutate.load_mutants(str(root / "tools" / "mutants"), str(root))
        except mutate.SpecError as e:
            mutants = {}
            check(False, f"the mutants load: {e}")
        check(len(mutants) >= MUTANTS_MIN, f"{len(mutants)} mutants, at least {MUTANTS_MIN}")
        missing = [n for n in REQUIRED if n not in mutants]
        check(not missing, f"the required mutants exist (missing: {missing or 'none'})")
        bare = sorted(set(mutate.PROTOCOLS) - {m["protocol"] for m in mutants.values()})
        check(not bare, f"every protocol has a mutant (without one: {bare or 'none'})")

        # Duplicates: a variant or twin that mutates the same file into the same text.
        produced = {}
        specs = [(s, "") for s in sorted((root / "sim" / "tests" / "variants").glob("*.variant"))]
        specs += [(s, "include/") for s in sorted((root / "models" / "twins").glob("*.twin"))]
        for spec, prefix in specs:
            _, fields = mutate.parse(str(spec))
            file = prefix + fields["file"]
            text = (root / "runtime" / file).read_text(encoding="utf-8")
            mutated = mutate.mutate_text(str(spec), fields, text, file)[0]
            produced[(file, mutated)] = spec.name
        for name, m in sorted(mutants.items()):
            text = (root / "runtime" / m["file"]).read_text(encoding="utf-8")
            twin = produced.get((m["file"], mutate.mutate_text(m["spec"], m, text, m["file"])[0]))
            check(twin is None, f"{name} duplicates no variant or twin{'' if twin is None else ' (it is ' + twin + ')'}")

        # Broken specs are refused before anything is built.
        bad_dir = pathlib.Path(tmp) / "bad"
        bad_dir.mkdir()
        good = (root / "tools" / "mutants" / (REQUIRED[0] + ".mutant")).read_text(encoding="utf-8")
        broken = {
            "stale find": (good.replace("find: ", "find: /* gone */ ", 1), "occurs 0 times"),
            "unknown key": (good + "scenario: shutdown_race\n", "unknown key `scenario:`"),
            "unknown protocol": (good.replace("protocol: stop", "protocol: shutdown"), "`protocol: shutdown`"),
            "missing bug": ("\n".join(l for l in good.split("\n") if not l.startswith("bug:")), "missing `bug:`"),
            "file outside the runtime": (good.replace("file: src/runtime.cpp", "file: ../sim/src/cli.cpp"),
                                         "is not under runtime/"),
        }
        for what, (text, expected) in broken.items():
            spec = bad_dir / "broken.mutant"
            spec.write_text(text, encoding="utf-8")
            status, out = campaign("--source", str(root), "--work", work, "--mutants", str(bad_dir), "--check-specs")
            check(status == EXIT_UNMEASURED and expected in out,
                  f"a spec with a {what} is refused (exit {status}, expects {EXIT_UNMEASURED} and {expected!r})")

        # Bad flags: exit 2, the flag named.
        listed = pathlib.Path(tmp) / "twice.list"
        listed.write_text(f"{REQUIRED[0]}\n{REQUIRED[0]}\n", encoding="utf-8")
        bad_flags = [
            (["--seeds", "0"], "--seeds"), (["--seeds", "10000001"], "--seeds"), (["--seeds", "1e3"], "--seeds"),
            (["--start", "-1"], "--start"), (["--jobs", "0"], "--jobs"), (["--jobs", "257"], "--jobs"),
            (["--build-jobs", "65"], "--build-jobs"), (["--timeout", "0"], "--timeout"),
            (["--min-kill-rate", "100.5"], "--min-kill-rate"), (["--min-kill-rate", "-1"], "--min-kill-rate"),
            (["--strategies", "random,random"], "--strategies"), (["--strategies", "dfs"], "--strategies"),
            (["--strategies", ""], "--strategies"), (["--only", "no_such_mutant"], "no_such_mutant"),
            (["--list", os.path.join(tmp, "absent.list")], "--list"), (["--list", str(listed)], "named twice"),
            (["--mutants", os.path.join(tmp, "absent")], "--mutants"),
            (["--json", os.path.join(tmp, "absent", "r.json")], "--json"),
            (["--jobs", "all"], "--jobs"), (["--mirror-build", tmp], "--mirror-build"),
            (["--mirror-build", str(root / "runtime")], "--mirror-build"),
        ]
        for flags, named in bad_flags:
            status, out = campaign("--source", str(root), "--work", work, "--check-specs", *flags)
            check(status == EXIT_USAGE and named in out,
                  f"{' '.join(flags) or repr(flags)} is refused (exit {status}, expects {EXIT_USAGE} naming {named!r})")
        for flags, named in [(["--work", os.path.join(tmp, "no", "such")], "--work"),
                             (["--work", str(root.parent)], "--work"),
                             (["--work", work, "--source", tmp], "--source")]:
            status, out = campaign(*flags, "--check-specs") if "--source" in flags else \
                campaign("--source", str(root), *flags, "--check-specs")
            check(status == EXIT_USAGE and named in out,
                  f"{' '.join(flags)} is refused (exit {status}, expects {EXIT_USAGE} naming {named!r})")

    if failures:
        print(f"check_mutants: {len(failures)} checks failed")
        return 1
    print("check_mutants: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
