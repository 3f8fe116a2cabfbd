# SPDX-License-Identifier: GPL-2.0
"""Control plane of the 1Pipe barrier program (p4/).

The data plane forwards, rewrites, keeps every register and builds the
beacons; this is the rest, run on the switch's CPU:

- configuration: ports (their role, host lists, addresses), routes, the
  flow hash's up ports, the multicast group of every port, the clone
  session to the CPU port, the knobs (admission slack, push pacing,
  beacon-only mode);
- the beacon tick: time out silent links (OP_CTL_KILL frames, decided by
  decide.expire() from the liveness registers), then an OP_CTL_TICK frame
  that the pipeline turns into one beacon per port that needs one;
- pushes: an OP_CTL_PUSH frame when the data plane says a group moved
  (a notification copy reaches the CPU port) and when a paced push falls
  due (decide.push_due());
- the failure controller's side (controlled mode): link reports
  (decide.LinkWatch) and RESUME (a KILL of the commit register);
- reading state back: link states, registers, outputs, counters.

Everything that touches the switch goes through a target object with the
small interface of bmv2.Switch (tables, registers, multicast, mirroring);
a Tofino control plane implements the same calls with bfrt (see
p4/README.md) and reuses the rest unchanged.
"""

import socket
import struct

import decide

CTL_ETHERTYPE = 0x88B5
SOL_PACKET, PACKET_IGNORE_OUTGOING = 263, 23
TICK, PUSH, KILL, ROUTE, FENCE = 1, 2, 3, 4, 5
MAX_PORTS = 64
CPU_SESSION = 1
ALL_PORTS_GROUP = 1

# Names in the bmv2 program (arch/v1model.p4); a Tofino target maps them.
ING = "V1Ingress.op_ingress."
BAR = ING + "barriers."
EGR = "V1Egress.op_egress."


def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


def mac_int(mac):
    return int.from_bytes(mac_bytes(mac), "big")


def ip_int(ip):
    return int.from_bytes(socket.inet_aton(ip), "big")


def parse_hosts(text):
    """A host list like 1-4+7 as [(lo, hi)] (sw_parse_hosts()), or None.

    Host ids are 1..2^32-1, at most 32 ranges, each lo <= hi.
    """
    out = []
    for part in text.split("+"):
        bounds = part.split("-")
        if len(bounds) > 2 or len(out) == 32:
            return None
        if not all(b.isdigit() and b.isascii() for b in bounds):
            return None
        lo, hi = int(bounds[0]), int(bounds[-1])
        if not 1 <= lo <= hi <= 0xffffffff:
            return None
        out.append((lo, hi))
    return out


def format_hosts(ranges):
    return "+".join(str(lo) if lo == hi else f"{lo}-{hi}"
                    for lo, hi in ranges)


class Port:
    """One switch port: switch_logic.c's port plus its wire addresses.

    name, role ("down" or "up"), hosts [(lo, hi)], dp_port (the data
    plane's port number), and for the UDP transport the addresses a
    datagram out of this port goes from (mine) and to (the peer's).
    """

    def __init__(self, name, role, hosts, dp_port, my_mac, my_ip, peer_mac,
                 peer_ip, my_udp=5640, peer_udp=5640, roce=False):
        if role not in ("down", "up"):
            raise ValueError(f"port {name}: role must be down or up")
        self.name = name
        self.role = role
        self.hosts = list(hosts)
        self.dp_port = dp_port
        self.my_mac, self.my_ip, self.my_udp = my_mac, my_ip, my_udp
        self.peer_mac, self.peer_ip, self.peer_udp = peer_mac, peer_ip, \
            peer_udp
        self.roce = roce
        self.idx = None

    @property
    def up(self):
        return self.role == "up"


