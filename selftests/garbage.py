#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send malformed 1Pipe datagrams to a UDP port (selftests/garbage.sh).

    garbage.py --to ADDR[:PORT] [--spoof ADDR:PORT] [--count N] [--seed S]
               [--big]

Every datagram is invalid under kernel/core/wire.c's rules: too short,
bad version, unknown type, unknown flags, out-of-range lengths and
fragment counts, timestamps above 48 bits, zero addresses, random bytes.
With --spoof the datagrams are sent through a raw IPv4 socket with that
source address and port (the address a switch or host expects its peer
to use, so they reach the parser instead of an unknown-source check).
--big adds datagrams far above the MTU (normal socket only).
Prints the number of datagrams sent.
"""

import argparse
import random
import socket
import struct
import sys
import time

HDR = 52


def header(rng, version=1, ptype=1, flags=0, src=1, dst=2, sport=1, dport=1,
           ts=None, barrier=None, commit=0, seq=0, aux=0, fidx=0, fcnt=1):
    ts = rng.getrandbits(48) if ts is None else ts
    barrier = rng.getrandbits(48) if barrier is None else barrier
    return struct.pack(">BBBBIIHHQQQIIHH", version, ptype, flags, 0, src,
                       dst, sport, dport, ts, barrier, commit, seq, aux,
                       fidx, fcnt)


def kinds(rng, big):
    """One generator per kind of defect; each returns a datagram."""
    k = {
        "short": lambda: rng.randbytes(rng.randrange(0, HDR)),
        "version": lambda: header(rng, version=rng.choice([0, 2, 3, 0x7f,
                                                          0xff])),
        # types and flags the wire format does not define (wire.h)
        "type": lambda: header(rng, ptype=rng.choice([0, 7, 8, 0x80,
                                                      0xff])),
        "flags": lambda: header(rng, flags=rng.choice([0x20, 0x40, 0x80,
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
        "random": lambda: bytes([rng.choice([0, 2, 0x45, 0xff])])
        + rng.randbytes(rng.randrange(HDR, 1400)),
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


def addr(s, default_port=5640):
    host, _, port = s.partition(":")
    return (host, int(port) if port else default_port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--to", required=True)
    ap.add_argument("--spoof")
    ap.add_argument("--count", type=int, default=10,
                    help="datagrams per kind")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--big", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    dst = addr(a.to)
    if a.spoof:
        src = addr(a.spoof)
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                          socket.IPPROTO_RAW)
        send = lambda p: s.sendto(udp_raw(src, dst, p), (dst[0], 0))
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        send = lambda p: s.sendto(p, dst)
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
