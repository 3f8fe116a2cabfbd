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


# A SOCK_RDM run (--reliable) on the same four processes:
#   A sends scat 0 (ts 100) to B, C, D: delivered everywhere;
#   B sends scat 0 (ts 200) to A, C, D; D has become unreachable: D's
#   message fails (EHOSTUNREACH 113, code 6 UNREACH), A's and C's are
#   recalled (ECANCELED 125, code 7 RECALLED), nobody delivers any;
#   A sends scat 1 (ts 300) to B, C: delivered at both.
RBASE = {
    "a": ["P 1 1",
          "S 100 0 2:1,3:1,4:1",
          "S 300 1 2:1,3:1"],
    "b": ["P 2 1",
          "R 100 1:1 0 0 64 50",
          "S 200 0 1:1,3:1,4:1",
          "E 200 4:1 0 2 113 6",
          "E 200 1:1 0 0 125 7",
          "E 200 3:1 0 1 125 7",
          "R 300 1:1 1 0 64 50"],
    "c": ["P 3 1",
          "R 100 1:1 0 1 64 50",
          "R 300 1:1 1 1 64 50"],
    "d": ["P 4 1",
          "R 100 1:1 0 2 64 50"],
}


# A SOCK_RDM run with a failure: the controller declared host 4 (D)
# failed at ts 500, epoch 1 (FAILURES).
#   D sends scat 0 (ts 100) to A, B, C: below the failure ts, committed,
#   delivered at all three;
#   A sends scat 0 (ts 200) to B, C, D: committed before D failed,
#   delivered everywhere, D included;
#   B sends scat 0 (ts 300) to A, C, D: D never ACKs it; the failure
#   recalls it (D's message UNREACH, the others RECALLED), nobody
#   delivers it;
#   D, cut off, sends scat 1 (ts 600): at or after its failure ts, so
#   discarded everywhere (D never learns: no E line);
#   A, B and C are notified (F 500 4 1); C sends scat 0 (ts 700) to A, B.
FAILURES = [{"host": 4, "ts": 500, "epoch": 1}]
FBASE = {
    "a": ["P 1 1",
          "R 100 4:1 0 0 64 50",
          "S 200 0 2:1,3:1,4:1",
          "F 500 4 1",
          "R 700 3:1 0 0 64 50"],
    "b": ["P 2 1",
          "R 100 4:1 0 1 64 50",
          "R 200 1:1 0 0 64 50",
          "S 300 0 1:1,3:1,4:1",
          "E 300 4:1 0 2 113 6",
          "E 300 1:1 0 0 125 7",
          "E 300 3:1 0 1 125 7",
          "F 500 4 1",
          "R 700 3:1 0 1 64 50"],
    "c": ["P 3 1",
          "R 100 4:1 0 2 64 50",
          "R 200 1:1 0 1 64 50",
          "F 500 4 1",
          "S 700 0 1:1,2:1"],
    "d": ["P 4 1",
          "S 100 0 1:1,2:1,3:1",
          "R 200 1:1 0 2 64 50",
          "S 600 1 1:1,2:1"],
}


def fvariant(**changes):
    """FBASE with some logs replaced."""
    logs = {k: list(v) for k, v in FBASE.items()}
    logs.update(changes)
    return logs


def freplace(name, old, new):
    return replace(name, old, new, FBASE)


def fwithout(name, line):
    return without(name, line, FBASE)


def finsert(name, before, line):
    """FBASE's log @name with @line inserted before line @before."""
    lines = list(FBASE[name])
    lines.insert(lines.index(before), line)
    return lines


def variant(**changes):
    logs = {k: list(v) for k, v in BASE.items()}
    logs.update(changes)
    return logs


def rvariant(**changes):
    """RBASE with some logs replaced; a value of None drops that log."""
    logs = {k: list(v) for k, v in RBASE.items()}
    logs.update(changes)
    return {k: v for k, v in logs.items() if v is not None}


def replace(name, old, new, base=None):
    base = BASE if base is None else base
    lines = [new if line == old else line for line in base[name]]
    assert lines != base[name], "no line %r in %s" % (old, name)
    return lines


def rreplace(name, old, new):
    return replace(name, old, new, RBASE)


def without(name, line, base=None):
    base = RBASE if base is None else base
    assert line in base[name], "no line %r in %s" % (line, name)
    return [x for x in base[name] if x != line]


class CheckerCase(unittest.TestCase):
    """Runs op-check on logs written to a temporary directory."""

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

    def assert_fails_exactly(self, logs, checks, *opts):
        """Exactly @checks fail (with examples) under --reliable."""
        doc, failed = self.run_check(logs, "--reliable", *opts,
                                     expect_rc=1)
        self.assertEqual(failed, set(checks))
        for name in checks:
            self.assertTrue(doc["checks"][name]["examples"])
        return doc

    def example(self, doc, check, i=0):
        return doc["checks"][check]["examples"][i]