class BarrierSwitch:
    """One switch's control plane; see the top of this file."""

    def __init__(self, target, cpu_if, cpu_port, timeout=1_000_000,
                 slack=0):
        self.t = target
        self.cpu_port = cpu_port
        self.ports = []
        self.timeout = timeout
        self.commit_timeout = timeout * decide.COMMIT_TIMEOUT_FACTOR
        self.slack = slack
        self.beacon_only = False
        self.push_on = False
        self.push_gap = 0
        self.busy = 0
        self.controlled = False
        self.watch = decide.LinkWatch()
        self.resumes = [0] * MAX_PORTS
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                  socket.htons(CTL_ETHERTYPE))
        # what this socket reads is the switch's (ROUTE answers, the
        # notification copies of KILL frames), never our own frames
        self.sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        self.sock.bind((cpu_if, 0))
        self.ticks = 0
        self.tried = {}		# port -> decide.kills_due()'s memory
        self.notifications = 0

    def close(self):
        self.sock.close()

    # ---- configuration ----

    def add_port(self, port):
        """Append a port (switch_logic.c's sw_add_port()); see apply()."""
        if len(self.ports) == MAX_PORTS:
            raise ValueError("at most 64 ports")
        if any(p.name == port.name for p in self.ports):
            raise ValueError(f"port {port.name}: name in use")
        port.idx = len(self.ports)
        self.ports.append(port)
        return port.idx

    def set_push(self, push_gap, busy):
        self.push_on = True
        self.push_gap = push_gap
        self.busy = busy

    def set_controlled(self, on):
        self.controlled = on
        self.watch = decide.LinkWatch()

    def apply(self):
        """Write the configuration into the data plane (from scratch).

        Tables only: the registers must be fresh (a new simple_switch,
        bmv2.Switch.reset(), a reloaded Tofino program), or a port could
        inherit the registers of another that had its index before.
        """
        t = self.t
        for table in ("in_port_map", "route", "up_port"):
            t.table_clear(ING + table)
        t.table_clear(EGR + "out_port_map")
        ups = [p for p in self.ports if p.up]
        t.table_set_default(ING + "config", ING + "set_config",
                            [self.slack, int(self.beacon_only),
                             int(self.push_on), len(ups)])
        t.table_set_default(EGR + "config", EGR + "set_config",
                            [int(self.beacon_only), self.push_gap,
                             self.busy])
        t.table_add(ING + "in_port_map", ING + "set_cpu", [self.cpu_port])
        t.table_add(EGR + "out_port_map", EGR + "set_cpu_out",
                    [self.cpu_port])
        for p in self.ports:
            t.table_add(ING + "in_port_map", ING + "set_in", [p.dp_port],
                        [p.idx, int(p.up), ip_int(p.my_ip), p.my_udp])
            t.table_add(EGR + "out_port_map", EGR + "set_out", [p.dp_port],
                        [p.idx, int(p.up), int(p.roce), mac_int(p.my_mac),
                         ip_int(p.my_ip), p.my_udp, mac_int(p.peer_mac),
                         ip_int(p.peer_ip), p.peer_udp])
            # first port whose list holds the host wins
            for lo, hi in p.hosts:
                t.table_add(ING + "route", ING + "to_port", [(lo, hi)],
                            [p.dp_port, p.idx, int(p.up)],
                            priority=self.route_priority(p.idx))
        # The flow hash's values: modulo the up ports' count on bmv2, a
        # fixed range where the program cannot divide (Tofino).
        picks = getattr(t, "HASH_VALUES", None) or len(ups)
        for pick in range(picks if ups else 0):
            p = ups[pick % len(ups)]
            t.table_add(ING + "up_port", ING + "to_port", [pick],
                        [p.dp_port, p.idx, 1])
        t.mc_set(ALL_PORTS_GROUP, [p.dp_port for p in self.ports])
        t.mirror_to_port(CPU_SESSION, self.cpu_port)

    def route_priority(self, idx):
        """The route entry priority of port idx: lower ports win."""
        return self.t.priority_rank(idx)

    # ---- frames to the pipeline ----

    def ctl(self, op, port=0, which=0, heard_at=0, payload=b""):
        frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\xfe" + \
            struct.pack("!HBBBBH", CTL_ETHERTYPE, op, which, port, 0, 0) + \
            heard_at.to_bytes(6, "big") + payload
        self.sock.send(frame.ljust(60, b"\0"))

    # ---- the tick, pushes, RESUME ----

    def leaves(self, commit):
        """Every port's leaf of one kind, decoded."""
        cells = self.t.reg_read_all(BAR + ("leaf_c" if commit else "leaf_b"))
        return [decide.Leaf(cells[p.idx]) for p in self.ports]

    def tick(self, now):
        """The beacon tick at now; returns the link reports it made.

        Reads the liveness registers; the leaves only when a link is
        silent past a timeout and its kill is not known to have been
        tried (decide.kills_due()), or when a report is due: a tick must
        stay cheap on a slow switch CPU.
        """
        self.ticks += 1
        rx_at = self.t.reg_read_all(BAR + "rx_at")
        rx_at = [rx_at[p.idx] for p in self.ports]
        due = decide.kills_due(rx_at, self.tried, self.ticks, now,
                               self.timeout, self.commit_timeout,
                               self.controlled)
        lc = None
        if due:
            lb, lc = self.leaves(False), self.leaves(True)
            for idx, which, heard_at in decide.expire(
                    [(a & decide.TS_MASK, b, c, p.up) for a, b, c, p in
                     zip(rx_at, lb, lc, self.ports)],
                    now, self.timeout, self.commit_timeout,
                    self.controlled):
                self.ctl(KILL, idx, which, heard_at)
            for idx, key in due.items():
                self.tried[idx] = key
        reports = []
        if self.controlled:
            self.watch.tick([a & decide.TS_MASK if a >> 48 & 1 else None
                             for a in rx_at], now, self.commit_timeout)
            if self.watch.due():
                lc = lc or self.leaves(True)
                reports = self.watch.take([c.reg if c.alive else None
                                           for c in lc])
        self.ctl(TICK)
        return reports

    def push(self):
        self.ctl(PUSH)

    def resume(self, idx):
        """The failure controller's RESUME for port idx (sw_resume())."""
        p = self.ports[idx]
        self.resumes[idx] += 1
        self.ctl(KILL, idx, decide.KILL_COMMIT | decide.KILL_ANY |
                 (decide.KILL_UP if p.up else 0))

    def push_due(self):
        """When the next push falls due, or None (no port is stale)."""
        if not self.push_on:
            return None
        pstate = self.t.reg_read_wide(EGR + "pstate")
        vers = [self.t.reg_read(BAR + "gver_all", 0) & 0xffffffff,
                self.t.reg_read(BAR + "gver_down", 0) & 0xffffffff]
        times = [self.t.reg_read_all(BAR + "gtime_all"),
                 self.t.reg_read_all(BAR + "gtime_down")]
        return decide.push_due([(pstate[p.idx], p.up) for p in self.ports],
                               vers, times, self.push_gap, self.busy,
                               self.beacon_only)

    def route(self, in_idx, src, dst, timeout=2.0):
        """Where the pipeline sends a packet from in_idx to dst, or None."""
        p = self.ports[in_idx]
        hdr = struct.pack("!BBBBII", 1, 1, 0x0a, 0, src, dst) + bytes(44)
        self.ctl(ROUTE, in_idx, decide.KILL_UP if p.up else 0, 0, hdr)
        self.sock.settimeout(timeout)
        while True:
            frame, addr = self.sock.recvfrom(2048)
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            if len(frame) >= 24 and frame[12:14] == b"\x88\xb5" and \
                    frame[14] == ROUTE:
                return frame[16] if frame[15] & 1 else None

    # ---- reading state back ----

    def leaf(self, idx, commit):
        name = BAR + ("leaf_c" if commit else "leaf_b")
        return decide.Leaf(self.t.reg_read(name, idx))

    def group(self, idx, commit):
        g = ("c_" if commit else "b_") + \
            ("down" if self.ports[idx].up else "all")
        return decide.Group(self.t.reg_read(BAR + g + "_gout", 0))

    def state(self, idx, commit=False):
        return self.leaf(idx, commit).state(self.ports[idx].up)

    def reg(self, idx, commit=False):
        leaf = self.leaf(idx, commit)
        return leaf.reg if leaf.heard else None

    def out(self, idx, commit=False):
        return self.group(idx, commit).value()

    def counter(self, name, idx=None):
        """A switch_logic.c counter: per port when idx is given."""
        if idx is None:
            if name == "rx_bad":
                return sum(self.t.reg_read_all(BAR + "rx_bad"))
            if name == "no_route":
                return sum(self.t.reg_read_all(ING + "no_route"))
            raise KeyError(name)
        if name == "resumes":
            return self.resumes[idx]
        if name == "drops":
            return self.t.reg_read(BAR + "rx_bad", idx) + \
                self.t.reg_read(ING + "no_route", idx)
        where = {"rx_pkts": BAR, "rx_beacons": BAR, "timeouts": BAR,
                 "tx_pkts": EGR, "tx_beacons": EGR, "pushes": EGR}
        return self.t.reg_read(where[name] + name, idx)

    def heard(self):
        return self.watch.heard

    def port_report(self, idx):
        """What a link report of port idx says now (sw_port_report()):
        (down, the commit register, or None when it is not in use)."""
        c = self.leaf(idx, True)
        return bool(self.watch.down >> idx & 1), c.reg if c.alive else None
