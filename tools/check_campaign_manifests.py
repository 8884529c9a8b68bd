#!/usr/bin/env python3
"""Runs the campaign templates in docs/campaign/ the way their engines would, on this machine.

For each template (a Kubernetes Indexed Job, a GitHub Actions matrix) it takes the fuzz command
line as written, puts in a simulator binary, a scenario and a small seed count, runs it once per
shard index exactly as the engine sets the index (JOB_COMPLETION_INDEX in the environment, or
the matrix value in the text), merges the outputs with the binary's `merge`, and compares the
merged failures with those of the same campaign run unsharded. It also checks that each
template's shard count matches its engine's (`completions`, the matrix list) and that it says
how to merge.

  check_campaign_manifests.py --root DIR --weft-sim BINARY --scenario NAME [--seeds N]

BINARY should fail SCENARIO on some seeds (a known-bad variant), so that there is something to
merge. Exits 1 with a message on any difference.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

SHARDS = 4  # the test runs every template with this many shards


def fail(msg):
    print(f"check_campaign_manifests: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def fuzz_line(path):
    """The template's shell command that runs the fuzz, and the template's text."""
    text = open(path).read()
    lines = [l for l in text.splitlines() if " fuzz --scenario " in l and not l.lstrip().startswith("#")]
    if len(lines) != 1:
        fail(f"{path}: expected one fuzz command line, found {len(lines)}")
    cmd = re.sub(r"^\s*-\s*(run:\s*)?", "", lines[0])
    return cmd, text


def adapt(cmd, binary, scenario, seeds, results):
    """The template's command with this machine's binary, scenario, seed count and shard count."""
    cmd = re.sub(r"(^|;\s*)(\./)?my-sim ", lambda m: f"{m.group(1)}{binary} ", cmd)
    cmd = cmd.replace("my_scenario", scenario)
    cmd, n = re.subn(r"--seeds \d+", f"--seeds {seeds}", cmd)
    if n != 1:
        fail(f"no --seeds in: {cmd}")
    cmd, n = re.subn(r'(--shard "[^"/]+)/(\d+)"', rf'\1/{SHARDS}"', cmd)
    if n != 1:
        fail(f"no --shard \"INDEX/N\" in: {cmd}")
    return cmd.replace("/results/", results + "/")


def shard_count(cmd):
    return int(re.search(r'--shard "[^"/]+/(\d+)"', cmd).group(1))


def run_shards(template, cmd, work):
    files = []
    for i in range(SHARDS):
        env = dict(os.environ)
        line = cmd
        if "${JOB_COMPLETION_INDEX}" in line:
            env["JOB_COMPLETION_INDEX"] = str(i)  # what Kubernetes sets in an Indexed Job's pod
        line = line.replace("${{ matrix.shard }}", str(i))  # what Actions substitutes
        r = subprocess.run(["/bin/sh", "-c", line], cwd=work, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{template}: shard {i}: the command failed ({r.returncode}): {r.stderr.strip()}\n  {line}")
        out = os.path.join(work, f"shard-{i}.jsonl")
        if not os.path.isfile(out):
            fail(f"{template}: shard {i} wrote no shard-{i}.jsonl")
        files.append(out)
    return files


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--weft-sim", required=True)
    p.add_argument("--scenario", required=True)
    p.add_argument("--seeds", type=int, default=400)
    a = p.parse_args()
    binary = os.path.abspath(a.weft_sim)

    whole = subprocess.run([binary, "fuzz", "--scenario", a.scenario, "--seeds", str(a.seeds), "--max-failures", "0",
                            "--json"], capture_output=True, text=True)
    if whole.returncode not in (0, 1):
        fail(f"the unsharded campaign failed to run: {whole.stderr.strip()}")
    expected = [json.loads(l) for l in whole.stdout.splitlines() if l.strip()][:-1]
    if not expected:
        fail(f"{a.scenario} fails no seed of {a.seeds}: nothing to merge; pick a failing variant")

    templates = {
        "kubernetes-job.yaml": lambda text: int(re.search(r"completions:\s*(\d+)", text).group(1)),
        "github-actions.yml": lambda text: len(re.search(r"shard:\s*\[([^\]]*)\]", text).group(1).split(",")),
    }
    for name, engine_count in templates.items():
        path = os.path.join(a.root, "docs", "campaign", name)
        cmd, text = fuzz_line(path)
        if engine_count(text) != shard_count(cmd):
            fail(f"{name}: the engine runs {engine_count(text)} shards, the command says /{shard_count(cmd)}")
        if " merge " not in text:
            fail(f"{name}: does not say how to merge the shards")
        with tempfile.TemporaryDirectory() as work:
            files = run_shards(name, adapt(cmd, binary, a.scenario, a.seeds, work), work)
            merged = subprocess.run([binary, "merge", "--json"] + files, capture_output=True, text=True)
            if merged.returncode != 1:
                fail(f"{name}: merge returned {merged.returncode}: {merged.stderr.strip()}")
            got = json.loads(merged.stdout)["failures"]
        want = [{"seed": f["seed"], "why": f["why"], "replay": f["replay"]} for f in expected]
        if got != want:
            fail(f"{name}: the merged shards differ from the unsharded campaign ({len(got)} vs {len(want)} failures)")
        print(f"check_campaign_manifests: {name}: {SHARDS} shards as the engine runs them merge into the "
              f"unsharded campaign's {len(want)} failures")


if __name__ == "__main__":
    main()
