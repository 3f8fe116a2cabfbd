#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Replay the switch's test vectors against the P4 twin in simple_switch.

userspace/switch/tests/vectors.txt specifies the 1Pipe switch; the
software switch runs it through tests/test_vectors.c.  This runs the same
file against the bmv2 build of p4/ (build/onepipe-vclock.json, whose
clock is a register, so that the vectors' times are the switch's), driven
by its real control plane (p4/control/opctl.py), and reports every
expectation as a TAP test point, with the same outputs expected.

Each vector port is a veth pair in a network namespace of our own: the
switch's end is a bmv2 port, the other end an AF_PACKET socket that sends
the vector's packets (IPv4/UDP datagrams to the switch's port) and reads
what comes out.  After every step the control plane sends an
OP_CTL_FENCE frame, whose copy on each port marks the end of that step's
output there.

Usage (root): replay_vectors.py [--json FILE] [--only SCENARIO] VECTORS
"""

import argparse
import socket
import struct
import sys
import time

import rig
from rig import (T_DATA, T_BEACON, T_ACK, T_NAK, T_RECALL, T_PROBE, T_QUERY,
                 F_RELIABLE, F_NOBARRIER, F_NOCOMMIT, F_UNORDERED, F_ECE,
                 HDR_LEN, op_hdr, ip_csum)
import decide  # noqa: E402 (rig puts p4/control on the path)
import opctl  # noqa: E402

TYPES = {"data": T_DATA, "beacon": T_BEACON, "ack": T_ACK, "nak": T_NAK,
         "recall": T_RECALL, "probe": T_PROBE, "query": T_QUERY}
FLAGS = {"reliable": F_RELIABLE, "unordered": F_UNORDERED, "ece": F_ECE}
UNITS = {"ns": 1, "us": 1000, "ms": 1000000, "s": 1000000000}


def tm(s):
    for unit in ("ns", "us", "ms", "s"):
        if s.endswith(unit) and s[:-len(unit)].isdigit():
            return int(s[:-len(unit)]) * UNITS[unit]
    return int(s, 0)


def num(s):
    return int(s, 0)


def build(typ=T_DATA, flags=0, has_barrier=True, barrier=0, has_commit=False,
          commit=0, src=1, dst=0, ts=0, ignored=0):
    """A valid packet, as tests/test_vectors.c's build() makes it."""
    if typ in (T_RECALL, T_PROBE):
        flags |= F_RELIABLE
    if not has_barrier:
        flags |= F_NOBARRIER
    if not has_commit:
        flags |= F_NOCOMMIT
    kw = dict(ts=ts, barrier=barrier if has_barrier else ignored,
              commit=commit if has_commit else ignored)
    payload = b""
    if typ != T_BEACON:
        kw.update(src=src, dst=dst, sport=1000, dport=2000, seq=7, aux=7)
    if typ == T_NAK:
        kw["code"] = 2
    if typ == T_DATA:
        kw.update(aux=4, fcnt=1)
        payload = b"1Pip"
    return bytearray(op_hdr(typ, flags, **kw) + payload)


class Out:
    """A 1Pipe datagram the switch sent out of a port."""

    def __init__(self, port, frame):
        self.port = port
        self.frame = frame
        ihl = (frame[14] & 15) * 4
        self.ip = frame[14:14 + ihl]
        self.udp = frame[14 + ihl:22 + ihl]
        ulen = struct.unpack("!H", self.udp[4:6])[0]
        self.op = frame[22 + ihl:14 + ihl + ulen]

    @property
    def beacon(self):
        return len(self.op) >= 2 and self.op[1] == T_BEACON

    def field(self, off):
        return int.from_bytes(self.op[off:off + 8], "big")

    def addressed(self):
        """Why the datagram's addresses are not the port's, or None."""
        p = self.port
        if self.frame[0:6] != opctl.mac_bytes(p.peer_mac) or \
                self.frame[6:12] != opctl.mac_bytes(p.my_mac):
            return "MAC addresses"
        if self.ip[12:16] != socket.inet_aton(p.my_ip) or \
                self.ip[16:20] != socket.inet_aton(p.peer_ip):
            return "IP addresses"
        if ip_csum(bytes(self.ip)) != 0:
            return "IP checksum"
        if struct.unpack("!HH", self.udp[0:4]) != (p.my_udp, p.peer_udp):
            return "UDP ports"
        return None


