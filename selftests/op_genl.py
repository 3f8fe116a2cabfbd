#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Talk to onepipe.ko's generic netlink family from the selftests.

    op_genl.py fail --epoch E --host H --ts T [--omit ATTR]... [--junk]
    op_genl.py fail --epoch E --host H --start-file F --after-ms A
                    --ahead-ms D
    op_genl.py fail-get
    op_genl.py rejoin --host H [--epoch E] [--ts T]
    op_genl.py listen --count N --timeout SEC
    op_genl.py relay --src H --dst H [--type T] [--flags F] [--seq N]
                     [--ts T] [--payload N] [--raw HEX] [--short]

fail: send ONEPIPE_CMD_FAIL (attributes raw, so that tests can send what
the onepipe tool never would: --omit leaves an attribute out, --junk adds
one the command does not take, --ts-u32 sends the timestamp as 4 bytes);
prints "errno <n> <extack message>" (0 on success) and exits 0 either
way, so the caller checks the errno.  Timed (--ahead-ms): wait until file
F holds a CLOCK_REALTIME ns time (selftests' traffic_go writes the round's
start there), sleep until A ms after it, then send the failure stamped D ms
ahead of that moment; a second line says "fail_ts <ts> sent <ns> acked
<ns>".  Started before the round, python's own start-up (seconds in a
loaded guest) then delays nothing.
fail-get: dump ONEPIPE_CMD_FAIL_GET, one JSON object per failure.
rejoin: send ONEPIPE_CMD_REJOIN; prints "errno <n> <extack>" and, for
this host's own id, "first <ts>" (the new incarnation's first stamp).
relay: send ONEPIPE_CMD_RELAY with a packet built from the options (a
1Pipe header, version 1, type T default DATA, flags F default
reliable, then N payload bytes), or --raw bytes as they are, or (--short)
a packet shorter than a header; prints "errno <n> <extack>".
listen: join the "ctl" multicast group, print each event as one JSON
object ({"cmd": ..., attrs...}) until N events or SEC seconds; prints
"ready" first, once it is listening.
Numbers come from uapi/linux/onepipe.h (kept in step by hand: this file
is small on purpose).
"""
import argparse
import json
import os
import select
import socket
import struct
import sys
import time

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
CTRL_ATTR_MCAST_GROUPS = 7
CTRL_ATTR_MCAST_GRP_NAME = 1
CTRL_ATTR_MCAST_GRP_ID = 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
NETLINK_ADD_MEMBERSHIP = 1
NETLINK_EXT_ACK = 11
SOL_NETLINK = 270
NLMSGERR_ATTR_MSG = 1
NLMSGERR_ATTR_MISS_TYPE = 5

# enum onepipe_cmd
CMD = {"FAIL": 8, "FAIL_GET": 9, "EV_LINK": 10, "EV_UNREACH": 11,
       "EV_FAIL_DONE": 12, "REJOIN": 13, "EV_RELAY": 14, "RELAY": 15}
CMD_NAME = {v: k for k, v in CMD.items()}
# enum onepipe_attr
A = {"HOST_ID": 1, "EPOCH": 32, "FAIL_HOST": 33, "FAIL_TS": 34,
     "LINK_UP": 35, "LINK_COMMIT": 36, "PEER_HOST": 37, "CONTROLLED": 38,
     "FAIL_PENDING": 39, "PACKET": 40}
A_NAME = {v: k for k, v in A.items()}
U64_ATTRS = {"FAIL_TS", "LINK_COMMIT"}


def attr(t, payload):
    n = 4 + len(payload)
    return struct.pack("=HH", n, t) + payload + b"\0" * ((4 - n % 4) % 4)


def parse_attrs(b):
    out = {}
    while len(b) >= 4:
        n, t = struct.unpack_from("=HH", b)
        if n < 4:
            break
        out[t & 0x3fff] = b[4:n]
        b = b[(n + 3) & ~3:]
    return out


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                               NETLINK_GENERIC)
        self.s.bind((0, 0))
        self.s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.seq = 1
        self.fam, self.groups = self.resolve("onepipe")

    def send(self, ty, flags, cmd, attrs=b"", version=1):
        self.seq += 1
        body = struct.pack("=BBH", cmd, version, 0) + attrs
        hdr = struct.pack("=IHHII", 16 + len(body), ty, flags, self.seq, 0)
        self.s.send(hdr + body)

    def msgs(self):
        data = self.s.recv(65536)
        while len(data) >= 16:
            n, ty, flags, seq, pid = struct.unpack_from("=IHHII", data)
            yield ty, flags, data[16:n]
            data = data[(n + 3) & ~3:]

    def resolve(self, name):
        self.send(GENL_ID_CTRL, NLM_F_REQUEST, CTRL_CMD_GETFAMILY,
                  attr(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0"))
        for ty, _, body in self.msgs():
            if ty == NLMSG_ERROR:
                sys.exit("family %s: errno %d" %
                         (name, -struct.unpack_from("=i", body)[0]))
            a = parse_attrs(body[4:])
            fam = struct.unpack("=H", a[CTRL_ATTR_FAMILY_ID][:2])[0]
            groups = {}
            for g in parse_attrs(a.get(CTRL_ATTR_MCAST_GROUPS, b"")).values():
                ga = parse_attrs(g)
                groups[ga[CTRL_ATTR_MCAST_GRP_NAME].rstrip(b"\0").decode()] = \
                    struct.unpack("=I", ga[CTRL_ATTR_MCAST_GRP_ID])[0]
            return fam, groups
        sys.exit("no answer resolving " + name)

    def ack(self, replies=None):
        while True:
            for ty, flags, body in self.msgs():
                if ty != NLMSG_ERROR:
                    if replies is not None:
                        replies.append(decode(body))
                    continue
                return self.error(flags, body)

    @staticmethod
    def error(flags, body):
        err = -struct.unpack_from("=i", body)[0]
        msg = ""
        if flags & 0x200:	# NLM_F_ACK_TLVS
            # after the error: the request's header if capped
            # (NLM_F_CAPPED), else the whole request, echoed
            off = 16 if flags & 0x100 else \
                (struct.unpack_from("=I", body, 4)[0] + 3) & ~3
            tl = parse_attrs(body[4 + off:])
            msg = tl.get(NLMSGERR_ATTR_MSG, b"").rstrip(b"\0").decode()
            # A missing attribute is named by type, not by a text.
            if not msg and NLMSGERR_ATTR_MISS_TYPE in tl:
                msg = "missing attribute %d" % struct.unpack(
                    "=I", tl[NLMSGERR_ATTR_MISS_TYPE][:4])[0]
        return err, msg


def decode(body):
    cmd = body[0]
    out = {"cmd": CMD_NAME.get(cmd, cmd)}
    for t, v in parse_attrs(body[4:]).items():
        name = A_NAME.get(t)
        if not name:
            continue
        if name == "PACKET":
            out["packet"] = v.hex()
            continue
        out[name.lower()] = struct.unpack("=Q" if name in U64_ATTRS
                                          else "=I", v[:8 if name in
                                                       U64_ATTRS else 4])[0]
    return out


def timed_fail_ts(start_file, after_ms, ahead_ms):
    """Wait for the round's start in @start_file, then @after_ms more;
    return the 48-bit timestamp @ahead_ms after that moment."""
    while True:
        try:
            with open(start_file) as f:
                start = int(f.read())
            break
        except (FileNotFoundError, ValueError):
            time.sleep(0.05)
    delay = start + after_ms * 10**6 - time.time_ns()
    if delay > 0:
        time.sleep(delay / 1e9)
    return (time.time_ns() + ahead_ms * 10**6) & ((1 << 48) - 1)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="op", required=True)
    f = sub.add_parser("fail")
    f.add_argument("--epoch", type=int, default=1)
    f.add_argument("--host", type=int, required=True)
    f.add_argument("--ts", type=int)
    f.add_argument("--start-file")
    f.add_argument("--after-ms", type=int, default=0)
    f.add_argument("--ahead-ms", type=int)
    f.add_argument("--omit", action="append", default=[])
    f.add_argument("--junk", action="store_true")
    f.add_argument("--ts-u32", action="store_true")
    sub.add_parser("fail-get")
    r = sub.add_parser("rejoin")
    r.add_argument("--host", type=int, required=True)
    r.add_argument("--epoch", type=int, default=1)
    r.add_argument("--ts", type=int)
    rl = sub.add_parser("relay")
    rl.add_argument("--src", type=int, default=1)
    rl.add_argument("--dst", type=int, default=2)
    rl.add_argument("--type", type=int, default=1)
    rl.add_argument("--flags", type=int, default=0x04)
    rl.add_argument("--seq", type=int, default=0)
    rl.add_argument("--ts", type=int, default=1)
    rl.add_argument("--payload", type=int, default=0)
    rl.add_argument("--raw")
    rl.add_argument("--short", action="store_true")
    li = sub.add_parser("listen")
    li.add_argument("--count", type=int, default=1)
    li.add_argument("--timeout", type=float, default=10)
    o = ap.parse_args()
    if o.op == "fail":
        timed = (o.start_file, o.ahead_ms)
        if None not in timed:
            if o.ts is not None:
                ap.error("fail: --ts or --ahead-ms, not both")
        elif timed != (None, None) or o.after_ms:
            ap.error("fail: --start-file and --ahead-ms go together")
        elif o.ts is None:
            ap.error("fail needs --ts or --ahead-ms")
    g = Genl()

    if o.op == "fail":
        if o.ahead_ms is not None:
            o.ts = timed_fail_ts(o.start_file, o.after_ms, o.ahead_ms)
        sent = time.time_ns()
        a = b""
        if "epoch" not in o.omit:
            a += attr(A["EPOCH"], struct.pack("=I", o.epoch))
        if "host" not in o.omit:
            a += attr(A["FAIL_HOST"], struct.pack("=I", o.host))
        if "ts" not in o.omit:
            a += attr(A["FAIL_TS"], struct.pack("=I" if o.ts_u32 else "=Q",
                                                o.ts & 0xffffffffffffffff))
        if o.junk:
            a += attr(A["PEER_HOST"], struct.pack("=I", 1))
        g.send(g.fam, NLM_F_REQUEST | NLM_F_ACK, CMD["FAIL"], a)
        err, msg = g.ack()
        print("errno %d %s" % (err, msg))
        if o.ahead_ms is not None:
            print("fail_ts %d sent %d acked %d" % (o.ts, sent,
                                                   time.time_ns()))
    elif o.op == "rejoin":
        a = attr(A["FAIL_HOST"], struct.pack("=I", o.host))
        a += attr(A["EPOCH"], struct.pack("=I", o.epoch))
        if o.ts is not None:
            a += attr(A["FAIL_TS"], struct.pack("=Q", o.ts))
        g.send(g.fam, NLM_F_REQUEST | NLM_F_ACK, CMD["REJOIN"], a)
        replies = []
        err, msg = g.ack(replies)
        print("errno %d %s" % (err, msg))
        for rep in replies:
            if "fail_ts" in rep:
                print("first %d" % rep["fail_ts"])
    elif o.op == "relay":
        if o.raw is not None:
            pkt = bytes.fromhex(o.raw)
        else:
            # kernel/core/wire.h: version type flags code src dst sport
            # dport ts barrier commit seq aux frag_idx frag_cnt
            pkt = struct.pack(">BBBBIIHHQQQIIHH", 1, o.type, o.flags, 0,
                              o.src, o.dst, 7, 7, o.ts, 0, 0, o.seq,
                              o.payload, 0, 1) + b"r" * o.payload
            if o.short:
                pkt = pkt[:20]
        g.send(g.fam, NLM_F_REQUEST | NLM_F_ACK, CMD["RELAY"],
               attr(A["PACKET"], pkt))
        err, msg = g.ack()
        print("errno %d %s" % (err, msg))
    elif o.op == "fail-get":
        g.send(g.fam, NLM_F_REQUEST | NLM_F_DUMP, CMD["FAIL_GET"])
        done = False
        while not done:
            for ty, _, body in g.msgs():
                if ty in (NLMSG_DONE, NLMSG_ERROR):
                    done = True
                    break
                print(json.dumps(decode(body)))
    else:
        g.s.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, g.groups["ctl"])
        print("ready", flush=True)
        end = time.monotonic() + o.timeout
        n = 0
        while n < o.count:
            left = end - time.monotonic()
            if left <= 0 or not select.select([g.s], [], [], left)[0]:
                break
            for ty, _, body in g.msgs():
                if ty == g.fam:
                    print(json.dumps(decode(body)), flush=True)
                    n += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
