#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send malformed 1Pipe datagrams to a UDP port (selftests/garbage.sh).

    garbage.py --to ADDR[:PORT] [--spoof ADDR:PORT] [--count N] [--seed S]
               [--big] [--late HOST:PORT] [--split HOST:PORT]

Every datagram is invalid under kernel/core/wire.c's rules: too short,
bad version, unknown type, unknown flags, out-of-range lengths and
fragment counts, timestamps above 48 bits, zero addresses, random bytes,
bundles with broken framing or nested bundles.
With --spoof the datagrams are sent through a raw IPv4 socket with that
source address and port (the address a switch or host expects its peer
to use, so they reach the parser instead of an unknown-source check).
--big adds datagrams far above the MTU (normal socket only).
Prints the number of datagrams sent.

--late sends, instead, one well-formed bundle of two best-effort
messages to 1Pipe host HOST, port PORT, from host LATE_SRC (no host of
the fabric: its record starts fresh), neither with a commit barrier:
the first stamped 32 ms ahead of now with a barrier 31 ms ahead, the
second stamped 30.5 ms ahead without a barrier, below only the first's.
Taken one by one, as a receiver must take a bundle's packets, the
first's barrier applies before the second is checked: the second is
late (rx_late), never delivered; the first is delivered once the
fabric's barrier passes it.

--split sends, instead, one well-formed bundle of two best-effort
messages to HOST, PORT, from host SPLIT_SRC (no host of the fabric), a
big one (2,000 bytes) and a small one (8), stamped 32 ms ahead, without
barriers: on a link whose MTU lets the datagram through, a host clones
the big one out of it and copies the small one (kernel/transport_udp.c,
OP_UDP_PIN_MAX); both are delivered once the fabric's barrier passes
them.

The verbs transport carries each 1Pipe packet as the payload of a RoCEv2
UD SEND, and nothing listens on UDP 5640.  With --roce the same
malformed payloads go out as valid RoCEv2 UD SEND Only frames (Ethernet /
IPv4 / UDP 4791 / BTH opcode 0x64 / DETH, pad count and ICRC as Linux's
rxe computes them) written whole to an interface with an AF_PACKET
socket, so that an RDMA device accepts them and hands them to onepipe.ko
(or a switch in --roce mode parses them):

    garbage.py [--count N] [--seed S] --roce IFACE[,OPTION]... ...