class Replay:
    def __init__(self, json_path):
        self.tap = rig.Tap()
        self.socks = rig.port_sockets()
        self.proc, self.t = rig.start_switch(json_path)
        self.bs = None
        self.scenario = None

    def close(self):
        self.t.close()
        self.proc.terminate()
        self.proc.wait()

    # ---- TAP ----

    def report(self, ok, text, why=""):
        self.tap.ok(ok, f"{self.scenario}: {text}", why)

    # ---- the switch ----

    def new_scenario(self, name):
        self.scenario = name
        if self.bs:
            self.bs.close()
        self.t.reset()
        self.bs = opctl.BarrierSwitch(self.t, "cpuh", rig.CPU_PORT,
                                      timeout=1_000_000, slack=0)
        self.dirty = True
        self.last = None	# outputs of the last rx
        self.beacons = None	# beacons of the last tick or push
        self.reports = []

    def ready(self):
        if self.dirty:
            self.bs.apply()
            self.dirty = False

    def port(self, name):
        for p in self.bs.ports:
            if p.name == name:
                return p
        raise SystemExit(f"{self.scenario}: no port {name}")

    def clock(self, now):
        self.t.reg_write("clock", 0, now)

    def fence(self):
        """Everything each port sent until its fence copy: the step's
        1Pipe output."""
        try:
            outs = rig.fence(self.bs, self.socks)
        except RuntimeError as e:
            raise SystemExit(f"{self.scenario}: {e}")
        return [Out(self.bs.ports[i - 1], f) for i, f in outs
                if f[12:14] == b"\x08\x00" and f[23] == 17]

    def wait_rx(self, idx, before):
        deadline = time.monotonic() + 5
        while self.t.reg_read(opctl.BAR + "rx_pkts", idx) == before:
            if time.monotonic() > deadline:
                raise SystemExit(f"{self.scenario}: frame not received")
            time.sleep(0.0005)

    def counters(self):
        return (self.bs.counter("rx_bad"), self.bs.counter("no_route"),
                sum(self.t.reg_read_all(opctl.BAR + "rx_beacons")))

    def rx(self, port, payload, now):
        self.ready()
        self.clock(now)
        before = self.t.reg_read(opctl.BAR + "rx_pkts", port.idx)
        c0 = self.counters()
        self.socks[port.dp_port].send(rig.datagram(port, bytes(payload)))
        self.wait_rx(port.idx, before)
        outs = self.fence()
        c1 = self.counters()
        self.last = (bytes(payload), outs,
                     tuple(b - a for a, b in zip(c0, c1)))

    # ---- commands ----

    def cmd_config(self, kv):
        bs = self.bs
        if "push-gap" in kv or "busy" in kv:
            bs.set_push(tm(kv.get("push-gap", "0")), tm(kv.get("busy", "0")))
        if "timeout" in kv:
            bs.timeout = tm(kv["timeout"])
            bs.commit_timeout = bs.timeout * decide.COMMIT_TIMEOUT_FACTOR
        if "commit-timeout" in kv:
            bs.commit_timeout = tm(kv["commit-timeout"])
        if "slack" in kv:
            bs.slack = tm(kv["slack"])
        if "controlled" in kv:
            bs.set_controlled(kv["controlled"] == "on")
        if "mode" in kv:
            bs.beacon_only = kv["mode"] == "beacon-only"
        self.dirty = True

    def cmd_port(self, a, kv):
        n = len(self.bs.ports) + 1
        hosts = opctl.parse_hosts(kv["hosts"]) if "hosts" in kv else []
        self.bs.add_port(rig.vector_port(a[0], a[1], n, hosts))
        self.dirty = True

    def cmd_rx(self, a, kv):
        has_b = a[1] != "-"
        k = dict(has_barrier=has_b, barrier=num(a[1]) if has_b else 0)
        k["ts"] = k["barrier"]
        if "commit" in kv:
            k["has_commit"] = kv["commit"] != "-"
            k["commit"] = num(kv["commit"]) if k["has_commit"] else 0
        k["typ"] = TYPES[kv.get("type", "data")]
        k["src"] = num(kv.get("src", "1"))
        k["dst"] = num(kv.get("dst", "0"))
        if "ts" in kv:
            k["ts"] = num(kv["ts"])
        k["flags"] = 0
        for f in kv.get("flags", "").split(","):
            if f:
                k["flags"] |= FLAGS[f]
        k["ignored"] = num(kv.get("ignored", "0"))
        self.rx(self.port(a[0]), build(**k), tm(a[2]))

    def cmd_rx_bad(self, a):
        pkt = build(T_DATA, 0, True, 5, True, 5, src=1, dst=2, ts=5)
        kind = a[2]
        if kind == "short":
            pkt = pkt[:HDR_LEN - 1]
        elif kind == "version":
            pkt[0] = 2
        elif kind == "flags":
            pkt[2] = 0x80
        elif kind == "type":
            pkt[1] = 99
        elif kind == "length":
            pkt = pkt[:-1]
        elif kind == "barrier":
            pkt[24 + 1] = 1
        elif kind == "commit":
            pkt[32 + 1] = 1
        else:
            raise SystemExit(f"bad rx-bad kind {kind}")
        self.rx(self.port(a[0]), pkt, tm(a[1]))

    def cmd_tick(self, now):
        self.ready()
        self.clock(now)
        self.reports = self.bs.tick(now)
        self.beacons = [o for o in self.fence() if o.beacon]

    def cmd_push(self, now):
        self.ready()
        self.clock(now)
        self.bs.push()
        self.reports = []
        self.beacons = [o for o in self.fence() if o.beacon]

    def cmd_resume(self, name, now):
        self.ready()
        self.clock(now)
        self.bs.resume(self.port(name).idx)
        self.fence()

    # ---- expectations ----

    def expect_fwd(self, text, a, kv, intact):
        if not self.last:
            raise SystemExit(f"{self.scenario}: {text}: no rx yet")
        sent, outs, _ = self.last
        fwd = [o for o in outs if not o.beacon]
        want = self.port(a[0])
        if len(fwd) != 1 or fwd[0].port is not want:
            return self.report(False, text, "forwarded to " + ",".join(
                o.port.name for o in fwd) if fwd else "not forwarded")
        got = fwd[0]
        why = got.addressed()
        if why:
            return self.report(False, text, why)
        exp = bytearray(sent)
        if not intact:
            for off, val, flag in ((24, a[1], F_NOBARRIER),
                                   (32, kv.get("commit", "-"), F_NOCOMMIT)):
                if val == "-":
                    exp[off:off + 8] = bytes(8)
                    exp[2] |= flag
                else:
                    exp[off:off + 8] = num(val).to_bytes(8, "big")
                    exp[2] &= ~flag & 0xff
        if bytes(got.op) != bytes(exp):
            return self.report(False, text,
                               f"got {got.op.hex()} want {exp.hex()}")
        self.report(True, text)

    def expect_verdict(self, text, what):
        _, outs, (bad, noroute, beacons) = self.last
        fwd = [o for o in outs if not o.beacon]
        if fwd:
            return self.report(False, text, "forwarded")
        want = {"consumed": (0, 0, 1), "bad": (1, 0, 0),
                "noroute": (0, 1, 0)}[what]
        self.report((bad, noroute, beacons) == want, text,
                    f"rx_bad +{bad} no_route +{noroute} rx_beacons "
                    f"+{beacons}")

    def expect_beacons(self, text, a):
        if self.beacons is None:
            raise SystemExit(f"{self.scenario}: {text}: no tick yet")
        want = {}
        for item in a:
            name, val = item.split("=")
            b, _, c = val.partition("/")
            want[name] = (None if b == "-" else num(b),
                          None if c in ("", "-") else num(c))
        got = {}
        for o in self.beacons:
            flags = o.op[2]
            bare = op_hdr(T_BEACON, flags, barrier=o.field(24),
                          commit=o.field(32))
            if bytes(o.op) != bare or flags & ~(F_NOBARRIER | F_NOCOMMIT):
                return self.report(False, text, f"not a bare beacon on "
                                   f"{o.port.name}: {o.op.hex()}")
            why = o.addressed()
            if why:
                return self.report(False, text, f"{o.port.name}: {why}")
            if o.port.name in got:
                return self.report(False, text, f"two on {o.port.name}")
            got[o.port.name] = (
                None if flags & F_NOBARRIER else o.field(24),
                None if flags & F_NOCOMMIT else o.field(32))
        self.report(got == want, text, f"got {fmt_beacons(got)}")

    def expect_counter(self, text, name, n):
        port, _, cname = name.rpartition(".")
        got = self.bs.counter(cname, self.port(port).idx if port else None)
        self.report(got == n, text, f"got {got}")

    def expect_reports(self, text, a):
        want = set()
        for item in a:
            name, val = item.split("=")
            st, _, c = val.partition("/")
            want.add((self.port(name).idx, st == "down",
                      None if c in ("", "-") else num(c)))
        got = set(self.reports)
        self.report(got == want, text, f"got {sorted(got)}")

    def run_line(self, line, text):
        a = line.split()
        cmd, a = a[0], a[1:]
        kv = dict(x.split("=", 1) for x in a if "=" in x)
        pos = [x for x in a if "=" not in x]
        if cmd == "scenario":
            self.new_scenario(pos[0])
        elif cmd == "config":
            self.cmd_config(kv)
        elif cmd == "port":
            self.cmd_port(pos, kv)
        elif cmd == "rx":
            self.cmd_rx(pos, kv)
        elif cmd == "rx-bad":
            self.cmd_rx_bad(pos)
        elif cmd == "tick":
            self.cmd_tick(tm(pos[0]))
        elif cmd == "push":
            self.cmd_push(tm(pos[0]))
        elif cmd == "resume":
            self.cmd_resume(pos[0], tm(pos[1]))
        elif cmd == "expect-fwd":
            self.expect_fwd(text, pos, kv, False)
        elif cmd == "expect-fwd-intact":
            self.expect_fwd(text, pos, kv, True)
        elif cmd == "expect-consumed":
            self.expect_verdict(text, "consumed")
        elif cmd == "expect-drop":
            self.expect_verdict(text, pos[0])
        elif cmd == "expect-beacons":
            self.expect_beacons(text, a)
        elif cmd in ("expect-state", "expect-commit-state"):
            self.ready()
            got = self.bs.state(self.port(pos[0]).idx,
                                cmd == "expect-commit-state")
            self.report(got == pos[1], text, f"got {got}")
        elif cmd in ("expect-out", "expect-commit-out", "expect-reg",
                     "expect-commit-reg"):
            self.ready()
            idx = self.port(pos[0]).idx
            commit = "commit" in cmd
            got = self.bs.out(idx, commit) if cmd.endswith("out") else \
                self.bs.reg(idx, commit)
            want = None if pos[1] == "-" else num(pos[1])
            self.report(got == want, text, f"got {got}")
        elif cmd == "expect-counter":
            self.ready()
            self.expect_counter(text, pos[0], num(pos[1]))
        elif cmd == "expect-push-due":
            self.ready()
            got = self.bs.push_due()
            want = None if pos[0] == "-" else tm(pos[0])
            self.report(got == want, text, f"got {got}")
        elif cmd == "expect-reports":
            self.expect_reports(text, a)
        elif cmd == "expect-heard":
            got = {p.name for p in self.bs.ports
                   if self.bs.heard() >> p.idx & 1}
            self.report(got == set(pos), text, f"got {sorted(got)}")
        elif cmd == "expect-route":
            self.ready()
            got = self.bs.route(self.port(pos[0]).idx, num(pos[1]),
                                num(pos[2]))
            name = "-" if got is None else self.bs.ports[got].name
            self.report(name == pos[3], text, f"got {name}")
        elif cmd == "parse-hosts":
            got = opctl.parse_hosts(pos[0])
            got = "bad" if got is None else opctl.format_hosts(got)
            self.report(got == pos[1], text, f"got {got}")
        else:
            raise SystemExit(f"unknown command {cmd}")


def fmt_beacons(got):
    def v(x):
        return "-" if x is None else str(x)
    return " ".join(f"{k}={v(b)}/{v(c)}" for k, (b, c) in sorted(got.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", default=rig.VCLOCK_JSON)
    ap.add_argument("--only", help="run this scenario only")
    ap.add_argument("vectors")
    args = ap.parse_args()
    rc = rig.in_own_netns(sys.argv)
    if rc is not None:
        return rc
    r = Replay(args.json)
    try:
        skip = False
        with open(args.vectors) as f:
            for line in f:
                text = line.split("#", 1)[0].strip()
                if not text:
                    continue
                if text.startswith("scenario "):
                    skip = bool(args.only) and text.split()[1] != args.only
                if not skip:
                    r.run_line(text, " ".join(text.split()))
    finally:
        r.close()
    return r.tap.done()


if __name__ == "__main__":
    sys.exit(main())