class OpCheckTest(CheckerCase):

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

    # --- a scattering dropped before it was stamped (ts 0) ---------------

    def test_unstamped_scattering_notified(self):
        # A's host went down while scat 2 was being built, after A had
        # delivered ts 200: it is logged and notified with ts 0.
        a = BASE["a"] + ["S 0 2 2:1,3:1", "E 0 2:1 2 0 100 5",
                         "E 0 3:1 2 1 100 5"]
        doc, _ = self.run_check(variant(a=a), "--require-notified",
                                expect_rc=0)
        st = doc["checks"]["accounting"]["stats"]
        self.assertEqual((st["failed"], st["lost"]), (2, 0))

    def test_unstamped_scattering_first_in_run(self):
        # ts 0 is no timestamp: it must not become the unwrap reference,
        # or two stamps on either side of 2^47 would seem out of order.
        lo, hi = TS_MOD // 2 - 10, TS_MOD // 2 + 10
        logs = {"a": ["P 1 1", "S 0 0 2:1", "E 0 2:1 0 0 100 5",
                      "S %d 1 2:1" % lo, "S %d 2 2:1" % hi],
                "b": ["P 2 1", "R %d 1:1 1 0 64 1" % lo,
                      "R %d 1:1 2 0 64 1" % hi]}
        self.run_check(logs, "--require-notified", expect_rc=0)

    def test_unstamped_scattering_delivered(self):
        b = BASE["b"] + ["R 0 1:1 2 0 64 1"]
        a = BASE["a"] + ["S 0 2 2:1"]
        doc = self.assert_fails(variant(a=a, b=b), "scattering",
                                only=False)
        self.assertIn("never stamped", self.example(doc, "scattering"))

    def test_unstamped_scattering_notified_with_a_ts(self):
        a = BASE["a"] + ["S 0 2 2:1", "E 400 2:1 2 0 100 5"]
        self.assert_fails(variant(a=a), "scattering")

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

    def test_delivered_and_notified_fails(self):
        # A notification says the message was not delivered: D did.
        b = BASE["b"] + ["E 200 4:1 0 2 110 1"]
        doc = self.assert_fails(variant(b=b), "accounting")
        self.assertIn("delivered, yet notified as failed",
                      self.example(doc, "accounting"))
        self.assertEqual(
            doc["checks"]["accounting"]["stats"]["delivered_and_notified"],
            1)

    def test_delivered_and_unsure_allowed(self):
        # ONEPIPE_EE_UNKNOWN (10) and ONEPIPE_EE_DOWN (5) do not say it
        # was not delivered: counted, not failed.
        for code, errno in ((10, 110), (5, 100)):
            b = BASE["b"] + ["E 200 4:1 0 2 %d %d" % (errno, code)]
            doc, _ = self.run_check(variant(b=b), "--require-notified",
                                    expect_rc=0)
            st = doc["checks"]["accounting"]["stats"]
            self.assertEqual((st["delivered_and_notified"],
                              st["delivered_unsure"], st["notified_unsure"]),
                             (0, 1, 1))

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

    # --- (g) --reliable: exactly-once, atomicity, strict accounting -------

    def test_reliable_base_passes(self):
        doc, failed = self.run_check(RBASE, "--reliable", expect_rc=0)
        self.assertTrue(doc["reliable"])
        self.assertEqual(list(doc["checks"]), [
            "order", "scattering", "causality", "integrity", "agreement",
            "exactly-once", "atomicity", "accounting"])
        once = doc["checks"]["exactly-once"]["stats"]
        self.assertEqual((once["messages"], once["exactly_once"],
                          once["notified"], once["lost"],
                          once["duplicated"]), (8, 5, 3, 0, 0))
        atom = doc["checks"]["atomicity"]["stats"]
        self.assertEqual((atom["scatterings"], atom["delivered"],
                          atom["failed"], atom["recalled_messages"]),
                         (3, 2, 1, 2))
        acc = doc["checks"]["accounting"]["stats"]
        self.assertEqual((acc["failed"], acc["lost"]), (3, 0))
        self.assertEqual(acc["notifications"],
                         {"errno 113 code 6": 1, "errno 125 code 7": 2})

    def test_reliable_checks_need_the_option(self):
        doc, _ = self.run_check(RBASE, expect_rc=0)
        self.assertFalse(doc["reliable"])
        self.assertNotIn("exactly-once", doc["checks"])
        self.assertNotIn("atomicity", doc["not_checked"])
        _, p = self.run_check(RBASE, "--checks", "atomicity", expect_rc=2)
        self.assertIn("needs --reliable", p.stderr)
        doc, _ = self.run_check(RBASE, "--reliable", "--checks",
                                "atomicity", expect_rc=0)
        self.assertEqual(list(doc["checks"]), ["atomicity"])
        self.assertIn("exactly-once", doc["not_checked"])

    def test_reliable_human_output(self):
        d = self.tmp.name
        for name, lines in RBASE.items():
            with open(os.path.join(d, name + ".log"), "w") as fh:
                fh.write("\n".join(lines) + "\n")
        p = subprocess.run([sys.executable, OP_CHECK, "--reliable", d],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("messages sent (reliable)", p.stdout)
        for name in ("exactly-once", "atomicity", "accounting"):
            self.assertRegex(p.stdout, r"\n  %s +PASS" % name)
        self.assertTrue(p.stdout.rstrip().endswith("op-check: PASS"))

    def test_reliable_lost(self):
        # A's scat 2 to C alone: neither delivered nor notified.
        a = RBASE["a"] + ["S 400 2 3:1"]
        doc = self.assert_fails_exactly(rvariant(a=a),
                                        {"exactly-once", "accounting"})
        self.assertIn("scat 2 idx 0 to 3:1: neither delivered nor notified",
                      self.example(doc, "exactly-once"))
        st = doc["checks"]["atomicity"]["stats"]
        self.assertEqual(st["undelivered"], 1)
        # Best effort may lose it: without --reliable that passes.
        self.run_check(rvariant(a=a), expect_rc=0)

    def test_reliable_duplicate(self):
        c = RBASE["c"] + ["R 300 1:1 1 1 64 50"]
        doc = self.assert_fails_exactly(rvariant(c=c),
                                        {"integrity", "exactly-once"})
        ex = self.example(doc, "exactly-once")
        self.assertIn("scat 1 idx 1 to 3:1: delivered 2 times", ex)
        self.assertIn("c.log:3, c.log:4", ex)
        self.assertEqual(
            doc["checks"]["exactly-once"]["stats"]["duplicated"], 1)

    def test_reliable_duplicate_of_notified(self):
        # Delivered twice although recalled: a duplicate all the same.
        c = ["P 3 1", "R 100 1:1 0 1 64 50", "R 200 2:1 0 1 64 50",
             "R 200 2:1 0 1 64 50", "R 300 1:1 1 1 64 50"]
        doc = self.assert_fails_exactly(
            rvariant(c=c), {"integrity", "exactly-once", "atomicity",
                            "accounting"})
        self.assertIn("delivered 2 times", self.example(doc, "exactly-once"))

    def test_reliable_delivered_and_notified(self):
        # C delivers B's message although it was recalled.
        c = ["P 3 1", "R 100 1:1 0 1 64 50", "R 200 2:1 0 1 64 50",
             "R 300 1:1 1 1 64 50"]
        doc = self.assert_fails_exactly(rvariant(c=c),
                                        {"atomicity", "accounting"})
        self.assertIn("yet delivered idx 1 (3:1)",
                      self.example(doc, "atomicity"))
        self.assertIn("delivered, yet notified as failed",
                      self.example(doc, "accounting"))
        # Best effort: a notification must be true there too.
        self.assert_fails(rvariant(c=c), "accounting", "--require-notified")

    def test_reliable_failed_scattering_delivered(self):
        # B's message to C is delivered and not notified, its siblings
        # failed: not all-or-nothing, although each message on its own
        # is accounted for.
        b = without("b", "E 200 3:1 0 1 125 7")
        c = ["P 3 1", "R 100 1:1 0 1 64 50", "R 200 2:1 0 1 64 50",
             "R 300 1:1 1 1 64 50"]
        doc = self.assert_fails_exactly(rvariant(b=b, c=c), {"atomicity"})
        ex = self.example(doc, "atomicity")
        self.assertIn("b.log:3: scat 0 failed (E for idx 0,2)", ex)
        self.assertIn("yet delivered idx 1 (3:1)", ex)
        self.assertIn("idx 1 (3:1) not notified", ex)

    def test_reliable_recall_not_notified(self):
        # The recall of B's message to A is never reported to B.
        b = without("b", "E 200 1:1 0 0 125 7")
        doc = self.assert_fails_exactly(
            rvariant(b=b), {"exactly-once", "atomicity", "accounting"})
        self.assertIn("idx 0 (1:1) not notified",
                      self.example(doc, "atomicity"))

    def test_reliable_recall_without_cause(self):
        # Every message of B's scattering says "recalled": by whom?
        b = rreplace("b", "E 200 4:1 0 2 113 6", "E 200 4:1 0 2 125 7")
        doc = self.assert_fails_exactly(rvariant(b=b), {"atomicity"})
        self.assertIn("none says which message failed",
                      self.example(doc, "atomicity"))

    def test_reliable_partial_delivery(self):
        # A's scat 1 reaches B but not C, and nobody is told.
        c = without("c", "R 300 1:1 1 1 64 50")
        doc = self.assert_fails_exactly(
            rvariant(c=c), {"exactly-once", "atomicity", "accounting"})
        self.assertIn("scat 1 partially delivered: idx 0 (2:1) delivered, "
                      "idx 1 (3:1) neither", self.example(doc, "atomicity"))

    def test_reliable_unlogged_receiver(self):
        # D (cut off) left no log.  B's scattering to it was notified, so
        # that is fine; A's scat 0 reached D before the cut, which
        # nothing can show: by default that fails, with
        # --unlogged-receivers unknown it is "unverifiable".
        logs = rvariant(d=None)
        doc = self.assert_fails_exactly(logs, {"exactly-once"})
        self.assertIn("scat 0 idx 2 to 4:1: its receiver has no log",
                      self.example(doc, "exactly-once"))
        doc, _ = self.run_check(logs, "--reliable", "--unlogged-receivers",
                                "unknown", expect_rc=0)
        once = doc["checks"]["exactly-once"]
        self.assertEqual(once["stats"]["unverifiable"], 1)
        self.assertTrue(once["notes"])
        self.assertEqual(doc["checks"]["atomicity"]["stats"]["delivered"],
                         2)

    def test_reliable_unlogged_receiver_not_recalled(self):
        # D has no log and its message of A's scat 0 failed, but B and C
        # delivered theirs: the recall did not happen.
        a = RBASE["a"][:2] + ["E 100 4:1 0 2 113 6"] + RBASE["a"][2:]
        for mode in ("notified", "unknown"):
            doc = self.assert_fails_exactly(
                rvariant(a=a, d=None), {"atomicity"},
                "--unlogged-receivers", mode)
            self.assertIn("yet delivered idx 0 (2:1), 1 (3:1)",
                          self.example(doc, "atomicity"))
        # A fully recalled scattering to the unlogged receiver passes.
        a = RBASE["a"][:2] + ["E 100 4:1 0 2 113 6", "E 100 2:1 0 0 125 7",
                              "E 100 3:1 0 1 125 7"] + RBASE["a"][2:]
        b = without("b", "R 100 1:1 0 0 64 50")
        c = without("c", "R 100 1:1 0 1 64 50")
        doc, _ = self.run_check(rvariant(a=a, b=b, c=c, d=None),
                                "--reliable", expect_rc=0)
        self.assertEqual(doc["checks"]["atomicity"]["stats"]["failed"], 2)

    def test_reliable_random_run_with_unreachable_host(self):
        """A simulated reliable run where a receiver becomes unreachable."""
        logs = simulate(procs=6, scatterings=40, fanout=3, seed=11,
                        unreachable=(5, 40))
        doc, _ = self.run_check(logs, "--reliable", expect_rc=0)
        atom = doc["checks"]["atomicity"]["stats"]
        self.assertGreater(atom["failed"], 0)
        self.assertGreater(atom["delivered"], 0)
        self.assertEqual(atom["recalled_messages"], 2 * atom["failed"])
        # Deliver one recalled message (in time order): caught.
        name, pos, line = recalled_delivery(logs)
        logs[name].insert(pos, line)
        self.assert_fails_exactly(logs, {"atomicity", "accounting"})


class FailureTest(CheckerCase):
    """--failures: failure atomicity against the controller's decisions."""

    def write_failures(self, doc, name="failures.json"):
        path = os.path.join(self.fdir.name, name)
        with open(path, "w") as fh:
            json.dump(doc, fh)
        return path

    def setUp(self):
        super().setUp()
        self.fdir = tempfile.TemporaryDirectory()
        self.addCleanup(self.fdir.cleanup)
        self.ffile = self.write_failures(FAILURES)

    def fcheck(self, logs, *opts, expect_rc=None, failures=None):
        f = self.ffile if failures is None else self.write_failures(failures)
        return self.run_check(logs, "--reliable", "--failures", f, *opts,
                              expect_rc=expect_rc)

    def assert_ffails(self, logs, checks, failures=None):
        """Exactly @checks fail (with examples) with --failures."""
        doc, failed = self.fcheck(logs, expect_rc=1, failures=failures)
        self.assertEqual(failed, set(checks))
        for name in checks:
            self.assertTrue(doc["checks"][name]["examples"])
        return doc

    # --- the passing run ----------------------------------------------

    def test_failure_base_passes(self):
        doc, failed = self.fcheck(FBASE, expect_rc=0)
        self.assertEqual(list(doc["checks"]), [
            "order", "scattering", "causality", "integrity", "agreement",
            "exactly-once", "atomicity", "failure", "accounting"])
        self.assertEqual(doc["failures"], FAILURES)
        st = doc["checks"]["failure"]["stats"]
        self.assertEqual(
            (st["failed_hosts"], st["failed_processes"], st["notices"],
             st["from_failed"], st["committed"], st["discarded"],
             st["to_failed"], st["delivered"], st["recalled"]),
            (1, 1, 3, 2, 1, 1, 2, 1, 1))
        self.assertEqual(doc["checks"]["failure"]["notes"], [])
        # The scatterings involving D are the failure check's alone.
        atom = doc["checks"]["atomicity"]["stats"]
        self.assertEqual((atom["involving_failed_hosts"], atom["delivered"]),
                         (4, 1))
        # D's scat 1 reached nobody and nobody was told: the failure
        # explains it, it is not a loss.
        once = doc["checks"]["exactly-once"]["stats"]
        self.assertEqual((once["failed_host"], once["lost"]), (2, 0))
        acc = doc["checks"]["accounting"]["stats"]
        self.assertEqual((acc["undelivered_failed_host"], acc["lost"]),
                         (2, 0))

    def test_failure_needs_the_decisions(self):
        # Without --failures, D's discarded scattering is a loss...
        doc, failed = self.run_check(FBASE, "--reliable", expect_rc=1)
        self.assertEqual(failed, {"exactly-once", "accounting"})
        self.assertNotIn("failure", doc["checks"])
        self.assertNotIn("failure", doc["not_checked"])
        # ...and best effort (F lines are read) passes.
        self.run_check(FBASE, expect_rc=0)

    def test_failure_human_output(self):
        d = self.tmp.name
        for name, lines in FBASE.items():
            with open(os.path.join(d, name + ".log"), "w") as fh:
                fh.write("\n".join(lines) + "\n")
        p = subprocess.run([sys.executable, OP_CHECK, "--reliable",
                            "--failures", self.ffile, d],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("failed: host 4 at ts 500 (epoch 1)", p.stdout)
        self.assertRegex(p.stdout, r"\n  failure +PASS")

    # --- the decisions file ---------------------------------------------

    def test_failures_from_controller_show(self):
        # onepipe controller show -j: failed switches have no host.
        doc = {"daemon": {"role": "active"}, "controller": {
            "epoch": 1, "phase": "idle", "failures": [
                {"node": "tor2", "kind": "switch", "epoch": 1, "ts": 500},
                {"node": "h4", "kind": "host", "host": 4, "epoch": 1,
                 "ts": 500}]}}
        doc, _ = self.fcheck(FBASE, expect_rc=0, failures=doc)
        self.assertEqual(doc["failures"], FAILURES)

    def test_failures_from_fail_show(self):
        # onepipe fail show -j, on a correct host.
        fs = [{"host": 4, "epoch": 1, "ts": 500, "pending": False}]
        self.fcheck(FBASE, expect_rc=0, failures=fs)

    def test_failures_file_errors(self):
        for bad in ({"nothing": 1}, [{"host": 4, "ts": "500", "epoch": 1}],
                    [{"host": 4, "ts": 500, "epoch": 1},
                     {"host": 4, "ts": 501, "epoch": 2}], [7]):
            _, p = self.fcheck(FBASE, expect_rc=2, failures=bad)
            self.assertIn("failures.json", p.stderr)
        path = os.path.join(self.fdir.name, "broken.json")
        with open(path, "w") as fh:
            fh.write("[{")
        _, p = self.run_check(FBASE, "--reliable", "--failures", path,
                              expect_rc=2)
        self.assertIn("not JSON", p.stderr)
        # The same failure twice (a controller that re-sent it) is one.
        self.fcheck(FBASE, expect_rc=0, failures=FAILURES * 2)

    def test_failures_option_errors(self):
        _, p = self.run_check(FBASE, "--failures", self.ffile, expect_rc=2)
        self.assertIn("--failures needs --reliable", p.stderr)
        _, p = self.run_check(FBASE, "--reliable", "--checks", "failure",
                              expect_rc=2)
        self.assertIn("--checks failure needs --failures", p.stderr)
        doc, _ = self.fcheck(FBASE, "--checks", "failure", expect_rc=0)
        self.assertEqual(list(doc["checks"]), ["failure"])

    # --- notifications (F lines) ------------------------------------------

    def test_notice_wrong_ts(self):
        a = freplace("a", "F 500 4 1", "F 501 4 1")
        doc = self.assert_ffails(fvariant(a=a), {"failure"})
        self.assertIn("a.log:4: notified that host 4 failed at ts 501 in "
                      "epoch 1; the decision says ts 500, epoch 1",
                      self.example(doc, "failure"))

    def test_notice_wrong_epoch(self):
        b = freplace("b", "F 500 4 1", "F 500 4 2")
        self.assert_ffails(fvariant(b=b), {"failure"})

    def test_notice_undecided_host(self):
        c = finsert("c", "S 700 0 1:1,2:1", "F 650 2 2")
        doc = self.assert_ffails(fvariant(c=c), {"failure"})
        self.assertIn("the controller decided no such failure",
                      self.example(doc, "failure"))

    def test_notice_missing_is_noted(self):
        c = fwithout("c", "F 500 4 1")
        doc, _ = self.fcheck(fvariant(c=c), expect_rc=0)
        notes = doc["checks"]["failure"]["notes"]
        self.assertEqual(len(notes), 1)
        self.assertIn("1 correct processes logged no notification of host "
                      "4's failure (3:1)", notes[0])

    # --- a failed sender --------------------------------------------------

    def test_discarded_delivered(self):
        # A delivers D's scat 1, stamped after D's failure ts.
        a = finsert("a", "R 700 3:1 0 0 64 50", "R 600 4:1 1 0 64 50")
        doc = self.assert_ffails(fvariant(a=a), {"failure"})
        self.assertIn("d.log:4: scat 1 (ts 600) of failed host 4: stamped "
                      "at or after its failure ts 500, yet delivered "
                      "(idx 0 at a.log:5)", self.example(doc, "failure"))

    def test_discarded_at_the_failure_ts(self):
        # Stamped exactly at the failure ts: discarded too.
        d = freplace("d", "S 600 1 1:1,2:1", "S 500 1 1:1,2:1")
        b = finsert("b", "R 700 3:1 0 1 64 50", "R 500 4:1 1 1 64 50")
        self.fcheck(fvariant(d=d), expect_rc=0)
        self.assert_ffails(fvariant(d=d, b=b), {"failure"})

    def test_committed_torn(self):
        # C misses D's committed scat 0, which A and B delivered.
        c = fwithout("c", "R 100 4:1 0 2 64 50")
        doc = self.assert_ffails(fvariant(c=c), {"failure"})
        ex = self.example(doc, "failure")
        self.assertIn("scat 0 (ts 100) of failed host 4: torn", ex)
        self.assertIn("not at correct receiver(s) 2 (3:1)", ex)

    def test_committed_delivered_nowhere(self):
        a = fwithout("a", "R 100 4:1 0 0 64 50")
        b = fwithout("b", "R 100 4:1 0 1 64 50")
        c = fwithout("c", "R 100 4:1 0 2 64 50")
        doc = self.assert_ffails(fvariant(a=a, b=b, c=c), {"failure"})
        self.assertIn("stamped below its failure ts 500 (committed), yet "
                      "delivered at no correct receiver",
                      self.example(doc, "failure"))
        # Unless D had been told it failed, before it failed itself.
        d = FBASE["d"][:2] + ["E 100 1:1 0 0 113 6", "E 100 2:1 0 1 125 7",
                              "E 100 3:1 0 2 125 7"] + FBASE["d"][2:]
        doc, _ = self.fcheck(fvariant(a=a, b=b, c=c, d=d), expect_rc=0)
        self.assertEqual(doc["checks"]["failure"]["stats"]["failed_before"],
                         1)

    def test_failed_receivers_log_not_complete(self):
        # D (failed) did not deliver A's scat 0: not checked.
        d = fwithout("d", "R 200 1:1 0 2 64 50")
        doc, _ = self.fcheck(fvariant(d=d), expect_rc=0)
        self.assertEqual(doc["checks"]["failure"]["stats"]["delivered"], 1)

    def test_failure_without_ts(self):
        # The controller had no timestamp (ts 0): all-or-nothing only.
        fs = [{"host": 4, "ts": 0, "epoch": 1}]
        logs = {k: [x.replace("F 500 4 1", "F 0 4 1") for x in v]
                for k, v in FBASE.items()}
        doc, _ = self.fcheck(logs, expect_rc=0, failures=fs)
        f = doc["checks"]["failure"]
        self.assertEqual(f["stats"]["undelivered_no_failure_ts"], 1)
        self.assertIn("without a failure timestamp", f["notes"][0])
        logs["c"] = [x for x in logs["c"] if x != "R 100 4:1 0 2 64 50"]
        self.assert_ffails(logs, {"failure"}, failures=fs)

    # --- a failed receiver ------------------------------------------------

    def test_recalled_delivered_at_correct_receiver(self):
        c = finsert("c", "F 500 4 1", "R 300 2:1 0 1 64 50")
        doc = self.assert_ffails(fvariant(c=c), {"failure", "accounting"})
        self.assertIn("b.log:4: scat 0 (ts 300) to failed host(s) 4: failed "
                      "(E for idx 0,1,2) yet delivered (idx 1 at c.log:4)",
                      self.example(doc, "failure"))

    def test_recalled_delivered_at_failed_receiver(self):
        d = FBASE["d"] + ["R 300 2:1 0 2 64 50"]
        doc = self.assert_ffails(fvariant(d=d), {"failure", "accounting"})
        self.assertIn("yet delivered (idx 2 at d.log:5)",
                      self.example(doc, "failure"))

    def test_recall_not_notified(self):
        b = fwithout("b", "E 300 1:1 0 0 125 7")
        doc = self.assert_ffails(fvariant(b=b), {"failure", "exactly-once",
                                                 "accounting"})
        self.assertIn("idx 0 (1:1) not notified",
                      self.example(doc, "failure"))

    def test_to_failed_not_notified(self):
        # B's scattering is delivered nowhere and B is never told.
        b = [x for x in FBASE["b"] if not x.startswith("E ")]
        doc = self.assert_ffails(fvariant(b=b), {"failure", "exactly-once",
                                                 "accounting"})
        self.assertIn("delivered at no correct receiver (0 (1:1), 1 (3:1)) "
                      "and not notified to its sender",
                      self.example(doc, "failure"))

    def test_to_failed_torn(self):
        # A's scat 0 (committed) reaches B, not C, and A is not told.
        c = fwithout("c", "R 200 1:1 0 1 64 50")
        doc = self.assert_ffails(fvariant(c=c), {"failure", "exactly-once",
                                                 "accounting"})
        self.assertIn("scat 0 (ts 200) to failed host(s) 4: torn",
                      self.example(doc, "failure"))

    def test_recalls_only_allowed(self):
        # Every message recalled, none "unreachable": the process
        # failure is the cause, so that is fine here...
        b = freplace("b", "E 300 4:1 0 2 113 6", "E 300 4:1 0 2 125 7")
        self.fcheck(fvariant(b=b), expect_rc=0)

    def test_correct_scatterings_still_checked(self):
        # C's scat 0 (A, B: no failed host) torn: atomicity says so.
        b = fwithout("b", "R 700 3:1 0 1 64 50")
        self.assert_ffails(fvariant(b=b), {"exactly-once", "atomicity",
                                           "accounting"})

    def test_random_run_with_failed_host(self):
        """A simulated run where a host fails part-way."""
        logs, fs = simulate_failure(procs=6, scatterings=40, fanout=3,
                                    seed=3, victim=5, at=100)
        doc, _ = self.fcheck(logs, expect_rc=0, failures=fs)
        st = doc["checks"]["failure"]["stats"]
        for k in ("committed", "discarded", "delivered", "recalled"):
            self.assertGreater(st[k], 0, k)
        # Deliver one discarded message: caught.
        name, pos, line = discarded_delivery(logs, fs[0])
        logs[name].insert(pos, line)
        self.assert_ffails(logs, {"failure"}, failures=fs)


def simulate_failure(procs, scatterings, fanout, seed, victim, at):
    """Logs of a reliable run in which process @victim's host fails.

    Like simulate(): delivery at ts + 500.  From the @at-th scattering
    on, the victim is cut off: the first of its scatterings after that
    and every later one stamp at or after the failure ts (the ts of the
    cut) and are delivered nowhere; scatterings of the others that
    include it are recalled (UNREACH for its message, RECALLED for the
    rest) until they are notified (F line) at the failure ts + 3000,
    after which they send to it no more.  Returns (logs, failures).
    """
    rnd = random.Random(seed)
    eps = ["%d:1" % (i + 1) for i in range(procs)]
    events = []
    ts = 10 ** 6
    sent = [0] * procs
    fail_ts = notify_ts = None
    for k in range(procs * scatterings):
        ready = [i for i in range(procs) if sent[i] < scatterings]
        if not ready:
            break
        ts += rnd.randint(1, 1000)
        if k == at:
            fail_ts, notify_ts = ts, ts + 3000
            for i in range(procs):
                if i != victim:
                    events.append((notify_ts, i, "F %d %d 1" % (
                        fail_ts, victim + 1)))
        src = rnd.choice(ready)
        others = [i for i in range(procs) if i != src]
        if notify_ts is not None and ts >= notify_ts:
            others = [i for i in others if i != victim]
        dests = rnd.sample(others, fanout)
        events.append((ts, src, "S %d %d %s" % (
            ts, sent[src], ",".join(eps[d] for d in dests))))
        cut = fail_ts is not None
        if cut and src == victim:
            pass  # discarded everywhere; the victim never learns
        elif cut and victim in dests:
            for idx, d in enumerate(dests):
                code = "113 6" if d == victim else "125 7"
                events.append((ts + 900, src, "E %d %s %d %d %s" % (
                    ts, eps[d], sent[src], idx, code)))
        else:
            for idx, d in enumerate(dests):
                events.append((ts + 500, d, "R %d %s %d %d 64 500" % (
                    ts, eps[src], sent[src], idx)))
        sent[src] += 1
    logs = {"p%d" % i: ["P %d 1" % (i + 1)] for i in range(procs)}
    for t, p, line in sorted(events, key=lambda e: (e[0], e[2][0] == "S")):
        logs["p%d" % p].append(line)
    return logs, [{"host": victim + 1, "ts": fail_ts, "epoch": 1}]


def discarded_delivery(logs, failure):
    """(log, position, R line): a correct receiver delivering a message
    the failed host stamped after its failure ts, in time order."""
    victim = "p%d" % (failure["host"] - 1)
    src = "%d:1" % failure["host"]
    eps = {lines[0][2:].replace(" ", ":"): name
           for name, lines in logs.items()}
    for f in (x.split() for x in logs[victim]):
        if f[0] != "S" or int(f[1]) < failure["ts"]:
            continue
        ts, rcv = int(f[1]), eps[f[3].split(",")[0]]
        lines = logs[rcv]
        pos = next((i for i, x in enumerate(lines[1:], 1)
                    if x[0] in "RSE" and event_time(x) > ts + 500),
                   len(lines))
        return rcv, pos, "R %d %s %s 0 64 500" % (ts, src, f[2])
    raise AssertionError("no discarded scattering")


def simulate(procs, scatterings, fanout, seed, unreachable=None):
    """Logs of an ideal 1Pipe run: delivery at ts + constant delay.

    unreachable=(proc, n): from the n-th scattering on, proc is cut off:
    it sends no more, and every scattering that includes it fails as
    SOCK_RDM fails it (UNREACH for its message, RECALLED for the others,
    no delivery anywhere).
    """
    rnd = random.Random(seed)
    eps = ["%d:1" % (i + 1) for i in range(procs)]
    events = []  # (time, proc index, line)
    ts = 10 ** 6
    sent = [0] * procs
    for _ in range(procs * scatterings):
        cut = unreachable is not None and sum(sent) >= unreachable[1]
        ready = [i for i in range(procs) if sent[i] < scatterings and
                 not (cut and i == unreachable[0])]
        if not ready:
            break
        ts += rnd.randint(1, 1000)
        src = rnd.choice(ready)
        dests = rnd.sample([i for i in range(procs) if i != src], fanout)
        events.append((ts, src, "S %d %d %s" % (
            ts, sent[src], ",".join(eps[d] for d in dests))))
        if cut and unreachable[0] in dests:
            for idx, d in enumerate(dests):
                code = "113 6" if d == unreachable[0] else "125 7"
                events.append((ts + 900, src, "E %d %s %d %d %s" % (
                    ts, eps[d], sent[src], idx, code)))
        else:
            for idx, d in enumerate(dests):
                events.append((ts + 500, d, "R %d %s %d %d 64 500" % (
                    ts, eps[src], sent[src], idx)))
        sent[src] += 1
    logs = {"p%d" % i: ["P %d 1" % (i + 1)] for i in range(procs)}
    for t, p, line in sorted(events, key=lambda e: (e[0], e[2][0] == "S")):
        logs["p%d" % p].append(line)
    return logs


def event_time(line):
    """When simulate() has an event happen."""
    return int(line.split()[1]) + {"S": 0, "R": 500, "E": 900}[line[0]]


def recalled_delivery(logs):
    """(log, position, R line) delivering the first recalled message.

    The position keeps simulate()'s time order (S at ts, R at ts + 500,
    E at ts + 900), so that only the delivery itself is wrong.
    """
    eps = {lines[0][2:].replace(" ", ":"): name
           for name, lines in logs.items()}
    for name, lines in sorted(logs.items()):
        src = lines[0][2:].replace(" ", ":")
        for f in (line.split() for line in lines):
            if f[0] != "E" or f[6] != "7":
                continue
            ts = int(f[1])
            rcv = logs[eps[f[2]]]
            pos = next((i for i, x in enumerate(rcv[1:], 1)
                        if event_time(x) > ts + 500), len(rcv))
            return eps[f[2]], pos, "R %d %s %s %s 64 500" % (
                ts, src, f[3], f[4])
    raise AssertionError("no recalled message")

if __name__ == "__main__":
    unittest.main(verbosity=2)
