#!/usr/bin/env python3
"""Checks the claims in the reference docs that a script can verify against the tree.

  check_doc_claims.py --root DIR [--weft-sim PATH]               check the docs of DIR
  check_doc_claims.py --root DIR [--weft-sim PATH] --known-bad   show every check can fail

The claims, each read from its source of truth:
  flavors      the default of the `flavors` option (meson_options.txt) is the list docs/seam.md
               and README.md give after "by default:" in a sentence naming `flavors`;
  models       the Relacy models and twins of models/meson.build are the `###` sections, the
               twin table and the "N models + M twins" count of docs/models.md, and the names in
               README.md's Models status line;
  fault kinds  the enumerators of platform::fault (runtime/include/weft/platform/fault.hpp) are
               the rows of docs/simulator.md's fault table and the kinds docs/seam.md lists, and
               seam.md's count of placed points is the number of WEFT_FAULT_POINT uses;
  scenarios    the scenarios `weft-sim list` prints are the rows of docs/simulator.md's scenario
               tables. Needs the weft-sim executable (the sim flavor); without it this check is
               reported SKIPPED and the others still run.

--known-bad copies the files the checks read into a temporary directory, makes one claim false
in the copy per check, and passes only when the unchanged copy passes and every mutated copy
fails the check it targets: a checker that cannot fail proves nothing. Exit status 0 when all
ran checks pass, 1 otherwise.
"""

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

NUMBER_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine',
                'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen',
                'seventeen', 'eighteen', 'nineteen', 'twenty']

# The files the checks read (relative to the root); --known-bad copies exactly these.
INPUTS = ['meson_options.txt', 'README.md', 'models/meson.build', 'docs/seam.md', 'docs/models.md',
          'docs/simulator.md', 'runtime/include/weft/platform/fault.hpp']
FAULT_POINT_TREES = ['runtime/src', 'runtime/include']


class ClaimError(Exception):
    """A doc claim that disagrees with the tree, or a claim the docs no longer make."""


def read(root, rel):
    return (root / rel).read_text(encoding='utf-8')


def meson_list(text, name, where):
    """The string items of `name = [...]` (or of option `name`'s value) in a meson file."""
    m = re.search(r"^%s\s*=\s*\[(.*?)\]" % re.escape(name), text, re.S | re.M)
    if m is None:
        m = re.search(r"option\('%s'.*?value:\s*\[(.*?)\]" % re.escape(name), text, re.S)
    if m is None:
        raise ClaimError('%s: no list `%s`' % (where, name))
    return re.findall(r"'([^']*)'", m.group(1))


def backticked(text):
    return re.findall(r'`([^`]+)`', text)


def compare(what, documented, actual):
    """Raises unless the two collections hold the same names."""
    missing = sorted(set(actual) - set(documented))
    extra = sorted(set(documented) - set(actual))
    if missing or extra:
        parts = []
        if missing:
            parts.append('not documented: ' + ', '.join(missing))
        if extra:
            parts.append('documented but absent: ' + ', '.join(extra))
        raise ClaimError('%s: %s' % (what, '; '.join(parts)))


def table_rows(text, heading_pattern):
    """First-column names (`name`) of the tables under every `##` heading matching the pattern."""
    names = []
    sections = re.split(r'^(?=## )', text, flags=re.M)
    for section in sections:
        first_line = section.split('\n', 1)[0]
        if re.match(heading_pattern, first_line):
            names += re.findall(r'^\|\s*`([^`]+)`\s*\|', section, re.M)
    return names


def check_flavors(root, _weft_sim):
    default = meson_list(read(root, 'meson_options.txt'), 'flavors', 'meson_options.txt')
    found = 0
    for rel in ['docs/seam.md', 'README.md']:
        text = read(root, rel)
        # Only a list in the same sentence as the option's name: other defaults share the words.
        for m in re.finditer(r'`flavors`[^.]*?by default:\s*((?:`[^`]+`(?:,\s*|\s+and\s+)?)+)', text):
            found += 1
            compare('%s: default flavors' % rel, backticked(m.group(1)), default)
    if found == 0:
        raise ClaimError('docs/seam.md: no "`flavors` ... by default: `...`" list of the default flavors')
    return 'default flavors %s (%d doc statement(s))' % (', '.join(default), found)


