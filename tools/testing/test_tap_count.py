#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of tap-count (the counting rules of run-all), as TAP."""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
results = []


def count(text, *args):
    """Runs tap-count on TEXT; returns (lines, (passed, failed, skipped))."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run([sys.executable, os.path.join(HERE, "tap-count"),
                              "--label", "t", *args, f.name],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    lines = out.splitlines()
    last = lines[-1].split()
    assert last[0] == "COUNTS", out
    return lines[:-1], tuple(int(x) for x in last[1:])


def check(name, got, want):
    results.append((got == want, name, got, want))


FLAT = """make[1]: Entering directory
1..4
ok 1 - first
not ok 2 - second
ok 3 # SKIP no device
ok 4
   ok 5 indented lines are not top-level points
# ok 6 neither are comments
"""
check("flat counts ok/not ok/skip", count(FLAT)[1], (2, 1, 1))
check("flat: a skip is never a pass",
      count("ok 1 # skip later\n")[1], (0, 0, 1))
check("flat: non-zero status without failures is one failure",
      count("ok 1 - a\n", "--rc", "2")[1], (1, 1, 0))
check("flat: non-zero status explained by a failure adds nothing",
      count("not ok 1 - a\n", "--rc", "1")[1], (0, 1, 0))
check("flat: ok without a number is not a TAP point",
      count("ok\nok 1 - a\n")[1], (1, 0, 0))
check("flat: not ok with SKIP is a failure",
      count("not ok 1 - a # SKIP no\n")[1], (0, 1, 0))

UNITTEST = """test_a (m.T.test_a) ... ok
test_b (m.T.test_b)
A docstring. ... FAIL
test_c (m.T.test_c) ... skipped 'no net'
test_d (m.T.test_d) ... ERROR
"""
lines, counts = count(UNITTEST + """test_e (m.T.test_e) ... /x.py: Warning
  warn()
ok
ok
""")
check("unittest -v results count, also when warnings split a line",
      counts, (2, 2, 1))
check("a bare ok after a warning is test_e's, and only counted once",
      [l for l in lines if "test_e" in l], ["PASS  t: test_e"])
check("unittest docstring result takes the test's name",
      any("test_b" in l and l.startswith("FAIL") for l in lines), True)

HARNESS = """# selftests: onepipe: s1
# TAP version 13
# 1..2
# #  RUN           fab.round_trip ...
# ok 1 # SKIP no host
# ok 2 fab.x
# onepipe-suite: name=s1 rc=0 secs=1 kernel=clean
ok 1 selftests: onepipe: s1
"""
lines, counts = count(HARNESS, "--vm", "--expect-suites", "s1")
check("vm: nested points counted", counts, (1, 0, 1))
check("vm: a skip without description is named after its RUN line",
      any("fab.round_trip" in l for l in lines if l.startswith("SKIP")), True)

MISSING = """# selftests: onepipe: s1
# 1..3
# ok 1 - a
# onepipe-suite: name=s1 rc=0 secs=1 kernel=clean
"""
check("vm: planned points never reported fail",
      count(MISSING, "--vm")[1], (1, 2, 0))
TIMEOUT = """# selftests: onepipe: s1
# 1..1
# ok 1 - a
# onepipe-suite: name=s1 rc=124 secs=1 kernel=clean
"""
check("vm: a suite that timed out fails once",
      count(TIMEOUT, "--vm")[1], (1, 1, 0))
CRASH = """# selftests: onepipe: s1
# 1..1
# ok 1 - a
# onepipe-suite: name=s1 rc=139 secs=1 kernel=clean
"""
check("vm: a suite that crashed fails once",
      count(CRASH, "--vm")[1], (1, 1, 0))
WARN = """# selftests: onepipe: s1
# 1..1
# ok 1 - a
# onepipe-suite: name=s1 rc=0 secs=1 kernel=warn
"""
check("vm: kernel warnings during a suite fail it",
      count(WARN, "--vm")[1], (1, 1, 0))
check("vm: a suite that never ran fails",
      count(HARNESS, "--vm", "--expect-suites", "s1,s2")[1], (1, 1, 1))
check("vm: status 99 (kernel warnings) is a failure",
      count(HARNESS, "--vm", "--rc", "99")[1], (1, 1, 1))
check("vm: status 1 with failing points adds nothing",
      count(HARNESS.replace("# ok 2 fab.x", "# not ok 2 fab.x"), "--vm",
            "--rc", "1")[1], (0, 1, 1))
check("vm: output that ends mid-suite fails",
      count("# selftests: onepipe: s1\n# 1..1\n# ok 1 - a\n", "--vm",
            "--rc", "124")[1], (1, 2, 0))

SKIPPED_SUITE = """# selftests: onepipe: s1
# 1..0 # SKIP no Soft-RoCE here
# onepipe-suite: name=s1 rc=4 secs=1 kernel=clean
ok 1 selftests: onepipe: s1 # SKIP
"""
check("vm: a suite that cannot run (1..0, SKIP directive, status 4) is one "
      "skip",
      count(SKIPPED_SUITE, "--vm", "--expect-suites", "s1")[1], (0, 0, 1))
check("vm: 1..0 with a SKIP directive and a failing status still fails",
      count(SKIPPED_SUITE.replace("rc=4", "rc=1"), "--vm")[1], (0, 1, 0))
check("vm: 1..0 without SKIP and status 4 fails",
      count(SKIPPED_SUITE.replace(" # SKIP no Soft-RoCE here", ""),
            "--vm")[1], (0, 1, 0))

# A '#' in a name would read as a TAP directive (SKIP, TODO) to run-all.
assert not any("#" in name for _, name, _, _ in results)
print("TAP version 13")
print("1..%d" % len(results))
failed = 0
for i, (ok, name, got, want) in enumerate(results, 1):
    print("%sok %d - %s" % ("" if ok else "not ", i, name))
    if not ok:
        failed += 1
        print("#   got %r, want %r" % (got, want))
sys.exit(1 if failed else 0)