One --roce per target interface (one process serves them all: Python
starts slowly in the test guest), each with options:

    netns=NS    the interface is in that network namespace (ip netns)
    watch=IF    count the frames of each category that arrive on IF, in
                the namespace garbage.py runs in
    dmac=MAC, src=IP, dst=IP, qpn=N, qkey=K   the frames' addresses
                (default broadcast, 0.0.0.0, QPN 1, ONEPIPE_VERBS_QKEY)
    max=N       cut payloads to N bytes (what the receiving QP takes:
                dev show's mtu; default 1400)
    bad-keys    after each valid frame, a copy with a wrong ICRC and one
                with a wrong Q_Key (the receiving rxe must drop both)
    not-roce    add frames that are not RoCEv2 UD SENDs at all: other
                EtherTypes and IP protocols, UDP to other ports, other
                BTH opcodes, broken IPv4 or BTH headers

Prints a line per target: IFACE and NAME=COUNT for good (valid frames),
short (of which payloads shorter than a 1Pipe header), bad_icrc,
bad_qkey, other, and with watch= seen_good, seen_bad_icrc, seen_bad_qkey.
"""

import argparse
import ctypes
import os
import random
import socket
import struct
import sys
import time
import zlib

HDR = 52


def header(rng, version=1, ptype=1, flags=0, src=1, dst=2, sport=1, dport=1,
           ts=None, barrier=None, commit=0, seq=0, aux=0, fidx=0, fcnt=1):
    ts = rng.getrandbits(48) if ts is None else ts
    barrier = rng.getrandbits(48) if barrier is None else barrier
    return struct.pack(">BBBBIIHHQQQIIHH", version, ptype, flags, 0, src,
                       dst, sport, dport, ts, barrier, commit, seq, aux,
                       fidx, fcnt)


def bundle(entries, count=None, reserved=0, tail=b""):
    """A bundle of packets (kernel/core/wire.h), its framing as asked."""
    body = b"".join(struct.pack(">H", len(e)) + e for e in entries)
    n = len(entries) if count is None else count
    return struct.pack(">BBH", 0x81, n, reserved) + body + tail


LATE_SRC = 200


def late_bundle(host, port):
    """See --late in the module's docstring."""
    mask = (1 << 48) - 1
    now = time.time_ns()
    nocommit, nobarrier = 0x08, 0x02      # OP_F_* (kernel/core/wire.h)

    def data(seq, ahead_ns, barrier_ahead_ns):
        return header(None, src=LATE_SRC, dst=host, sport=1, dport=port,
                      flags=nocommit | (0 if barrier_ahead_ns else nobarrier),
                      ts=(now + ahead_ns) & mask,
                      barrier=(now + barrier_ahead_ns) & mask
                      if barrier_ahead_ns else 0,
                      seq=seq, aux=8) + b"too late"
    return bundle([data(1, 32_000_000, 31_000_000),
                   data(2, 30_500_000, 0)])


SPLIT_SRC = 201


def split_bundle(host, port):
    """See --split in the module's docstring."""
    ts = (time.time_ns() + 32_000_000) & ((1 << 48) - 1)
    flags = 0x08 | 0x02         # OP_F_NOCOMMIT | OP_F_NOBARRIER

    def data(seq, payload):
        return header(None, src=SPLIT_SRC, dst=host, sport=1, dport=port,
                      flags=flags, ts=ts, barrier=0, seq=seq,
                      aux=len(payload)) + payload
    return bundle([data(1, bytes(range(250)) * 8), data(2, b"small me")])


def kinds(rng, big):
    """One generator per kind of defect; each returns a datagram."""
    beacon = lambda: header(rng, ptype=2)
    k = {
        "short": lambda: rng.randbytes(rng.randrange(0, HDR)),
        "version": lambda: header(rng, version=rng.choice([0, 2, 3, 0x7f,
                                                          0xff])),
        # types and flags the wire format does not define (wire.h)
        "type": lambda: header(rng, ptype=rng.choice([0, 8, 9, 0x80,
                                                      0xff])),
        "flags": lambda: header(rng, flags=rng.choice([0x40, 0x60, 0x80,
                                                       0xff])),
        # DATA whose length fields cannot be right
        "huge_len": lambda: header(rng, aux=rng.choice([65537, 1 << 20,
                                                        0xffffffff]))
        + rng.randbytes(16),
        "len_mismatch": lambda: header(rng, aux=1000) + rng.randbytes(10),
        "frag_cnt": lambda: header(rng, fcnt=rng.choice([0, 1025, 0xffff]),
                                   aux=8) + rng.randbytes(8),
        "frag_idx": lambda: header(rng, fidx=5, fcnt=2, aux=16)
        + rng.randbytes(8),
        "ts_bits": lambda: header(rng, ts=(1 << 63) | 5, aux=4)
        + rng.randbytes(4),
        "zero_addr": lambda: header(rng, src=0, dst=0, aux=4)
        + rng.randbytes(4),
        "beacon_payload": lambda: header(rng, ptype=2) + rng.randbytes(7),
        "nak_code": lambda: header(rng, ptype=4, flags=0) [:3]
        + b"\x09" + header(rng, ptype=4)[4:],
        # a reliable NAK cannot say EXPIRED (best effort's deadlines)
        "nak_expired_rdm": lambda: header(rng, ptype=4, flags=4) [:3]
        + b"\x01" + header(rng, ptype=4)[4:],
        # QUERY: at most 64 messages, best effort only (wire.h)
        "query_range": lambda: header(rng, ptype=7, seq=10,
                                      aux=rng.choice([74, 9, 0xffffffff])),
        "query_reliable": lambda: header(rng, ptype=7, flags=4),
        "random": lambda: bytes([rng.choice([0, 2, 0x45, 0xff])])
        + rng.randbytes(rng.randrange(HDR, 1400)),
        # Bundles whose framing is wrong are dropped whole, their
        # (valid) packets unread: a short preamble, a count that is not
        # the entries', reserved bits, an entry shorter than a header,
        # one running past the end, bytes after the last.
        "bundle_short": lambda: b"\x81" + rng.randbytes(rng.randrange(4)),
        "bundle_count": lambda: bundle([beacon(), beacon()],
                                       count=rng.choice([0, 1, 3, 255])),
        "bundle_reserved": lambda: bundle([beacon(), beacon()],
                                          reserved=rng.choice([1, 0x8000])),
        "bundle_entry_short": lambda: bundle([beacon(), rng.randbytes(10)]),
        "bundle_overrun": lambda: bundle([beacon(), beacon()])[:-20],
        "bundle_trailing": lambda: bundle([beacon(), beacon()],
                                          tail=rng.randbytes(3)),
        # well framed, but each packet in it is a bundle: an unknown
        # version to the packet parser (bundles do not nest)
        "bundle_nested": lambda: bundle([bundle([beacon(), beacon()]),
                                         bundle([beacon(), beacon()])]),
    }
    if big:
        k["big"] = lambda: rng.randbytes(rng.randrange(9000, 65000))
    return k


def udp_raw(src, dst, payload):
    """IPv4 + UDP header; the kernel fills in IP length and checksum."""
    udp = struct.pack(">HHHH", src[1], dst[1], 8 + len(payload), 0)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 0, 0, 0, 64,
                     socket.IPPROTO_UDP, 0, socket.inet_aton(src[0]),
                     socket.inet_aton(dst[0]))
    return ip + udp + payload


