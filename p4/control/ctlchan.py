# SPDX-License-Identifier: GPL-2.0
"""The P4 switch's side of the failure controller's channel.

The same conversation as the software switch's (userspace/switch/
swd_ctl.c), on the same channel (userspace/controller/ctl_proto.h: an
AF_UNIX SOCK_SEQPACKET socket, one struct ctl_msg per packet, host byte
order): HELLO {node}; LINK_DOWN / LINK_UP {peer = port name, ts = the
commit register} for the links whose state opctl's LinkWatch changed;
RESUME {epoch, peer} answered by BarrierSwitch.resume() (once per epoch
and port: repeats are answered, not redone) and DONE {epoch, peer}.

The caller's loop never waits for the controller: the socket is
non-blocking, connect included; a report or DONE that cannot go now is
kept and sent again by retry(), which the caller runs every RETRY_S and
which also redials.  After every HELLO the state of every port heard
since the start is told again, and every DONE not yet delivered: a new
controller instance may know nothing of them, and any may hold stale
LINK_DOWNs of ours (swd_ctl.c says why at length).
"""

import errno
import re
import socket
import struct

MAGIC = 0x4F504331		# "OPC1"
VERSION = 1
NAME_LEN = 32
TEXT_LEN = 960
(HELLO, LINK_DOWN, LINK_UP, UNREACH, FAIL, STATE, DONE, RESUME, SHOW,
 SHOW_REPLY, REJOIN, REJOINED, RELAY) = range(1, 14)
F_HAS_TS = 0x1
# struct ctl_msg: magic, version, type, flags, epoch, host, pad, ts,
# node, peer, text
MSG = struct.Struct("=IHHIIIIQ%ds%ds%ds" % (NAME_LEN, NAME_LEN, TEXT_LEN))
RETRY_S = 0.2
RX_BURST = 64
NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,%d}$" % (NAME_LEN - 1))


def msg(type_, node, peer="", epoch=0, host=0, ts=None):
    """One struct ctl_msg as bytes."""
    return MSG.pack(MAGIC, VERSION, type_, 0 if ts is None else F_HAS_TS,
                    epoch, host, 0, ts or 0, node.encode(), peer.encode(),
                    b"")


def parse(data):
    """(type, epoch, host, ts or None, node, peer), or None if malformed
    (ctl_msg_check(): length, magic, version, type, names)."""
    if len(data) != MSG.size:
        return None
    magic, ver, typ, flags, epoch, host, _, ts, node, peer, _ = \
        MSG.unpack(data)
    if magic != MAGIC or ver != VERSION or not HELLO <= typ <= RELAY:
        return None
    names = []
    for raw in (node, peer):
        if b"\0" not in raw:
            return None
        name = raw.split(b"\0", 1)[0].decode("ascii", "replace")
        if name and not NAME_RE.match(name):
            return None
        names.append(name)
    return typ, epoch, host, ts if flags & F_HAS_TS else None, *names


class CtlChannel:
    """One switch's connection to onepiped.

    bs: the opctl.BarrierSwitch; path, node: --controller and --node;
    log: a function taking one line of text.
    """

    def __init__(self, bs, path, node, log=lambda text: None):
        if not NAME_RE.match(node):
            raise ValueError(f"bad --node {node!r}")
        if not path or len(path.encode()) >= 108:
            raise ValueError(f"bad --controller path {path!r}")
        self.bs, self.path, self.node, self.log = bs, path, node, log
        self.sock = None
        self.dirty = 0		# ports whose report is owed
        self.owed = {}		# port -> epoch of a DONE not yet sent
        self.resumed = {}	# port -> epoch last carried out
        self.stats = dict(connects=0, reports=0, resumes=0, dones=0, bad=0)

    def fileno(self):
        return self.sock.fileno() if self.sock else -1

    @property
    def connected(self):
        return self.sock is not None

    # ---- the connection ----

    def lost(self, why):
        self.sock.close()
        self.sock = None
        self.log(f"controller {self.path}: {why}; retrying")

    def send(self, data):
        """Send without waiting: False if it must wait for retry()."""
        if not self.sock:
            return False
        try:
            n = self.sock.send(data, socket.MSG_DONTWAIT)
        except OSError as e:
            if e.errno in (errno.EAGAIN, errno.EINTR):
                return False
            self.lost(e.strerror)
            return False
        if n != len(data):
            self.lost("short send")
            return False
        return True

    def dial(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET |
                          socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC)
        try:
            s.connect(self.path)
        except OSError:
            s.close()
            return
        self.sock = s
        self.stats["connects"] += 1
        self.log(f"controller {self.path}: connected as {self.node}")
        if not self.send(msg(HELLO, self.node)):
            if self.sock:
                self.lost("HELLO not sent")
            return
        self.sync(self.bs.watch.heard)

    def retry(self):
        """Every RETRY_S: redial, or send what is still owed."""
        if not self.sock:
            self.dial()
        else:
            self.sync(0)

    # ---- what the switch tells ----

    def send_report(self, idx):
        down, commit = self.bs.port_report(idx)
        m = msg(LINK_DOWN if down else LINK_UP, self.node,
                self.bs.ports[idx].name, ts=commit)
        if not self.send(m):
            self.dirty |= 1 << idx
            return
        self.dirty &= ~(1 << idx)
        self.stats["reports"] += 1

    def send_done(self, idx):
        m = msg(DONE, self.node, self.bs.ports[idx].name,
                epoch=self.owed[idx])
        if self.send(m):
            del self.owed[idx]
            self.stats["dones"] += 1

    def sync(self, ports):
        """The current state of PORTS and of every port owed one, then
        every DONE owed."""
        self.dirty |= ports
        for idx in range(len(self.bs.ports)):
            if self.sock and self.dirty >> idx & 1:
                self.send_report(idx)
        for idx in sorted(self.owed):
            if self.sock:
                self.send_done(idx)

    def reports(self, reports):
        """After every tick: the reports BarrierSwitch.tick() returned."""
        for idx, down, _ in reports:
            self.log(f"port {self.bs.ports[idx].name} link "
                     f"{'down' if down else 'up'}")
            self.dirty |= 1 << idx
        if reports:
            self.sync(0)

    # ---- what the controller says ----

    def readable(self):
        """The socket is readable; returns the ports resumed, so that
        the caller can push their commit advance at once."""
        resumed = []
        for _ in range(RX_BURST):
            try:
                data = self.sock.recv(MSG.size + 1, socket.MSG_DONTWAIT)
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EINTR):
                    self.lost(e.strerror)
                return resumed
            if not data:
                self.lost("connection closed")
                return resumed
            m = parse(data)
            if m is None:
                self.stats["bad"] += 1
                continue
            typ, epoch, _, _, _, peer = m
            if typ == RESUME:
                if self.resume(epoch, peer):
                    resumed.append(peer)
                if not self.sock:
                    return resumed
            elif typ not in (FAIL, STATE):	# FAIL, STATE: the hosts'
                self.stats["bad"] += 1
        return resumed

    def resume(self, epoch, peer):
        """RESUME of port PEER: carried out once per epoch, answered
        every time.  True if it was carried out now."""
        idx = next((p.idx for p in self.bs.ports if p.name == peer), None)
        if idx is None or not epoch:
            self.stats["bad"] += 1
            return False
        new = self.resumed.get(idx) != epoch
        if new:
            self.bs.resume(idx)
            self.resumed[idx] = epoch
            self.stats["resumes"] += 1
            self.log(f"port {peer} resumed (epoch {epoch})")
        self.owed[idx] = epoch
        self.send_done(idx)
        return new