def check_models(root, _weft_sim):
    build = read(root, 'models/meson.build')
    models = meson_list(build, 'models', 'models/meson.build')
    twins = meson_list(build, 'twins', 'models/meson.build')
    doc = read(root, 'docs/models.md')
    compare('docs/models.md: model sections', re.findall(r'^### `([^`]+)`', doc, re.M), models)
    compare('docs/models.md: twin table', table_rows(doc, r'## Known-bad twins'), twins)
    counts = re.findall(r'(\d+) models \+ (\d+) twins', doc)
    if not counts:
        raise ClaimError('docs/models.md: no "N models + M twins" count')
    for n_models, n_twins in counts:
        if (int(n_models), int(n_twins)) != (len(models), len(twins)):
            raise ClaimError('docs/models.md: says %s models + %s twins, models/meson.build builds '
                             '%d + %d' % (n_models, n_twins, len(models), len(twins)))
    readme = read(root, 'README.md')
    m = re.search(r'^- \*\*Models:\*\*(.*?)(?=^- \*\*|^#|\Z)', readme, re.S | re.M)
    if m is None:
        raise ClaimError('README.md: no "- **Models:**" status line')
    compare('README.md: Models status line', backticked(m.group(1)), models)
    return '%d models, %d twins' % (len(models), len(twins))


def fault_kinds(root):
    header = read(root, 'runtime/include/weft/platform/fault.hpp')
    m = re.search(r'enum class fault\b[^{]*\{(.*?)\};', header, re.S)
    if m is None:
        raise ClaimError('fault.hpp: no `enum class fault`')
    body = re.sub(r'//[^\n]*', '', m.group(1))
    kinds = [k.strip() for k in body.split(',') if k.strip()]
    return [k for k in kinds if k != 'count_']


def fault_point_uses(root):
    count = 0
    for rel in FAULT_POINT_TREES:
        for path in sorted((root / rel).rglob('*')):
            if path.suffix not in ('.hpp', '.cpp') or path.name == 'fault.hpp':
                continue
            count += len(re.findall(r'\bWEFT_FAULT_POINT\(', path.read_text(encoding='utf-8')))
    return count


def check_fault_kinds(root, _weft_sim):
    kinds = fault_kinds(root)
    sim_doc = read(root, 'docs/simulator.md')
    m = re.search(r'\*\*Faults\.\*\*(.*?)(?=^- \*\*|^## |\Z)', sim_doc, re.S | re.M)
    if m is None:
        raise ClaimError('docs/simulator.md: no **Faults.** paragraph')
    rows = re.findall(r'^\s*\|\s*`([^`]+)`\s*\|', m.group(1), re.M)
    compare('docs/simulator.md: fault table', rows, kinds)
    seam = read(root, 'docs/seam.md')
    m = re.search(r'The kinds \(`platform::fault`\) are:(.*?)\.(?:\s|$)', seam, re.S)
    if m is None:
        raise ClaimError('docs/seam.md: no "The kinds (`platform::fault`) are: ..." list')
    compare('docs/seam.md: fault kinds', backticked(m.group(1)), kinds)
    uses = fault_point_uses(root)
    m = re.search(r'\b(%s) points are placed' % '|'.join(NUMBER_WORDS), seam, re.I)
    if m is None:
        raise ClaimError('docs/seam.md: no "<number> points are placed" count')
    word = m.group(1).lower()
    if NUMBER_WORDS.index(word) != uses:
        raise ClaimError('docs/seam.md: says "%s points are placed", the runtime has %d '
                         'WEFT_FAULT_POINT uses' % (m.group(1), uses))
    return '%d kinds, %d points' % (len(kinds), uses)


def check_scenarios(root, weft_sim):
    if weft_sim is None:
        return None  # reported as skipped by the caller
    out = subprocess.run([weft_sim, 'list'], check=True, capture_output=True, text=True).stdout
    # Scenario lines start at column 0; the knob lines under each are indented.
    listed = [line.split()[0] for line in out.splitlines() if line.strip() and not line[0].isspace()]
    if not listed:
        raise ClaimError('weft-sim list printed no scenario')
    documented = table_rows(read(root, 'docs/simulator.md'), r'## Scenarios\b')
    compare('docs/simulator.md: scenario tables vs `weft-sim list`', documented, listed)
    return '%d scenarios' % len(listed)


CHECKS = [('flavors', check_flavors), ('models', check_models), ('fault kinds', check_fault_kinds),
          ('scenarios', check_scenarios)]


