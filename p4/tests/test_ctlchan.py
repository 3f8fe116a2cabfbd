# SPDX-License-Identifier: GPL-2.0
"""The P4 switch's controller channel (p4/control/ctlchan.py) against a
listening AF_UNIX SOCK_SEQPACKET socket that plays onepiped: what it
sends (HELLO, the ports' state after every HELLO, reports, DONE), how it
takes RESUME (once per epoch and port, answered every time), and that a
controller that is gone or slow never blocks it.

    /usr/bin/python3 -m unittest -v tests/test_ctlchan.py
"""

import os
import socket
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "control"))

import ctlchan  # noqa: E402
import decide  # noqa: E402


class Port:
    def __init__(self, name, idx):
        self.name, self.idx = name, idx


class Switch:
    """What CtlChannel uses of opctl.BarrierSwitch."""

    def __init__(self):
        self.ports = [Port("h1", 0), Port("h2", 1), Port("spine", 2)]
        self.watch = decide.LinkWatch()
        self.down = set()
        self.commit = {0: 100, 1: 200, 2: 300}
        self.resumes = []

    def port_report(self, idx):
        return idx in self.down, self.commit.get(idx)

    def resume(self, idx):
        self.resumes.append(idx)
        self.commit.pop(idx, None)


class TestCtlChannel(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "onepiped.sock")
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.srv.bind(self.path)
        self.srv.listen(4)
        self.bs = Switch()
        self.ch = ctlchan.CtlChannel(self.bs, self.path, "tor1")
        self.peer = None

    def tearDown(self):
        if self.ch.sock:
            self.ch.sock.close()
        if self.peer:
            self.peer.close()
        self.srv.close()
        self.dir.cleanup()

    def accept(self):
        self.ch.retry()
        self.assertTrue(self.ch.connected)
        self.peer, _ = self.srv.accept()
        self.peer.settimeout(2)

    def recv(self):
        return ctlchan.parse(self.peer.recv(4096))

    def pending(self):
        out = []
        self.peer.setblocking(False)
        try:
            while True:
                out.append(ctlchan.parse(self.peer.recv(4096)))
        except BlockingIOError:
            pass
        self.peer.settimeout(2)
        return out

    def test_hello_then_every_heard_port(self):
        self.bs.watch.heard = 0b101
        self.bs.down = {2}
        self.accept()
        self.assertEqual(self.recv(), (ctlchan.HELLO, 0, 0, None, "tor1",
                                       ""))
        self.assertEqual(self.pending(), [
            (ctlchan.LINK_UP, 0, 0, 100, "tor1", "h1"),
            (ctlchan.LINK_DOWN, 0, 0, 300, "tor1", "spine")])

    def test_reports_say_the_state_now(self):
        self.accept()
        self.pending()
        self.bs.down = {1}
        self.bs.commit.pop(1)		# a register no longer in use: no ts
        self.ch.reports([(1, True, None)])
        self.assertEqual(self.pending(),
                         [(ctlchan.LINK_DOWN, 0, 0, None, "tor1", "h2")])

    def test_resume_once_per_epoch_done_every_time(self):
        self.accept()
        self.pending()
        for _ in range(2):
            self.peer.send(ctlchan.msg(ctlchan.RESUME, "ctl", "spine",
                                       epoch=7))
        self.assertEqual(self.ch.readable(), ["spine"])
        self.assertEqual(self.bs.resumes, [2])
        self.assertEqual(self.pending(), [
            (ctlchan.DONE, 7, 0, None, "tor1", "spine")] * 2)
        self.peer.send(ctlchan.msg(ctlchan.RESUME, "ctl", "spine", epoch=8))
        self.ch.readable()
        self.assertEqual(self.bs.resumes, [2, 2])

    def test_bad_messages_are_counted_not_answered(self):
        self.accept()
        self.pending()
        good = ctlchan.msg(ctlchan.RESUME, "ctl", "nosuchport", epoch=3)
        for data in (b"short", good[:-1], b"\0" * len(good), good,
                     ctlchan.msg(ctlchan.RESUME, "ctl", "h1", epoch=0),
                     ctlchan.msg(ctlchan.SHOW, "ctl")):
            self.peer.send(data)
        self.assertEqual(self.ch.readable(), [])
        self.assertEqual(self.ch.stats["bad"], 6)
        self.assertEqual(self.bs.resumes, [])
        self.assertEqual(self.pending(), [])
        self.assertTrue(self.ch.connected)

    def test_failures_and_state_are_for_hosts(self):
        self.accept()
        self.pending()
        self.peer.send(ctlchan.msg(ctlchan.FAIL, "ctl", epoch=1, host=3,
                                   ts=5))
        self.peer.send(ctlchan.msg(ctlchan.STATE, "ctl", epoch=1))
        self.ch.readable()
        self.assertEqual(self.ch.stats["bad"], 0)

    def test_controller_gone_then_back(self):
        self.srv.close()
        os.unlink(self.path)
        self.ch.retry()			# nobody there yet: no error
        self.assertFalse(self.ch.connected)
        self.ch.reports([(0, True, 100)])	# kept for later
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.srv.bind(self.path)
        self.srv.listen(4)
        self.bs.down = {0}
        self.accept()
        got = [self.recv()] + self.pending()
        self.assertEqual(got[0][0], ctlchan.HELLO)
        self.assertIn((ctlchan.LINK_DOWN, 0, 0, 100, "tor1", "h1"), got)

    def test_connection_closed(self):
        self.accept()
        self.pending()
        self.peer.close()
        self.peer = None
        self.ch.readable()
        self.assertFalse(self.ch.connected)

    def test_a_full_socket_keeps_what_it_owes(self):
        self.accept()
        self.pending()
        sent = 0
        while self.ch.send(ctlchan.msg(ctlchan.LINK_UP, "tor1", "h1")):
            sent += 1			# nobody reads: the queue fills
        self.assertTrue(self.ch.connected)
        self.ch.reports([(2, False, 300)])
        self.assertEqual(self.ch.dirty, 0b100)
        for _ in range(sent):
            self.recv()
        self.ch.retry()
        self.assertEqual(self.ch.dirty, 0)

    def test_names(self):
        with self.assertRaises(ValueError):
            ctlchan.CtlChannel(self.bs, self.path, "bad name")
        with self.assertRaises(ValueError):
            ctlchan.CtlChannel(self.bs, "", "tor1")


if __name__ == "__main__":
    unittest.main()
