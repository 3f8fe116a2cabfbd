#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Garbage into the bmv2 twin: it must never crash, never move a register.

A switch with two host ports and an up port is brought to a known state
by valid beacons; then every port sends frames that are not valid 1Pipe
(cut short, wrong version, flags, type or lengths, time fields beyond 48
bits, the wrong UDP port or address, IP options and fragments, other
protocols, RoCEv2 frames with a bad BTH or cut short, control frames
from a data port) and a few hundred random ones.  After each:

- the switch is alive (the process runs, its runtime answers);
- what came out of any port, if anything, is the frame as it was sent
  (forwarded untouched; a rewrite would be a register talking);
- no register of the barrier program moved: inputs, trees, outputs,
  versions, liveness and port state are as the valid traffic left them
  (counters may count the frame).

At the end a valid packet is still forwarded with the right barriers.
TAP output.  Usage (root): garbage.py [--json FILE] [--random N]
"""

import argparse
import random
import struct
import sys

import rig
from rig import T_DATA, T_BEACON, F_NOCOMMIT, op_hdr, ipv4, datagram, ether
import opctl  # noqa: E402 (rig puts p4/control on the path)

# Registers that count frames: they may move, nothing else may.
COUNTERS = ("rx_pkts", "rx_bad", "rx_other", "rx_beacons", "timeouts",
            "no_route", "tx_pkts", "tx_beacons", "pushes")


def data_hdr(**kw):
    """A valid DATA header with a 4-byte payload (to host 2)."""
    args = dict(src=1, dst=2, ts=500, barrier=500, commit=400, sport=1000,
                dport=2000, seq=7, aux=4, fcnt=1)
    args.update(kw)
    return bytearray(op_hdr(T_DATA, 0, **args) + b"1Pip")


def bth(opcode=0x64, qp=1):
    """A RoCEv2 BTH (UD SEND only by default)."""
    return struct.pack("!BBHBBHBBH", opcode, 0, 0xffff, 0, qp >> 16,
                       qp & 0xffff, 0, 0, 0)


def deth(qkey=0x11111111, src_qp=1):
    return struct.pack("!II", qkey, src_qp & 0xffffff)


def garbage(port):
    """(name, frame) for every malformed frame sent on PORT."""
    good = data_hdr()
    out = []

    def op(name, hdr, **kw):
        out.append((name, datagram(port, bytes(hdr), **kw)))

    op("1Pipe header cut short", good[:30])
    op("header only, payload missing", good[:52])
    op("UDP length beyond the frame", good, udp_len=len(good) + 8 + 40)
    op("UDP length below the header", good, udp_len=8 + 20)
    for off, val, what in ((0, 2, "version 2"), (2, 0x80, "unknown flag"),
                           (1, 99, "unknown type"), (1, 0, "type 0"),
                           (16, 0x01, "timestamp beyond 48 bits"),
                           (24, 0x01, "barrier beyond 48 bits"),
                           (32, 0x01, "commit beyond 48 bits")):
        h = bytearray(good)
        h[off] = val
        op(what, h)
    h = bytearray(good)
    struct.pack_into("!HH", h, 48, 0, 0)
    op("zero fragments", h)
    h = data_hdr(dst=0)
    op("data to host 0", h)
    b = bytearray(op_hdr(T_BEACON, F_NOCOMMIT, barrier=900)) + b"x"
    op("beacon with a payload", b)
    op("wrong UDP port", data_hdr(), dport=9999)
    op("wrong IP address", data_hdr(), dst_ip="10.9.9.9")
    frame = bytearray(datagram(port, bytes(good)))
    struct.pack_into("!H", frame, 16, 20 + 8 + len(good) + 8)
    frame[24:26] = bytes(2)
    frame[24:26] = struct.pack("!H", rig.ip_csum(bytes(frame[14:34])))
    out.append(("IP length beyond the UDP datagram", bytes(frame)))
    frame = bytearray(datagram(port, bytes(good)))
    frame[24] ^= 0xff
    out.append(("bad IP header checksum", bytes(frame)))
    # lengths that agree with each other, but the frame ends after the
    # 1Pipe header: the payload they promise never came
    long = data_hdr(aux=1000, barrier=5000, commit=5000)[:52]
    frame = bytearray(datagram(port, bytes(long), udp_len=8 + 52 + 1000))
    struct.pack_into("!H", frame, 16, 20 + 8 + 52 + 1000)
    frame[24:26] = bytes(2)
    frame[24:26] = struct.pack("!H", rig.ip_csum(bytes(frame[14:34])))
    out.append(("frame shorter than its lengths", bytes(frame)))
    udp = struct.pack("!HHHH", port.peer_udp, port.my_udp, 8 + 56, 0) + \
        bytes(data_hdr())
    out.append(("IPv4 options", ether(port, ipv4(
        port.peer_ip, port.my_ip, udp, options=b"\x01\x01\x01\x00"))))
    out.append(("IPv4 fragment", ether(port, ipv4(
        port.peer_ip, port.my_ip, udp, flags_frag=0x2000))))
    out.append(("TCP, not UDP", ether(port, ipv4(
        port.peer_ip, port.my_ip, udp, proto=6))))
    out.append(("IPv6", ether(port, bytes(40) + udp, 0x86dd)))
    out.append(("ARP", ether(port, bytes(28), 0x0806)))
    out.append(("Ethernet header only", ether(port, b"", 0x0800)))
    # RoCEv2: the BTH must be a UD SEND, the DETH and 1Pipe header whole
    roce_hdr = bytes(data_hdr())
    for name, payload in (
            ("RoCE RC SEND", bth(0x04) + deth() + roce_hdr + bytes(4)),
            ("RoCE BTH cut short", bth()[:7]),
            ("RoCE DETH cut short", bth() + deth()[:5]),
            ("RoCE 1Pipe header cut short", bth() + deth() + roce_hdr[:40]),
            ("RoCE 1Pipe version 7", bth() + deth() + b"\x07" +
             roce_hdr[1:] + bytes(4)),
            # valid, but forwarded RoCE data speaks for its sender, not
            # for the link: only beacons move a register on RoCE
            ("RoCE data frame (forwarded untouched, no register)",
             bth() + deth() + bytes(data_hdr(barrier=7000, commit=7000)) +
             bytes(4))):
        op(name, payload, dport=4791)
    # the control plane's frames only count from the CPU port
    for code, what in ((opctl.TICK, "TICK"), (opctl.PUSH, "PUSH"),
                       (opctl.KILL, "KILL"), (opctl.FENCE + 1, "unknown")):
        ctl = struct.pack("!BBBBH", code, 0x07, 0, 0, 0) + bytes(6)
        out.append((f"control frame {what} from a data port",
                    ether(port, ctl, opctl.CTL_ETHERTYPE).ljust(60, b"\0")))
    return out


def random_frames(port, rng, n):
    """Random bytes behind valid Ethernet/IPv4/UDP headers to our port
    (deep into the parser), and some with a random RoCE header."""
    out = []
    for i in range(n):
        body = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 120)))
        if i % 4 == 3:
            out.append((f"random RoCE {i}", datagram(port, body, dport=4791)))
        elif i % 4 == 2:
            out.append((f"random 1Pipe-looking {i}", datagram(
                port, b"\x01" + bytes([rng.randrange(1, 7)]) + body)))
        else:
            out.append((f"random {i}", datagram(port, body)))
    return out


class Rig:
    def __init__(self, json_path):
        self.socks = rig.port_sockets()
        self.proc, self.t = rig.start_switch(json_path)
        self.bs = opctl.BarrierSwitch(self.t, "cpuh", rig.CPU_PORT)
        self.bs.add_port(rig.vector_port("h1", "down", 1, [(1, 1)]))
        self.bs.add_port(rig.vector_port("h2", "down", 2, [(2, 2)]))
        self.bs.add_port(rig.vector_port("spine", "up", 3))
        self.bs.apply()
        # The tree nodes (two 64-bit values a cell) cannot be read over
        # thrift; a walk changes them only from a leaf, which is compared.
        self.regs = [r for r in self.t.registers()
                     if r.split(".")[-1] not in COUNTERS and
                     not r.endswith("_view") and
                     (self.t.register_width(r) <= 64 or self.t.has_view(r))]

    def close(self):
        self.bs.close()
        self.t.close()
        self.proc.terminate()
        self.proc.wait()

    def state(self):
        return {r: self.t.reg_read_wide(r) for r in self.regs}

    def fence(self):
        return rig.fence(self.bs, self.socks)

    def send(self, idx, frame):
        self.socks[idx].send(frame)
        return self.fence()

    def alive(self):
        if self.proc.poll() is not None:
            return False
        try:
            self.t.reg_read(opctl.BAR + "rx_pkts", 0)
        except Exception:  # any runtime failure means it is gone
            return False
        return True


def same_frame(sent, got):
    """GOT is SENT, but for the padding a short frame gets on the wire."""
    return got[:len(sent)] == sent and not any(got[len(sent):])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", default=rig.VCLOCK_JSON)
    ap.add_argument("--random", type=int, default=200,
                    help="random frames per port (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rc = rig.in_own_netns(sys.argv)
    if rc is not None:
        return rc

    tap = rig.Tap()
    r = Rig(args.json)
    try:
        # a known state: every register heard, every group with a value
        r.t.reg_write("clock", 0, 1000)
        for idx, b, c in ((1, 100, 10), (2, 200, 20), (3, 150, 15)):
            p = r.bs.ports[idx - 1]
            r.send(idx, datagram(p, op_hdr(T_BEACON, 0, barrier=b,
                                           commit=c)))
        before = r.state()
        tap.ok(r.bs.out(0) == 100 and r.bs.out(2) == 100 and
               r.bs.out(0, True) == 10, "valid beacons set the outputs",
               f"outs {r.bs.out(0)} {r.bs.out(2)} {r.bs.out(0, True)}")
        bad0 = r.bs.counter("rx_bad") + sum(r.t.reg_read_all(
            opctl.BAR + "rx_other"))

        rng = random.Random(args.seed)
        for idx in (1, 3):
            p = r.bs.ports[idx - 1]
            frames = garbage(p)
            moved = []
            for name, frame in frames:
                outs = r.send(idx, frame)
                if not r.alive():
                    tap.ok(False, f"{p.name}: {name}: switch alive")
                    return tap.done()
                # a port that forwarded something has sent since the tick
                changed = [k.split(".")[-1] for k, v in r.state().items()
                           if v != before[k] and
                           not (outs and k.endswith(".pstate"))]
                touched = [o for o in outs if not same_frame(frame, o[1])]
                why = f"registers {changed}" if changed else \
                    f"rewritten: {[(i, o.hex()) for i, o in touched]}"
                if not tap.ok(not changed and not touched,
                              f"{p.name}: {name}: dropped or forwarded "
                              "untouched, no register moved", why) or outs:
                    before = r.state()	# judge the next on its own
            rnd = random_frames(p, rng, args.random)
            for name, frame in rnd:
                outs = r.send(idx, frame)
                if not r.alive() or any(not same_frame(frame, o[1])
                                        for o in outs):
                    moved.append(name)
            changed = [k.split(".")[-1] for k, v in r.state().items()
                       if v != before[k]]
            tap.ok(r.alive() and not moved and not changed,
                   f"{p.name}: {len(rnd)} random frames: alive, nothing "
                   "rewritten, no register moved",
                   f"moved by {moved[:3]} registers {changed}")
        bad1 = r.bs.counter("rx_bad") + sum(r.t.reg_read_all(
            opctl.BAR + "rx_other"))
        tap.ok(bad1 > bad0, "the garbage is counted (rx_bad, rx_other)",
               f"{bad1 - bad0}")
        tap.ok(r.bs.counter("rx_beacons", 0) == 1 and
               r.bs.counter("rx_beacons", 2) == 1,
               "no garbage counted as a beacon")

        # still a switch: a valid packet from h2 to h1 gets the outputs
        p2 = r.bs.ports[1]
        pkt = data_hdr(src=2, dst=1, barrier=250, commit=25)
        outs = r.send(2, datagram(p2, bytes(pkt)))
        got = [o for i, o in outs if i == 1]
        ok = len(outs) == 1 and got
        if ok:
            ihl = (got[0][14] & 15) * 4
            hdr = got[0][22 + ihl:22 + ihl + 52]
            ok = struct.unpack("!QQ", hdr[24:40]) == (100, 10)
        tap.ok(bool(ok), "afterwards a valid packet is forwarded with the "
               "group's barriers", f"outputs {outs}")
    finally:
        r.close()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
