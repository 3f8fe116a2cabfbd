# SPDX-License-Identifier: GPL-2.0
"""The test rig of the bmv2 twin: one simple_switch in a network namespace
of its own, its ports veth pairs whose far ends the test reads and writes
with AF_PACKET sockets, and the frames a test sends.

    swN (bmv2 port N) <-veth-> hN      the test's end of vector port N
    cpu0 (bmv2 port 64) <-veth-> cpuh  the control plane's (opctl)

Runs as root; in_own_netns() re-runs the calling script in a namespace it
creates and removes, so nothing leaks into the caller's.
"""

import os
import select
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "control"))

import bmv2  # noqa: E402
import opctl  # noqa: E402

NPORTS = 8		# vector ports (bmv2 ports 1..8)
CPU_PORT = 64
THRIFT = 9090
BUILD = os.path.join(HERE, "..", "build")
VCLOCK_JSON = os.path.join(BUILD, "onepipe-vclock.json")

T_DATA, T_BEACON, T_ACK, T_NAK, T_RECALL, T_PROBE, T_QUERY = range(1, 8)
F_UNORDERED, F_NOBARRIER, F_RELIABLE, F_NOCOMMIT, F_ECE = 1, 2, 4, 8, 16
HDR_LEN = 52


def in_own_netns(argv):
    """Re-run ARGV in a fresh network namespace; returns its exit status,
    or None when already inside one (then set it up and go on)."""
    if os.environ.get("OP_P4_INNS") == "1":
        netns_setup()
        return None
    ns = f"opp4{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        env = dict(os.environ, OP_P4_INNS="1")
        return subprocess.run(["ip", "netns", "exec", ns, sys.executable]
                              + argv, env=env).returncode
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def netns_setup():
    """veth pairs swN/hN and cpu0/cpuh, all up; no IPv6 (no stray
    router solicitations on the ports)."""
    def sh(*cmd):
        subprocess.run(cmd, check=True)
    sh("ip", "link", "set", "lo", "up")
    for name in ("all", "default"):
        with open(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6", "w") as f:
            f.write("1")
    pairs = [(f"sw{i}", f"h{i}") for i in range(1, NPORTS + 1)]
    for a, b in pairs + [("cpu0", "cpuh")]:
        sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        for dev in (a, b):
            sh("ip", "link", "set", dev, "up")


def port_sockets():
    """{N: a non-blocking raw socket on hN} for every vector port."""
    socks = {}
    for i in range(1, NPORTS + 1):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                          socket.htons(0x0003))
        s.bind((f"h{i}", 0))
        s.setblocking(False)
        socks[i] = s
    return socks


def start_switch(json_path=VCLOCK_JSON):
    """simple_switch on the rig's ports and a thrift client for it."""
    proc = bmv2.start(json_path,
                      {**{i: f"sw{i}" for i in range(1, NPORTS + 1)},
                       CPU_PORT: "cpu0"},
                      thrift_port=THRIFT,
                      log_path=os.environ.get("OP_BMV2_LOG"))
    return proc, bmv2.Switch(THRIFT, json_path=json_path)


def fence(bs, socks, timeout=5):
    """Send a FENCE through the control plane BS and read every port of
    SOCKS until its copy: [(port number, frame)], everything the switch
    sent before (our own outgoing frames left out)."""
    bs.ctl(opctl.FENCE)
    outs = []
    left = set(range(1, len(bs.ports) + 1))
    deadline = time.monotonic() + timeout
    while left:
        wait = deadline - time.monotonic()
        if wait <= 0:
            raise RuntimeError(f"no fence on ports {sorted(left)}")
        r, _, _ = select.select([socks[i] for i in left], [], [], wait)
        for s in r:
            i = next(k for k, v in socks.items() if v is s)
            while True:
                try:
                    frame, addr = s.recvfrom(4096)
                except BlockingIOError:
                    break
                if addr[2] == socket.PACKET_OUTGOING:
                    continue
                if frame[12:14] == b"\x88\xb5" and frame[14] == opctl.FENCE:
                    left.discard(i)
                    continue
                outs.append((i, frame))
    return outs


def op_hdr(typ, flags, src=0, dst=0, ts=0, barrier=0, commit=0, code=0,
           sport=0, dport=0, seq=0, aux=0, fidx=0, fcnt=0):
    """A 1Pipe header (kernel/core/wire.h)."""
    return struct.pack("!BBBBIIHHQQQIIHH", 1, typ, flags, code, src, dst,
                       sport, dport, ts, barrier, commit, seq, aux, fidx,
                       fcnt)


def ip_csum(b):
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4(src, dst, payload, proto=17, flags_frag=0x4000, options=b""):
    ihl = 5 + len(options) // 4
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0,
                               4 * ihl + len(payload), 0, flags_frag, 64,
                               proto, 0, socket.inet_aton(src),
                               socket.inet_aton(dst)) + options)
    ip[10:12] = struct.pack("!H", ip_csum(bytes(ip)))
    return bytes(ip) + payload


def datagram(port, payload, dport=None, dst_ip=None, udp_len=None):
    """An Ethernet/IPv4/UDP frame from PORT's peer to the switch (to
    another UDP port or address, or with a UDP length of UDP_LEN, when
    given)."""
    dport = port.my_udp if dport is None else dport
    ulen = 8 + len(payload) if udp_len is None else udp_len
    udp = struct.pack("!HHHH", port.peer_udp, dport, ulen, 0) + payload
    return ether(port, ipv4(port.peer_ip, dst_ip or port.my_ip, udp))


def ether(port, payload, ethertype=0x0800):
    return opctl.mac_bytes(port.my_mac) + opctl.mac_bytes(port.peer_mac) + \
        struct.pack("!H", ethertype) + payload


def vector_port(name, role, n, hosts=()):
    """Vector port N's addresses, as replay_vectors.py gives them."""
    return opctl.Port(name, role, hosts, n, my_mac=f"02:00:00:00:00:{n:02x}",
                      my_ip=f"10.0.{n}.1", peer_mac=f"02:00:00:00:01:{n:02x}",
                      peer_ip=f"10.0.{n}.2", my_udp=5640, peer_udp=5650 + n)


class Tap:
    """TAP output; ends with the plan and a summary line."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, text, why=""):
        self.n += 1
        if not cond:
            self.failed += 1
        print(f"{'' if cond else 'not '}ok {self.n} - {text}"
              + (f" # {why}" if why and not cond else ""), flush=True)
        return cond

    def done(self):
        print(f"1..{self.n}")
        print(f"# {self.n - self.failed} passed, {self.failed} failed")
        return 1 if self.failed or not self.n else 0