# ---- RoCEv2 (verbs transport) ------------------------------------------

ROCE_PORT = 4791
UD_SEND_ONLY = 0x64
ETH_P_IP = 0x0800
ETH_P_ALL = 0x0003
CLONE_NEWNET = 0x40000000
# rxe's ICRC seed: a CRC-32 (no final inversion) of 8 bytes of 0xff, the
# masked LRH of RoCEv1, from ~0.  zlib.crc32() inverts on the way in and
# out, so continuing from ~seed yields the ICRC (the inverted CRC) as is.
ICRC_SEED = 0xdebb20e3
# The UDP source port tells the categories apart on --watch (rxe ignores
# it; its own are 0xc000 and up, like the switches' beacons).
SPORT = {"good": 0xbad0, "bad_icrc": 0xbad1, "bad_qkey": 0xbad2}

# A 52-byte UD SEND that rxe sent (userspace/switch/tests/test_roce.c's
# known answers): icrc() must reproduce its last four bytes.
RXE_FRAME = bytes.fromhex(
    "16645cd5cd5d0681ffe1f6ed08004500006808dd400040111a0b0a4d0102"
    "0a4d0202df9412b7005400006400ffff00000011007aeb07111111110000"
    "00117b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b"
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b16267b69")


def ip_csum(hdr):
    """The IPv4 header checksum over the whole header, options included."""
    s = sum(struct.unpack(">%dH" % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def icrc(ip_to_pad):
    """The ICRC of IPv4 header .. pad: the fields a router may change
    (TOS, TTL, IPv4 checksum, UDP checksum, the BTH byte after the P_Key)
    are hashed as all ones.  Goes on the wire little endian."""
    m = bytearray(ip_to_pad[:40])
    m[1] = m[8] = m[10] = m[11] = m[26] = m[27] = m[32] = 0xff
    return zlib.crc32(bytes(m) + ip_to_pad[40:], ~ICRC_SEED & 0xffffffff)


def check_icrc():
    ip = RXE_FRAME[14:-4]
    want = struct.unpack("<I", RXE_FRAME[-4:])[0]
    if icrc(ip) != want or zlib.crc32(b"\xff" * 8) != ~ICRC_SEED & 0xffffffff:
        sys.exit("garbage.py: ICRC does not match rxe's known answer")


def ipv4(src, dst, proto, body, ihl=5, frag=0x4000, tos=0x02):
    """An IPv4 header (ECT(0), DF, TTL 64) in front of body."""
    opts = b"\x01" * (4 * (ihl - 5))  # NOPs
    h = bytearray(struct.pack(">BBHHHBBH4s4s", 0x40 | ihl, tos,
                              4 * ihl + len(body), 0, frag, 64, proto, 0,
                              src, dst) + opts)
    h[10:12] = struct.pack(">H", ip_csum(bytes(h)))
    return bytes(h) + body


class Roce:
    """Frames towards one receiver: MACs, IPv4 addresses, QP and Q_Key."""

    def __init__(self, t, smac):
        self.dmac = bytes.fromhex(t["dmac"].replace(":", ""))
        self.smac = smac
        self.src = socket.inet_aton(t["src"])
        self.dst = socket.inet_aton(t["dst"])
        self.qpn = t["qpn"]
        self.qkey = t["qkey"]
        self.psn = 0

    def eth(self, etype, body):
        return self.dmac + self.smac + struct.pack(">H", etype) + body

    def frame(self, payload, sport=SPORT["good"], opcode=UD_SEND_ONLY,
              qkey=None, icrc_xor=0, tver=0):
        """A UD SEND Only (or another opcode, BTH + DETH all the same)
        around payload, padded to 4 bytes, with a correct ICRC unless
        icrc_xor flips some of its bits."""
        pad = -len(payload) % 4
        self.psn = (self.psn + 1) & 0xffffff
        bth = struct.pack(">BBHII", opcode, pad << 4 | tver, 0xffff,
                          self.qpn & 0xffffff, self.psn)
        deth = struct.pack(">II", self.qkey if qkey is None else qkey, 1)
        rest = bth + deth + payload + bytes(pad)
        udp = struct.pack(">HHHH", sport, ROCE_PORT, 8 + len(rest) + 4, 0)
        # IPv4's length counts the ICRC, which the ICRC does not cover
        ip = ipv4(self.src, self.dst, socket.IPPROTO_UDP,
                  udp + rest + bytes(4))[:-4]
        crc = icrc(ip) ^ icrc_xor
        return self.eth(ETH_P_IP, ip + struct.pack("<I", crc))

    def udp(self, dport, payload):
        udp = struct.pack(">HHHH", SPORT["good"], dport, 8 + len(payload),
                          0)
        return self.eth(ETH_P_IP, ipv4(self.src, self.dst,
                                       socket.IPPROTO_UDP, udp + payload))


def not_roce(rng, r, payload):
    """Frames that are no RoCEv2 UD SEND Only, one generator per kind;
    payload() is a malformed 1Pipe packet to put where one could go."""
    def broken(change):
        f = bytearray(r.frame(payload()))
        change(f)
        f[24:26] = b"\0\0"
        f[24:26] = struct.pack(">H", ip_csum(bytes(f[14:34])))
        return bytes(f)
    return {
        "ethertype": lambda: r.eth(rng.choice([0x88b5, 0x88b6, 0x9000]),
                                   rng.randbytes(rng.randrange(46, 1400))),
        "arp": lambda: r.eth(0x0806, rng.randbytes(28)),
        "ipv6": lambda: r.eth(0x86dd, rng.randbytes(rng.randrange(40,
                                                                  400))),
        "ip_proto": lambda: r.eth(ETH_P_IP, ipv4(r.src, r.dst,
                                                 rng.choice([1, 6, 47]),
                                                 rng.randbytes(64))),
        # the 1Pipe UDP port, and RoCE's neighbours
        "udp_port": lambda: r.udp(rng.choice([5640, 4790, 4792, 53]),
                                  payload()),
        "opcode": lambda: r.frame(payload(), opcode=rng.choice(
            [0x00, 0x04, 0x0a, 0x65, 0x81, 0xe4])),
        "bth_version": lambda: r.frame(payload(), tver=rng.choice([1, 15])),
        "ip_options": lambda: r.eth(ETH_P_IP, ipv4(
            r.src, r.dst, socket.IPPROTO_UDP,
            r.frame(payload())[34:], ihl=6)),
        "ip_fragment": lambda: broken(lambda f: f.__setitem__(
            slice(20, 22), b"\x20\x00")),
        # a UDP length that disagrees with IPv4's, or no room for a BTH
        "udp_len": lambda: broken(lambda f: f.__setitem__(
            slice(38, 40), struct.pack(">H", rng.randrange(8, 20)))),
    }


def enter_netns(path):
    """Move this process into the network namespace at path."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET):
        sys.exit("garbage.py: setns %s: %s" %
                 (path, os.strerror(ctypes.get_errno())))
    os.close(fd)


def packet_socket(ifname, proto=0):
    """An AF_PACKET socket on ifname; protocol 0 receives nothing."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(proto))
    if proto:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((ifname, proto))
    return s


def watch_count(w, seen):
    """Count our frames that arrived on the --watch socket, by UDP source
    port (IPv4 / UDP to 4791 only)."""
    names = {v: k for k, v in SPORT.items()}
    w.setblocking(False)
    while True:
        try:
            f, a = w.recvfrom(65536)
        except BlockingIOError:
            return
        if a[2] == socket.PACKET_OUTGOING or len(f) < 38 or \
           f[12:14] != b"\x08\x00" or f[23] != socket.IPPROTO_UDP:
            continue
        sport, dport = struct.unpack(">HH", f[34:38])
        if dport == ROCE_PORT and sport in names:
            seen["seen_" + names[sport]] += 1


TARGET_KEYS = {"netns": str, "watch": str, "dmac": str, "src": str,
               "dst": str, "qpn": lambda v: int(v, 0),
               "qkey": lambda v: int(v, 0), "max": int}
TARGET_FLAGS = ("bad-keys", "not-roce")


def target(spec):
    """--roce IFACE[,KEY=VALUE|FLAG]... (see the usage above)."""
    iface, *opts = spec.split(",")
    t = {"iface": iface, "netns": None, "watch": None,
         "dmac": "ff:ff:ff:ff:ff:ff", "src": "0.0.0.0", "dst": "0.0.0.0",
         "qpn": 1, "qkey": 0x0001f1fe, "max": 1400, "bad-keys": False,
         "not-roce": False}
    for o in opts:
        k, eq, v = o.partition("=")
        if eq and k in TARGET_KEYS:
            t[k] = TARGET_KEYS[k](v)
        elif not eq and k in TARGET_FLAGS:
            t[k] = True
        else:
            raise argparse.ArgumentTypeError("bad --roce option " + o)
    return t


def open_target(t, home):
    """The target's sockets: --watch in our own namespace (home), the
    one to send with in netns=."""
    enter_netns(home)
    t["w"] = packet_socket(t["watch"], ETH_P_ALL) if t["watch"] else None
    if t["netns"]:
        enter_netns("/run/netns/" + t["netns"])
    t["s"] = packet_socket(t["iface"])
    t["r"] = Roce(t, t["s"].getsockname()[4])  # the interface's MAC
    t["n"] = dict.fromkeys(["good", "short", "bad_icrc", "bad_qkey",
                            "other"], 0)
    if t["w"]:
        t["n"].update({"seen_" + k: 0 for k in SPORT})


def drain(targets):
    for t in targets:
        if t["w"]:
            watch_count(t["w"], t["n"])


def roce_send(targets, t, rng, count):
    """count rounds of every kind towards target t."""
    gen = kinds(rng, False)
    r, n = t["r"], t["n"]

    def payload():
        return rng.choice(list(gen.values()))()[:t["max"]]

    def send(frame, what):
        t["s"].send(frame)
        n[what] += 1
        time.sleep(0.002)  # see main()
        drain(targets)

    other = not_roce(rng, r, payload) if t["not-roce"] else {}
    for _ in range(count):
        for make in gen.values():
            p = make()[:t["max"]]
            send(r.frame(p), "good")
            n["short"] += len(p) < HDR
            if t["bad-keys"]:
                send(r.frame(p, SPORT["bad_icrc"],
                             icrc_xor=1 << rng.randrange(32)), "bad_icrc")
                send(r.frame(p, SPORT["bad_qkey"],
                             qkey=t["qkey"] ^ rng.choice([1, 0x10000,
                                                          0x80000000])),
                     "bad_qkey")
        for make in other.values():
            send(make(), "other")


def roce_main(a, rng):
    check_icrc()
    home = "/proc/self/ns/net"
    home_fd = os.open(home, os.O_RDONLY)
    home = "/proc/self/fd/%d" % home_fd
    for t in a.roce:
        open_target(t, home)
    for t in a.roce:
        roce_send(a.roce, t, rng, a.count)
    time.sleep(0.5)
    drain(a.roce)
    for t in a.roce:
        print(t["iface"], " ".join("%s=%d" % kv for kv in t["n"].items()))
    return 0


def addr(s, default_port=5640):
    host, _, port = s.partition(":")
    return (host, int(port) if port else default_port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--to")
    ap.add_argument("--spoof")
    ap.add_argument("--count", type=int, default=10,
                    help="datagrams per kind")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--roce", type=target, action="append",
                    metavar="IFACE[,OPTION]...")
    ap.add_argument("--late", type=lambda v: addr(v, None),
                    metavar="HOST:PORT")
    ap.add_argument("--split", type=lambda v: addr(v, None),
                    metavar="HOST:PORT")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    if a.roce:
        return roce_main(a, rng)
    if not a.to:
        ap.error("--to or --roce is required")
    dst = addr(a.to)
    if a.spoof:
        src = addr(a.spoof)
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                          socket.IPPROTO_RAW)
        send = lambda p: s.sendto(udp_raw(src, dst, p), (dst[0], 0))
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        send = lambda p: s.sendto(p, dst)
    if a.late or a.split:
        send(late_bundle(int(a.late[0]), a.late[1]) if a.late else
             split_bundle(int(a.split[0]), a.split[1]))
        print(1)
        return 0
    gen = kinds(rng, a.big and not a.spoof)
    n = 0
    for _ in range(a.count):
        for make in gen.values():
            send(make())
            n += 1
            # Pace: the receiver must see every datagram, not an
            # overflowing socket buffer.
            time.sleep(0.002)
    print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
