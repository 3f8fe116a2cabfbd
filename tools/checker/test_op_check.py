#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Self-test of op-check: synthetic logs that break each guarantee.

Every test writes the logs of a small run, runs op-check on them as a
user would (a subprocess, --json) and asserts which checks fail.  The base
run passes every check; each variant changes it minimally to break one
guarantee and must make that check fail.

    python3 tools/checker/test_op_check.py      (or make -C tools/checker check)
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
OP_CHECK = os.path.join(HERE, "op-check")
TS_MOD = 1 << 48

# Four processes, host:port 1:1 (A), 2:1 (B), 3:1 (C), 4:1 (D).
#   A sends scat 0 (ts 100) to B, C, D; B sends scat 0 (ts 200) to A, C, D;
#   after delivering B's message, A sends scat 1 (ts 300) to B.
BASE = {
    "a": ["P 1 1",
          "S 100 0 2:1,3:1,4:1",
          "R 200 2:1 0 0 64 50",
          "S 300 1 2:1"],
    "b": ["P 2 1",
          "R 100 1:1 0 0 64 50",
          "S 200 0 1:1,3:1,4:1",
          "R 300 1:1 1 0 64 50"],
    "c": ["P 3 1",
          "R 100 1:1 0 1 64 50",
          "R 200 2:1 0 1 64 50"],
    "d": ["P 4 1",
          "R 100 1:1 0 2 64 50",
          "R 200 2:1 0 2 64 50"],
}


def variant(**changes):
    logs = {k: list(v) for k, v in BASE.items()}
    logs.update(changes)
    return logs


def replace(name, old, new):
    lines = [new if line == old else line for line in BASE[name]]
    assert lines != BASE[name], "no line %r in %s" % (old, name)
    return lines


class OpCheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def run_check(self, logs, *opts, expect_rc=None):
        d = self.tmp.name
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        for name, lines in logs.items():
            with open(os.path.join(d, name + ".log"), "w") as fh:
                fh.write("\n".join(lines) + "\n")
        p = subprocess.run([sys.executable, OP_CHECK, "--json", *opts, d],
                           capture_output=True, text=True)
        if expect_rc is not None:
            self.assertEqual(p.returncode, expect_rc, p.stdout + p.stderr)
        if p.returncode == 2:
            return None, p
        doc = json.loads(p.stdout)
        failed = {k for k, c in doc["checks"].items() if not c["pass"]}
        self.assertEqual(p.returncode, 1 if failed else 0)
        self.assertEqual(doc["result"], "FAIL" if failed else "PASS")
        return doc, failed

    def assert_fails(self, logs, check, *opts, only=True):
        doc, failed = self.run_check(logs, *opts, expect_rc=1)
        self.assertIn(check, failed)
        if only:
            self.assertEqual(failed, {check})
        self.assertTrue(doc["checks"][check]["examples"])
        return doc

    # --- the passing run ----------------------------------------------

    def test_base_passes(self):
        doc, failed = self.run_check(BASE, "--expect-all",
                                     "--require-notified",
                                     "--min-delivered-ratio", "1",
                                     expect_rc=0)
        self.assertEqual(failed, set())
        acc = doc["checks"]["accounting"]["stats"]
        self.assertEqual(acc["sent"], 7)
        self.assertEqual(acc["delivered"], 7)
        agree = doc["checks"]["agreement"]["stats"]
        self.assertEqual(agree["shared_scatterings"], 6)
        self.assertEqual(agree["multi_receiver_scatterings"], 2)

    def test_human_output(self):
        d = self.tmp.name
        for name, lines in BASE.items():
            with open(os.path.join(d, name + ".log"), "w") as fh:
                fh.write("\n".join(lines) + "\n")
        p = subprocess.run([sys.executable, OP_CHECK, d],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("order", "scattering", "causality", "integrity",
                     "agreement", "accounting"):
            self.assertRegex(p.stdout, r"\n  %s +PASS" % name)
        self.assertTrue(p.stdout.rstrip().endswith("op-check: PASS"))

    # --- (a) order -------------------------------------------------------

    def test_order(self):
        c = ["P 3 1", "R 200 2:1 0 1 64 50", "R 100 1:1 0 1 64 50"]
        doc = self.assert_fails(variant(c=c), "order", only=False)
        self.assertIn("c.log:3", doc["checks"]["order"]["examples"][0])

    def test_order_tie_broken_by_sender(self):
        # Same ts from two senders: host 1 must come before host 2.
        logs = variant(
            a=["P 1 1", "S 100 0 3:1"], b=["P 2 1", "S 100 0 3:1"],
            c=["P 3 1", "R 100 2:1 0 0 64 1", "R 100 1:1 0 0 64 1"],
            d=["P 4 1"])
        self.assert_fails(logs, "order")
        logs["c"] = ["P 3 1", "R 100 1:1 0 0 64 1", "R 100 2:1 0 0 64 1"]
        self.run_check(logs, expect_rc=0)

    # --- (b) scattering ---------------------------------------------------

    def test_scattering(self):
        d = replace("d", "R 100 1:1 0 2 64 50", "R 101 1:1 0 2 64 50")
        self.assert_fails(variant(d=d), "scattering")

    def test_scattering_notification_ts(self):
        # B lost A's scat 1 and A was told so, with the wrong ts.
        a = BASE["a"] + ["E 299 2:1 1 0 110 1"]
        self.assert_fails(variant(a=a, b=BASE["b"][:3]), "scattering")

    # --- (c) causality ----------------------------------------------------

    def test_causality(self):
        # A sends scat 1 below the ts 200 it has already delivered.
        a = replace("a", "S 300 1 2:1", "S 150 1 2:1")
        b = replace("b", "R 300 1:1 1 0 64 50", "R 150 1:1 1 0 64 50")
        self.assert_fails(variant(a=a, b=b), "causality")

    def test_causality_equal_ts(self):
        a = replace("a", "S 300 1 2:1", "S 200 1 2:1")
        b = replace("b", "R 300 1:1 1 0 64 50", "R 200 1:1 1 0 64 50")
        self.assert_fails(variant(a=a, b=b), "causality")

    # --- (d) integrity ----------------------------------------------------

    def test_duplicate(self):
        b = BASE["b"] + ["R 300 1:1 1 0 64 50"]
        self.assert_fails(variant(b=b), "integrity")

    def test_phantom_scattering(self):
        c = BASE["c"] + ["R 250 1:1 7 0 64 50"]
        self.assert_fails(variant(c=c), "integrity")

    def test_phantom_index(self):
        c = BASE["c"] + ["R 300 1:1 1 5 64 50"]
        self.assert_fails(variant(c=c), "integrity")

    def test_misdelivered(self):
        # A's scat 1 went to B, but C delivers it (and B does not).
        b = BASE["b"][:3]
        c = BASE["c"] + ["R 300 1:1 1 0 64 50"]
        self.assert_fails(variant(b=b, c=c), "integrity")

    def test_unlogged_sender(self):
        c = BASE["c"] + ["R 250 9:1 0 0 64 50"]
        self.assert_fails(variant(c=c), "integrity")
        self.run_check(variant(c=c), "--ignore-unknown-senders",
                       expect_rc=0)

    def test_x_line(self):
        c = BASE["c"] + ["X 1:1 bad-filler"]
        self.assert_fails(variant(c=c), "integrity")

    # --- (e) agreement ----------------------------------------------------

    def test_agreement(self):
        # D delivers the two scatterings the other way round from C.
        d = ["P 4 1", "R 200 2:1 0 2 64 50", "R 100 1:1 0 2 64 50"]
        doc = self.assert_fails(variant(d=d), "agreement", only=False)
        ex = doc["checks"]["agreement"]["examples"][0]
        self.assertIn("c.log", ex)
        self.assertIn("d.log", ex)

    def test_agreement_ignores_unshared(self):
        # A and C share nothing but B's scat 0: no order to compare.
        logs = variant(
            a=["P 1 1", "S 100 0 3:1"],
            b=["P 2 1", "S 200 0 3:1,4:1"],
            c=["P 3 1", "R 100 1:1 0 0 64 1", "R 200 2:1 0 0 64 1"],
            d=["P 4 1", "R 200 2:1 0 1 64 1"])
        self.run_check(logs, expect_rc=0)

    # --- (f) accounting ---------------------------------------------------

    def test_lost(self):
        d = BASE["d"][:2]  # B's message to D never arrives
        logs = variant(d=d)
        doc, failed = self.run_check(logs, expect_rc=0)
        self.assertEqual(doc["checks"]["accounting"]["stats"]["lost"], 1)
        self.assert_fails(logs, "accounting", "--expect-all")
        self.assert_fails(logs, "accounting", "--require-notified")
        self.assert_fails(logs, "accounting", "--min-delivered-ratio",
                          "0.9")
        self.run_check(logs, "--min-delivered-ratio", "0.8", expect_rc=0)

    def test_failed_notified(self):
        d = BASE["d"][:2]
        b = BASE["b"] + ["E 200 4:1 0 2 110 1"]
        logs = variant(b=b, d=d)
        doc, _ = self.run_check(logs, "--require-notified", expect_rc=0)
        st = doc["checks"]["accounting"]["stats"]
        self.assertEqual((st["failed"], st["lost"]), (1, 0))
        self.assert_fails(logs, "accounting", "--expect-all")

    def test_delivered_and_notified_allowed(self):
        b = BASE["b"] + ["E 200 4:1 0 2 110 1"]
        doc, _ = self.run_check(variant(b=b), "--require-notified",
                                expect_rc=0)
        acc = doc["checks"]["accounting"]
        self.assertEqual(acc["stats"]["delivered_and_notified"], 1)
        self.assertTrue(acc["notes"])

    def test_notification_for_unsent(self):
        b = BASE["b"] + ["E 200 4:1 5 0 110 1"]
        self.assert_fails(variant(b=b), "accounting")

    def test_notification_wrong_destination(self):
        b = BASE["b"] + ["E 200 3:1 0 2 110 1"]  # idx 2 went to 4:1
        self.assert_fails(variant(b=b), "accounting")

    # --- logs and timestamps ----------------------------------------------

    def test_malformed_log(self):
        c = BASE["c"] + ["R 100 1:1 zero 1 64 50"]
        _, p = self.run_check(variant(c=c), expect_rc=2)
        self.assertIn("c.log:4", p.stderr)
        _, p = self.run_check(variant(c=["R 100 1:1 0 1 64 50"]),
                              expect_rc=2)
        self.assertIn("P line", p.stderr)

    def test_wraparound(self):
        # ts 2^48 - 50 is before ts 50: the clock wrapped between them.
        top = TS_MOD - 50
        logs = {
            "a": ["P 1 1", "S %d 0 3:1" % top],
            "b": ["P 2 1", "S 50 0 3:1"],
            "c": ["P 3 1", "R %d 1:1 0 0 64 1" % top, "R 50 2:1 0 0 64 1"],
        }
        self.run_check(logs, "--expect-all", expect_rc=0)
        logs["c"] = ["P 3 1", "R 50 2:1 0 0 64 1", "R %d 1:1 0 0 64 1" % top]
        self.assert_fails(logs, "order")

    def test_check_subset(self):
        c = ["P 3 1", "R 200 2:1 0 1 64 50", "R 100 1:1 0 1 64 50"]
        doc, failed = self.run_check(variant(c=c), "--checks",
                                     "integrity,accounting", expect_rc=0)
        self.assertEqual(set(doc["checks"]), {"integrity", "accounting"})
        self.assertIn("order", doc["not_checked"])
        _, p = self.run_check(BASE, "--checks", "ordre", expect_rc=2)

    def test_udp_style_logs(self):
        # --udp logs: dotted hosts and 64-bit send times as ts.
        t = 1700000000 * 10 ** 9
        logs = {
            "a": ["P 10.0.0.1 7", "S %d 0 10.0.0.2:7" % t],
            "b": ["P 10.0.0.2 7", "R %d 10.0.0.1:7 0 0 64 9" % t],
        }
        self.run_check(logs, "--expect-all", expect_rc=0)

    def test_random_consistent_run(self):
        """A bigger simulated run that keeps every guarantee passes."""
        logs = simulate(procs=8, scatterings=60, fanout=3, seed=7)
        doc, failed = self.run_check(logs, "--expect-all", expect_rc=0)
        self.assertEqual(doc["checks"]["accounting"]["stats"]["sent"],
                         8 * 60 * 3)
        # ...and swapping two deliveries of one receiver is caught.
        name = "p3"
        lines = logs[name]
        rs = [i for i, line in enumerate(lines) if line.startswith("R ")]
        i, j = rs[5], rs[6]
        lines[i], lines[j] = lines[j], lines[i]
        self.assert_fails(logs, "order", only=False)


def simulate(procs, scatterings, fanout, seed):
    """Logs of an ideal 1Pipe run: delivery at ts + constant delay."""
    rnd = random.Random(seed)
    eps = ["%d:1" % (i + 1) for i in range(procs)]
    events = []  # (time, proc index, line)
    ts = 10 ** 6
    sent = [0] * procs
    for _ in range(procs * scatterings):
        ts += rnd.randint(1, 1000)
        src = rnd.choice([i for i in range(procs)
                          if sent[i] < scatterings])
        dests = rnd.sample([i for i in range(procs) if i != src], fanout)
        events.append((ts, src, "S %d %d %s" % (
            ts, sent[src], ",".join(eps[d] for d in dests))))
        for idx, d in enumerate(dests):
            events.append((ts + 500, d, "R %d %s %d %d 64 500" % (
                ts, eps[src], sent[src], idx)))
        sent[src] += 1
    logs = {"p%d" % i: ["P %d 1" % (i + 1)] for i in range(procs)}
    for t, p, line in sorted(events, key=lambda e: (e[0], e[2][0] == "S")):
        logs["p%d" % p].append(line)
    return logs


if __name__ == "__main__":
    unittest.main(verbosity=2)
