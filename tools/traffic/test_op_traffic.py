#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of op-traffic that need no 1Pipe: its plain UDP mode on loopback.

They exercise everything but the AF_ONEPIPE socket itself: option
checking, destination choice, payload encoding and verification, the
poll loop, --expect / --linger-ms, --recv-pause-ms, --delay-ms, the log
format (checked by op-check) and the summary (--json, --summary).  Traffic stays on 127.0.0.1.

    python3 tools/traffic/test_op_traffic.py   (or make -C tools/traffic check)
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
OP_TRAFFIC = os.path.join(HERE, "op-traffic")
OP_CHECK = os.path.join(HERE, "..", "checker", "op-check")
LO = "127.0.0.1"


def free_udp_ports(n):
    """Ports the kernel just handed out; free again once closed."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
             for _ in range(n)]
    for s in socks:
        s.bind((LO, 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def read_log(path):
    with open(path) as fh:
        return [line.split() for line in fh]


class OpTrafficTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def start(self, port, *args):
        log = os.path.join(self.tmp.name, "p%d.log" % port)
        cmd = [OP_TRAFFIC, "--udp", "--bind", LO, "--port", str(port),
               "--log", log, "--json", *args]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True), log

    def finish(self, proc):
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, err)
        return json.loads(out)

    def test_mesh(self):
        """3 processes scatter to each other; everything arrives intact."""
        ports = free_udp_ports(3)
        scats, fanout, size = 300, 2, 200
        start_at = time.time_ns() + 300 * 10 ** 6
        procs = []
        for p in ports:
            peers = ",".join("%s:%d" % (LO, q) for q in ports if q != p)
            procs.append(self.start(
                p, "--peers", peers, "--scatterings", str(scats),
                "--fanout", str(fanout), "--size", str(size),
                "--interval-us", "50", "--rcvbuf", str(4 << 20),
                "--expect", str(scats * fanout), "--linger-ms", "3000",
                "--start-at-ns", str(start_at), "--seed", "42"))
        sums = [self.finish(proc) for proc, _ in procs]
        for s in sums:
            self.assertEqual(s["scatterings"], scats)
            self.assertEqual(s["sent"], scats * fanout)
            self.assertEqual(s["received"], scats * fanout)
            self.assertEqual((s["failed"], s["bad"]), (0, 0))
            self.assertGreaterEqual(s["first_send_ns"], start_at)
            self.assertGreater(s["lat_p99_ns"], 0)
        for p, (_, log) in zip(ports, procs):
            lines = read_log(log)
            self.assertEqual(lines[0], ["P", LO, str(p)])
            sends = [f for f in lines if f[0] == "S"]
            self.assertEqual([int(f[2]) for f in sends], list(range(scats)))
            for f in sends:
                dests = f[3].split(",")
                self.assertEqual(len(set(dests)), fanout)
                self.assertNotIn("%s:%d" % (LO, p), dests)
            for f in lines:
                if f[0] == "R":
                    self.assertEqual(int(f[5]), size)
                    self.assertGreater(int(f[6]), 0)
        # UDP gives no order, but the rest of the accounting must hold.
        chk = subprocess.run(
            [sys.executable, OP_CHECK, "--expect-all", "--checks",
             "scattering,causality,integrity,accounting",
             *[log for _, log in procs]], capture_output=True, text=True)
        self.assertEqual(chk.returncode, 0, chk.stdout + chk.stderr)

    def test_start_file(self):
        """Nothing is sent before the launcher writes the start time."""
        ports = free_udp_ports(2)
        start_file = os.path.join(self.tmp.name, "start")
        tx, tx_log = self.start(ports[0], "--peers", "%s:%d" % (LO, ports[1]),
                                "--scatterings", "5", "--linger-ms", "500",
                                "--start-file", start_file)
        rx, rx_log = self.start(ports[1], "--linger-ms", "1500")
        deadline = time.time() + 10
        # The P line is flushed once the socket is up; under load the
        # process may not even have created its log yet.
        for log in (tx_log, rx_log):
            while time.time() < deadline and not (
                    os.path.exists(log) and os.path.getsize(log)):
                time.sleep(0.01)
        self.assertEqual(read_log(tx_log), [["P", LO, str(ports[0])]])
        time.sleep(0.3)
        self.assertEqual(len(read_log(tx_log)), 1)  # still waiting
        start_at = time.time_ns() + 200 * 10 ** 6
        with open(start_file + ".tmp", "w") as fh:
            fh.write("%d\n" % start_at)
        os.rename(start_file + ".tmp", start_file)
        summary = self.finish(tx)
        self.assertEqual(summary["sent"], 5)
        self.assertGreaterEqual(summary["first_send_ns"], start_at)
        self.assertEqual(self.finish(rx)["received"], 5)

    def test_seed_is_deterministic(self):
        """Same seed and address: same destination sets; other seed: not."""
        port = free_udp_ports(1)[0]
        sink = free_udp_ports(4)
        peers = ",".join("%s:%d" % (LO, q) for q in sink)

        def dests(seed):
            proc, log = self.start(port, "--peers", peers,
                                   "--scatterings", "30", "--fanout", "2",
                                   "--seed", str(seed), "--linger-ms", "0")
            self.finish(proc)
            return [f[3] for f in read_log(log) if f[0] == "S"]
        a = dests(5)
        self.assertEqual(len(a), 30)
        self.assertGreater(len(set(a)), 3)
        self.assertEqual(dests(5), a)
        self.assertNotEqual(dests(6), a)

    def test_corrupt_payload_is_flagged(self):
        port = free_udp_ports(1)[0]
        proc, log = self.start(port, "--linger-ms", "1500")
        time.sleep(0.5)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((LO, 0))
            s.sendto(b"\0" * 64, (LO, port))  # bad magic
            s.sendto(b"x" * 10, (LO, port))  # short
        summary = self.finish(proc)
        self.assertEqual(summary["bad"], 2)
        self.assertEqual(summary["received"], 0)
        xs = [f for f in read_log(log) if f[0] == "X"]
        self.assertEqual([f[2] for f in xs], ["bad-magic", "short"])
        chk = subprocess.run([sys.executable, OP_CHECK, log],
                             capture_output=True, text=True)
        self.assertEqual(chk.returncode, 1, chk.stdout)
        self.assertRegex(chk.stdout, r"integrity +FAIL")

    def test_filler_is_verified(self):
        """A good message with one flipped filler byte is rejected."""
        ports = free_udp_ports(2)
        rx, rx_log = self.start(ports[1], "--linger-ms", "1500")
        time.sleep(0.3)
        # Capture a genuine message from a sender to a plain socket...
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sink:
            sink.bind((LO, 0))
            tx, _ = self.start(ports[0], "--peers", "%s:%d" %
                               (LO, sink.getsockname()[1]),
                               "--scatterings", "1", "--size", "100",
                               "--linger-ms", "0")
            msg = sink.recv(65536)
            self.finish(tx)
            # ...and replay it from the sender's own port, once intact and
            # once with a byte of filler flipped.
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.bind((LO, ports[0]))
                s.sendto(msg, (LO, ports[1]))
                s.sendto(msg[:60] + bytes([msg[60] ^ 1]) + msg[61:],
                         (LO, ports[1]))
        summary = self.finish(rx)
        self.assertEqual(len(msg), 100)
        self.assertEqual((summary["received"], summary["bad"]), (1, 1))
        xs = [f for f in read_log(rx_log) if f[0] == "X"]
        self.assertEqual(xs[0][2], "bad-filler")

    def test_recv_pause(self):
        """A paused receiver reads nothing for the pause, then everything;
        its own sending goes on meanwhile; it lives through the pause."""
        ports = free_udp_ports(2)
        start_at = time.time_ns() + 300 * 10 ** 6
        ms = 10 ** 6
        common = ["--start-at-ns", str(start_at), "--rcvbuf", str(4 << 20),
                  "--scatterings", "40", "--interval-us", "15000"]
        # ports[0] pauses from 150 ms to 650 ms after the start, with a
        # short linger: it must still outlive the pause.
        paused, p_log = self.start(
            ports[0], "--peers", "%s:%d" % (LO, ports[1]),
            "--recv-pause-ms", "150:500", "--linger-ms", "300", *common)
        other, o_log = self.start(
            ports[1], "--peers", "%s:%d" % (LO, ports[0]),
            "--linger-ms", "1500", *common)
        ps, os_ = self.finish(paused), self.finish(other)
        t0, t1 = ps["recv_pause_start_ns"], ps["recv_pause_end_ns"]
        self.assertGreaterEqual(t0, start_at + 150 * ms)
        self.assertLess(t0, start_at + 400 * ms)
        # The pause is timed on CLOCK_MONOTONIC, its edges are reported
        # in CLOCK_REALTIME, which NTP may slew by a few percent.
        self.assertGreaterEqual(t1 - t0, 450 * ms)
        self.assertEqual((ps["received"], os_["received"]), (40, 40))
        self.assertEqual((os_["recv_pause_start_ns"],
                          os_["recv_pause_end_ns"]), (0, 0))
        # --udp: R ts is the send time, receive time = ts + latency.
        recvs = [(int(f[1]), int(f[1]) + int(f[6]))
                 for f in read_log(p_log) if f[0] == "R"]
        self.assertEqual([r for _, r in recvs if t0 < r < t1], [])
        self.assertTrue(any(r <= t0 for _, r in recvs))
        self.assertTrue(any(t0 < s < t1 and r >= t1 for s, r in recvs))
        # It kept sending while paused: the other got those right away.
        got = [(int(f[1]), int(f[1]) + int(f[6]))
               for f in read_log(o_log) if f[0] == "R"]
        during = [r for s, r in got if t0 < s and r < t1]
        self.assertGreater(len(during), 10)
        self.assertGreaterEqual(ps["last_send_ns"], t0)

    def test_delay_and_summary_file(self):
        """--delay-ms holds the first scattering back; --summary writes the
        JSON summary even with --quiet."""
        ports = free_udp_ports(2)
        summ = os.path.join(self.tmp.name, "summary.json")
        start_at = time.time_ns() + 200 * 10 ** 6
        tx, _ = self.start(ports[0], "--peers", "%s:%d" % (LO, ports[1]),
                           "--scatterings", "3", "--delay-ms", "300",
                           "--start-at-ns", str(start_at),
                           "--linger-ms", "0", "--quiet",
                           "--summary", summ)
        out, err = tx.communicate(timeout=60)
        self.assertEqual((tx.returncode, out), (0, ""), err)
        with open(summ) as fh:
            s = json.load(fh)
        self.assertEqual((s["type"], s["sent"]), ("udp", 3))
        self.assertGreaterEqual(s["first_send_ns"], start_at + 300 * 10 ** 6)
        for k in ("eagain", "enobufs", "send_blocked"):
            self.assertEqual(s[k], 0, k)

    def test_duration(self):
        """--duration-ms ends the sending however many scatterings are
        left, and the last send is within it (plus one interval)."""
        ports = free_udp_ports(2)
        start_at = time.time_ns() + 200 * 10 ** 6
        tx, _ = self.start(ports[0], "--peers", "%s:%d" % (LO, ports[1]),
                           "--scatterings", "1000000", "--interval-us",
                           "10000", "--duration-ms", "500",
                           "--start-at-ns", str(start_at),
                           "--linger-ms", "0", "--json")
        out, err = tx.communicate(timeout=60)
        self.assertEqual(tx.returncode, 0, err)
        s = json.loads(out)
        self.assertGreater(s["sent"], 10)
        self.assertLess(s["sent"], 1000)
        self.assertLess(s["last_send_ns"],
                        start_at + (500 + 10 + 100) * 10 ** 6)

    def test_usage_errors(self):
        bad = [["--fanout", "3", "--peers", "%s:1,%s:2" % (LO, LO),
                "--scatterings", "1"],
               ["--size", "10"],
               ["--recv-pause-ms", "5"],
               ["--recv-pause-ms", "a:5"],
               ["--recv-pause-ms", "5:0"],
               ["--recv-pause-ms", "5:-1"],
               ["--delay-ms", "-1"],
               ["--duration-ms", "x"],
               ["--peers", "1:2"],  # not an IPv4 address
               ["--use-more"],
               ["--type", "stream"],
               ["--port", "70000"],
               ["stray"]]
        for args in bad:
            p = subprocess.run([OP_TRAFFIC, "--udp", *args],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, (args, p.stderr))


if __name__ == "__main__":
    unittest.main(verbosity=2)