def run_checks(root, weft_sim, quiet=False):
    """Runs every check; returns the names of the failed ones."""
    failed = []
    for name, check in CHECKS:
        try:
            summary = check(root, weft_sim)
        except (ClaimError, OSError, subprocess.CalledProcessError) as e:
            failed.append(name)
            if not quiet:
                print('FAIL %s: %s' % (name, e))
            continue
        if quiet:
            continue
        if summary is None:
            print('SKIPPED %s: no weft-sim given (the sim flavor is not built)' % name)
        else:
            print('ok %s: %s' % (name, summary))
    return failed


def sub_once(pattern, repl, text, where, flags=0):
    new, n = re.subn(pattern, repl, text, count=1, flags=flags)
    if n != 1:
        raise ClaimError('known-bad: cannot make the claim false in %s (pattern %r not found)'
                         % (where, pattern))
    return new


def mutate(root, rel, pattern, repl, flags=0):
    path = root / rel
    path.write_text(sub_once(pattern, repl, path.read_text(encoding='utf-8'), rel, flags),
                    encoding='utf-8')


def next_number_word(m):
    word = m.group(1).lower()
    return NUMBER_WORDS[(NUMBER_WORDS.index(word) + 1) % len(NUMBER_WORDS)] + ' points are placed'


# One false claim per check: (the check that must catch it, what is changed, the change).
MUTATIONS = [
    ('flavors', 'seam.md lists one default flavor too few',
     lambda r: mutate(r, 'docs/seam.md', r'(`flavors`[^.]*?by default:\s*`[^`]+`(?:,\s*`[^`]+`)*?),\s*`[^`]+`', r'\1')),
    ('models', 'models.md loses a model section',
     lambda r: mutate(r, 'docs/models.md', r'^### `([^`]+)`', r'### \1', re.M)),
    ('models', 'README names a model that is not built',
     lambda r: mutate(r, 'README.md', r'^(- \*\*Models:\*\*[^`]*)`', r'\1`no_such_model`, `', re.M)),
    ('models', 'models.md miscounts the twins',
     lambda r: mutate(r, 'docs/models.md', r'(\d+) twins', lambda m: '%d twins' % (int(m.group(1)) + 1))),
    ('fault kinds', 'simulator.md loses a fault row',
     lambda r: mutate(r, 'docs/simulator.md', r'^\s*\| `spurious_wake` \|[^\n]*\n', '', re.M)),
    ('fault kinds', 'seam.md miscounts the placed points',
     lambda r: mutate(r, 'docs/seam.md', r'\b(%s) points are placed' % '|'.join(NUMBER_WORDS), next_number_word,
                      re.I)),
    ('scenarios', 'simulator.md loses a scenario row',
     lambda r: mutate(r, 'docs/simulator.md', r'(^## Scenarios[^\n]*\n(?:[^\n]*\n)*?)\| `[^`]+` \|[^\n]*\n', r'\1',
                      re.M)),
]


def copy_inputs(root, dest):
    for rel in INPUTS:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, dest / rel)
    for rel in FAULT_POINT_TREES:
        shutil.copytree(root / rel, dest / rel, dirs_exist_ok=True)


def known_bad(root, weft_sim):
    ok = True
    with tempfile.TemporaryDirectory(prefix='check-doc-claims-') as tmp:
        base = pathlib.Path(tmp) / 'clean'
        copy_inputs(root, base)
        if run_checks(base, weft_sim, quiet=True):
            print('FAIL known-bad: the unchanged copy already fails; run without --known-bad')
            return False
        for i, (target, what, apply) in enumerate(MUTATIONS):
            if target == 'scenarios' and weft_sim is None:
                print('SKIPPED known-bad %s (%s): no weft-sim given' % (target, what))
                continue
            copy = pathlib.Path(tmp) / ('mutation-%d' % i)
            shutil.copytree(base, copy)
            try:
                apply(copy)
            except ClaimError as e:
                print('FAIL known-bad %s: %s' % (target, e))
                ok = False
                continue
            failed = run_checks(copy, weft_sim, quiet=True)
            if target in failed:
                print('ok known-bad %s: caught (%s)' % (target, what))
            else:
                print('FAIL known-bad %s: not caught (%s)' % (target, what))
                ok = False
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--root', required=True, type=pathlib.Path, help='the repository root')
    parser.add_argument('--weft-sim', help='the weft-sim executable (enables the scenario check)')
    parser.add_argument('--known-bad', action='store_true',
                        help='show that each check fails on a copy with one claim made false')
    args = parser.parse_args()
    if args.known_bad:
        return 0 if known_bad(args.root, args.weft_sim) else 1
    return 1 if run_checks(args.root, args.weft_sim) else 0


if __name__ == '__main__':
    sys.exit(main())
