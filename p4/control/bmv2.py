"""Thin client for the runtime API (thrift) of bmv2 simple_switch.

The v1model twin of the barrier program runs in bmv2 simple_switch; this
module is what the control plane uses to start the switch and to program
it: table entries, registers, counters, multicast groups and clone
(mirroring) sessions.  It is a library: it parses no command line and
prints nothing; errors are raised as exceptions.

    proc = bmv2.start("twin.json", {1: "s1-eth1", 2: "s1-eth2"})
    with bmv2.Switch() as sw:
        sw.table_add("fwd", "set_port", [1], [2])
        sw.mc_set(5, [1, 2])

Run it with Debian's /usr/bin/python3: the thrift runtime comes from the
python3-thrift package; the generated stubs (bm_runtime, sswitch_runtime)
come with the P4 toolchain under $P4_PREFIX (default /opt/p4).

What bmv2 does that is easy to get wrong (read in the bmv2 source at the
toolchain's commit and checked on a running simple_switch):

- Ternary and range tables: the entry with the numerically *lowest*
  priority wins (0 beats 1), the opposite of P4Runtime, where a larger
  value wins.  Ties go to the lowest entry handle, and handles are reused
  after deletes: give overlapping entries distinct priorities.
- Multicast: simple_switch replicates a packet whose mcast_grp is not 0;
  group 0 therefore means "no multicast".  Every replica enters egress
  with instance_type 5 and egress_rid set to the rid of the multicast
  node that produced it; mc_set() uses rid 0, so egress tells replicas
  apart by egress_port.
- Clone sessions are numbered 0..32767; simple_switch silently ignores a
  session added outside that range.  A clone to a multicast group is
  replicated like any multicast packet (egress_rid 0 here) and has
  instance_type 1 (ingress clone) or 2 (egress clone) in egress.
- Register cells travel as signed 64-bit ints and bmv2 saturates reads:
  a cell of a register of 64 bits or more that holds 2^63 - 1 or more
  reads as 2^63 - 1.  reg_read() raises Bmv2Error for that value rather
  than return a wrong one; keep such registers below 2^63 - 1 if the
  control plane must read them (or read them through the data plane).
  Writes are masked to the register's width, so every 64-bit value can
  be written.
- simple_switch has no CPU port option (--cpu-port belongs to
  simple_switch_grpc); it accepts unknown target options after "--" with
  a message and keeps running.
"""

import ctypes
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

P4_PREFIX = os.environ.get("P4_PREFIX", "/opt/p4")
SIMPLE_SWITCH = os.path.join(P4_PREFIX, "bin", "simple_switch")
sys.path.insert(0, os.path.join(P4_PREFIX, "lib", "python3.11", "site-packages"))

try:
    from thrift.Thrift import TException
    from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
    from thrift.transport import TSocket, TTransport
except ImportError as e:
    raise ImportError(f"{e}: the thrift runtime is Debian's python3-thrift; "
                      "run this with /usr/bin/python3") from e

from bm_runtime.simple_pre_lag import SimplePreLAG
from bm_runtime.simple_pre_lag.ttypes import InvalidMcOperation, McOperationErrorCode
from bm_runtime.standard import Standard
from bm_runtime.standard.ttypes import (
    BmAddEntryOptions, BmMatchParam, BmMatchParamExact, BmMatchParamLPM,
    BmMatchParamRange, BmMatchParamTernary, BmMatchParamType,
    InvalidCounterOperation, CounterOperationErrorCode,
    InvalidRegisterOperation, RegisterOperationErrorCode,
    InvalidTableOperation, TableOperationErrorCode)
from sswitch_runtime import SimpleSwitch
from sswitch_runtime.ttypes import (
    InvalidMirroringOperation, MirroringOperationErrorCode, MirroringSessionConfig)

CONNECT_TIMEOUT = 10.0  # s; Switch() waits this long for the thrift server
START_TIMEOUT = 20.0    # s; start() waits this long for the thrift server
MAX_MIRROR_SESSION = (1 << 15) - 1  # simple_switch's register_access.h
MC_PORT_MAP_SIZE = 512  # bits in a PRE port map (bm_sim/simple_pre.h)
_I64_MAX = (1 << 63) - 1

# The error-code enum of each exception the thrift services raise, to turn
# a bare number into the name bmv2 gives it.
_ERROR_CODES = {
    InvalidTableOperation: TableOperationErrorCode,
    InvalidCounterOperation: CounterOperationErrorCode,
    InvalidRegisterOperation: RegisterOperationErrorCode,
    InvalidMcOperation: McOperationErrorCode,
    InvalidMirroringOperation: MirroringOperationErrorCode,
}


class Bmv2Error(Exception):
    """The switch refused an operation, or could not be reached or started."""


class _Action(NamedTuple):
    name: str
    params: tuple  # ((name, bitwidth), ...) in call order


class _Table(NamedTuple):
    name: str
    match_type: str  # the table's overall kind: exact, lpm, ternary or range
    keys: tuple      # ((field name, match kind, bitwidth), ...) in key order
    actions: dict    # full name -> _Action


class _Register(NamedTuple):
    name: str
    width: int


class _Counter(NamedTuple):
    name: str
    is_direct: bool


def _lookup(kind, objects, name, where="the P4 program"):
    """Find NAME in OBJECTS (full name -> object) by full name, or by a
    dot-separated suffix ("fwd" for "MyIngress.fwd") that only one name has."""
    if name in objects:
        return objects[name]
    matches = [full for full in objects if full.endswith("." + name)]
    if len(matches) == 1:
        return objects[matches[0]]
    if matches:
        raise ValueError(f"{kind} name {name!r} is ambiguous: "
                         f"{', '.join(sorted(matches))}")
    raise ValueError(f"no {kind} {name!r} in {where} "
                     f"(known: {', '.join(sorted(objects)) or 'none'})")


def _encode(value, width, what):
    """VALUE as big-endian bytes of WIDTH bits rounded up to whole bytes,
    the encoding bmv2 expects for match keys and action parameters."""
    if not isinstance(value, int) or not 0 <= value < 1 << width:
        raise ValueError(f"{what}: {value!r} is not an unsigned {width}-bit int")
    return value.to_bytes((width + 7) // 8, "big")


def _parse_program(program):
    """Tables, registers and counters of a bmv2 JSON program, by full name."""
    header_types = {h["name"]: {f[0]: f[1] for f in h["fields"]}
                    for h in program["header_types"]}
    header_type_of = {h["name"]: h["header_type"] for h in program["headers"]}
    actions = {a["name"]: _Action(a["name"], tuple((p["name"], p["bitwidth"])
                                                   for p in a["runtime_data"]))
               for a in program["actions"]}

    def key_width(target):
        header, fld = target
        if fld == "$valid$":  # key on hdr.isValid(): one bit
            return 1
        return header_types[header_type_of[header]][fld]

    tables = {}
    for pipeline in program["pipelines"]:
        for t in pipeline["tables"]:
            keys = tuple((k["name"], k["match_type"], key_width(k["target"]))
                         for k in t["key"])
            tables[t["name"]] = _Table(t["name"], t["match_type"], keys,
                                       {a: actions[a] for a in t["actions"]})
    registers = {r["name"]: _Register(r["name"], r["bitwidth"])
                 for r in program.get("register_arrays", [])}
    counters = {c["name"]: _Counter(c["name"], c["is_direct"])
                for c in program.get("counter_arrays", [])}
    return tables, registers, counters


def _match_param(kind, width, value, what):
    """One key field as a thrift BmMatchParam; VALUE as documented in
    Switch.table_add for match kind KIND."""
    if kind == "exact":
        return BmMatchParam(type=BmMatchParamType.EXACT,
                            exact=BmMatchParamExact(_encode(value, width, what)))
    if kind not in ("lpm", "ternary", "range"):
        raise ValueError(f"{what}: match kind {kind!r} is not supported")
    if not isinstance(value, tuple) or len(value) != 2:
        raise ValueError(f"{what}: {kind} match needs a 2-tuple, got {value!r}")
    a, b = value
    if kind == "lpm":
        if not isinstance(b, int) or not 0 <= b <= width:
            raise ValueError(f"{what}: prefix length {b!r} not in 0..{width}")
        return BmMatchParam(type=BmMatchParamType.LPM,
                            lpm=BmMatchParamLPM(_encode(a, width, what), b))
    if kind == "ternary":
        return BmMatchParam(type=BmMatchParamType.TERNARY,
                            ternary=BmMatchParamTernary(_encode(a, width, what),
                                                        _encode(b, width, what)))
    lo, hi = _encode(a, width, what), _encode(b, width, what)
    if a > b:
        raise ValueError(f"{what}: empty range {a}..{b}")
    return BmMatchParam(type=BmMatchParamType.RANGE,
                        range=BmMatchParamRange(lo, hi))


def _wait_for_port(ip, port, timeout, proc=None):
    """Wait until IP:PORT accepts TCP connections; True if it did within
    TIMEOUT seconds, False if not or if PROC exited first.  Probing with a
    plain socket keeps thrift from logging every refused attempt."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((ip, port), timeout=1).close()
            return True
        except OSError:
            pass
        if (proc is not None and proc.poll() is not None) \
                or time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


class Switch:
    """One thrift connection to one simple_switch.

    Names of tables, actions, registers and counters are the fully
    qualified ones of the bmv2 JSON ("MyIngress.fwd"), or any dot-separated
    suffix of one that no other object of the same kind has ("fwd").  The
    underlying thrift client is not thread-safe: use one Switch per thread.
    """

    def __init__(self, thrift_port=9090, ip="127.0.0.1", json_path=None):
        """Connect, waiting up to CONNECT_TIMEOUT s for the server to come
        up, and learn the program's names and field widths from JSON_PATH
        or, if None, from the switch itself.  A JSON_PATH whose content
        differs from the program the switch runs is refused, since every
        name and width would then be resolved against the wrong program."""
        where = f"simple_switch thrift server at {ip}:{thrift_port}"
        if not _wait_for_port(ip, thrift_port, CONNECT_TIMEOUT):
            raise Bmv2Error(f"no {where} after {CONNECT_TIMEOUT:g} s")
        self._transport = TTransport.TBufferedTransport(
            TSocket.TSocket(ip, thrift_port))
        protocol = TBinaryProtocol.TBinaryProtocol(self._transport)

        def service(client, name):
            return client(TMultiplexedProtocol.TMultiplexedProtocol(protocol, name))

        self._std = service(Standard.Client, "standard")
        # simple_switch's replication engine is SimplePreLAG (simple_pre is
        # not registered), as its own CLI, sswitch_CLI, assumes.
        self._mc = service(SimplePreLAG.Client, "simple_pre_lag")
        self._ss = service(SimpleSwitch.Client, "simple_switch")
        self._rpc(f"connect to {where}", self._transport.open)
        try:
            if json_path is None:
                text = self._rpc("bm_get_config", self._std.bm_get_config)
            else:
                with open(json_path, "rb") as f:
                    raw = f.read()
                running = self._rpc("bm_get_config_md5",
                                    self._std.bm_get_config_md5)
                if hashlib.md5(raw).digest() != running:
                    raise ValueError(f"{json_path} is not the program {where} runs")
                text = raw.decode()
            self._tables, self._registers, self._counters = \
                _parse_program(json.loads(text))
        except BaseException:
            self.close()
            raise

    def close(self):
        """Close the connection; the switch keeps its state."""
        self._transport.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _rpc(self, what, call, *args):
        """CALL(*ARGS), with a thrift failure turned into a Bmv2Error that
        says what was attempted and, for bmv2's own errors, the code name."""
        try:
            return call(*args)
        except TException as e:
            codes = _ERROR_CODES.get(type(e))
            detail = (codes._VALUES_TO_NAMES.get(e.code, e.code) if codes
                      else str(e) or type(e).__name__)
            raise Bmv2Error(f"{what}: {detail}") from e

    # Tables

    def _table(self, name):
        return _lookup("table", self._tables, name)

    def _action_data(self, table, action, params):
        a = _lookup("action", table.actions, action, f"table {table.name}")
        if len(params) != len(a.params):
            raise ValueError(f"action {a.name} takes {len(a.params)} "
                             f"parameters, got {len(params)}")
        return a.name, [_encode(v, width, f"{a.name} parameter {pname}")
                        for v, (pname, width) in zip(params, a.params)]

    def table_add(self, table, action, keys, params=(), priority=None):
        """Add an entry to TABLE that runs ACTION(*PARAMS); return its handle.

        KEYS has one item per key field, in the table's key order:
        exact -> value, lpm -> (value, prefix_len), ternary -> (value, mask),
        range -> (lo, hi), all unsigned ints that fit the field.  PRIORITY
        is required by ternary and range tables and refused by others;
        bmv2 picks the matching entry with the LOWEST priority number.
        """
        t = self._table(table)
        if len(keys) != len(t.keys):
            raise ValueError(f"table {t.name} has {len(t.keys)} key fields "
                             f"({', '.join(k[0] for k in t.keys)}), got {len(keys)}")
        match_key = [_match_param(kind, width, value, f"{t.name} key {name}")
                     for value, (name, kind, width) in zip(keys, t.keys)]
        action_name, data = self._action_data(t, action, params)
        if t.match_type in ("ternary", "range"):
            if not isinstance(priority, int) or not 0 <= priority < 1 << 31:
                raise ValueError(f"table {t.name} is {t.match_type}: a priority "
                                 f"in 0..2^31-1 is required (lower wins), "
                                 f"got {priority!r}")
        elif priority is not None:
            raise ValueError(f"table {t.name} is {t.match_type}: "
                             "entries have no priority")
        return self._rpc(f"table_add {t.name} {action_name}",
                         self._std.bm_mt_add_entry, 0, t.name, match_key,
                         action_name, data, BmAddEntryOptions(priority=priority or 0))

    @staticmethod
    def priority_rank(rank):
        """The table_add priority that makes an entry of preference RANK
        (0 = most preferred) beat every entry of a larger RANK.  bmv2 picks
        the lowest number, so this is RANK itself; targets where the larger
        number wins (P4Runtime, Tofino) map it the other way, and callers
        that rank entries through this stay target-independent."""
        return rank

    def table_delete(self, table, handle):
        """Delete the entry with HANDLE (from table_add) from TABLE."""
        t = self._table(table)
        self._rpc(f"table_delete {t.name} {handle}",
                  self._std.bm_mt_delete_entry, 0, t.name, handle)

    def table_clear(self, table):
        """Delete every entry of TABLE; its default action stays as set."""
        t = self._table(table)
        self._rpc(f"table_clear {t.name}",
                  self._std.bm_mt_clear_entries, 0, t.name, False)

    def table_set_default(self, table, action, params=()):
        """Make ACTION(*PARAMS) what TABLE runs on a miss."""
        t = self._table(table)
        action_name, data = self._action_data(t, action, params)
        self._rpc(f"table_set_default {t.name} {action_name}",
                  self._std.bm_mt_set_default_action, 0, t.name, action_name, data)

    def reset(self):
        """Return the switch to its state right after start-up: table
        entries and default actions, registers, counters, meters and
        multicast groups.  Clone sessions are kept (bmv2 does not reset
        them); set them again or leave them as they are."""
        self._rpc("reset", self._std.bm_reset_state)

    # Registers and counters
    #
    # The thrift API carries a register cell as a signed 64-bit int.  bmv2
    # converts the cell to it with saturation (a cell holding 2^63 - 1 or
    # more reads as 2^63 - 1) and masks what it writes to the register's
    # width (so -1 writes all ones).

    def _register(self, name):
        return _lookup("register", self._registers, name)

    @staticmethod
    def _cell(register, index, raw):
        """The value of a cell that the switch returned as RAW, refused when
        RAW may be a saturated stand-in for a larger value."""
        if raw == _I64_MAX and register.width >= 64:
            raise Bmv2Error(f"reg_read {register.name}[{index}]: the cell holds "
                            "2^63 - 1 or more, which bmv2's thrift API cannot "
                            "return (it saturates reads to a signed 64-bit int)")
        return raw

    def clock_start_ns(self):
        """When the switch's clock (ingress_global_timestamp, in us) was
        0, in CLOCK_REALTIME ns: bmv2 counts from its start on the
        system clock.  The best of a few (since epoch - elapsed) samples:
        the reads are separate calls, the switch may be descheduled
        between them."""
        best = None
        for _ in range(5):
            e1 = self._rpc("get_time_elapsed_us",
                           self._ss.get_time_elapsed_us)
            t = self._rpc("get_time_since_epoch_us",
                          self._ss.get_time_since_epoch_us)
            e2 = self._rpc("get_time_elapsed_us",
                           self._ss.get_time_elapsed_us)
            if best is None or e2 - e1 < best[0]:
                best = (e2 - e1, t - (e1 + e2) // 2)
        return best[1] * 1000

    def registers(self):
        """The full names of the program's register arrays, sorted."""
        return sorted(self._registers)

    def register_width(self, name):
        """The cell width of register array NAME, in bits."""
        return self._register(name).width

    def has_view(self, name):
        """Whether register array NAME has a 32-bit view (OP_VIEW)."""
        return self._register(name).name + "_view" in self._registers

    def reg_read(self, name, index):
        """Cell INDEX of register array NAME, as an unsigned int.  In a
        register of 64 bits or more, a cell holding 2^63 - 1 or more
        cannot be read over thrift: that raises Bmv2Error."""
        r = self._register(name)
        raw = self._rpc(f"reg_read {r.name}[{index}]",
                        self._std.bm_register_read, 0, r.name, index)
        return self._cell(r, index, raw)

    def reg_read_all(self, name):
        """Every cell of register array NAME, as a list of unsigned ints;
        raises Bmv2Error as reg_read() does if one cell cannot be read."""
        r = self._register(name)
        raws = self._rpc(f"reg_read_all {r.name}",
                         self._std.bm_register_read_all, 0, r.name)
        return [self._cell(r, i, raw) for i, raw in enumerate(raws)]

    def reg_read_wide(self, name):
        """Every cell of register array NAME, however wide, as a list of
        unsigned ints: a register the program keeps a 32-bit view of,
        NAME_view (OP_VIEW in p4/arch/v1model.p4), is read from it;
        others as reg_read_all() reads them."""
        r = self._register(name)
        if not self.has_view(name):
            return self.reg_read_all(name)
        words = -(-r.width // 32)
        view = self.reg_read_all(name + "_view")
        return [sum(view[i + k] << (32 * k) for k in range(words))
                for i in range(0, len(view), words)]

    def reg_write(self, name, index, value):
        """Set cell INDEX of register array NAME to the unsigned int VALUE.

        A VALUE of 2^63 or more goes over thrift as the negative int that
        bmv2 masks back into it; in a register wider than 64 bits that
        only reaches the top 2^63 values (VALUE >= 2^width - 2^63).
        """
        r = self._register(name)
        _encode(value, r.width, f"register {r.name} value")
        wire = value if value < 1 << 63 else value - (1 << r.width)
        if wire < -(1 << 63):
            raise ValueError(f"register {r.name} value {value:#x}: thrift only "
                             f"carries values below 2^63 or from 2^{r.width} - 2^63 "
                             f"up into a {r.width}-bit register")
        self._rpc(f"reg_write {r.name}[{index}]",
                  self._std.bm_register_write, 0, r.name, index, wire)

    def reg_reset(self, name):
        """Set every cell of register array NAME to 0."""
        r = self._register(name)
        self._rpc(f"reg_reset {r.name}", self._std.bm_register_reset, 0, r.name)

    def counter_read(self, name, index):
        """Cell INDEX of the indirect counter array NAME, as (bytes, packets)."""
        c = _lookup("counter", self._counters, name)
        if c.is_direct:
            raise ValueError(f"counter {c.name} is a direct counter: its cells "
                             "belong to table entries, not to indexes")
        value = self._rpc(f"counter_read {c.name}[{index}]",
                          self._std.bm_counter_read, 0, c.name, index)
        return value.bytes, value.packets

    # Replication

    def mc_set(self, group_id, ports):
        """Make multicast group GROUP_ID replicate a packet once to each
        port of PORTS (empty: to none), creating the group if needed and
        replacing its previous ports if not.

        The replicas carry egress_rid 0.  An existing rid-0 node of the
        group is updated in place, so a packet in flight is replicated to
        either the old or the new ports, never to neither or to both.
        """
        if not 0 < group_id < 1 << 16:
            raise ValueError(f"multicast group {group_id!r} not in 1..65535 "
                             "(simple_switch reads mcast_grp 0 as no multicast)")
        ports = set(ports)
        if not all(isinstance(p, int) and 0 <= p < MC_PORT_MAP_SIZE for p in ports):
            raise ValueError(f"multicast ports must be ints in "
                             f"0..{MC_PORT_MAP_SIZE - 1}, got {sorted(ports, key=str)}")
        # Port map: a string of 0s and 1s whose LAST character is port 0.
        port_map = "".join("1" if p in ports else "0"
                           for p in reversed(range(max(ports, default=-1) + 1)))
        what = f"mc_set {group_id}"
        entries = json.loads(self._rpc(what, self._mc.bm_mc_get_entries, 0))
        rid_of = {n["handle"]: n["rid"] for n in entries["l1_handles"]}
        group = next((g for g in entries["mgrps"] if g["id"] == group_id), None)
        if group is None:
            self._rpc(what, self._mc.bm_mc_mgrp_create, 0, group_id)
            nodes = []
        else:
            nodes = group["l1_handles"]
        keep = next((n for n in nodes if rid_of[n] == 0), None)
        if keep is None:
            keep = self._rpc(what, self._mc.bm_mc_node_create, 0, 0, port_map, "")
            self._rpc(what, self._mc.bm_mc_node_associate, 0, group_id, keep)
        else:
            self._rpc(what, self._mc.bm_mc_node_update, 0, keep, port_map, "")
        for node in nodes:
            if node != keep:  # destroying a node also dissociates it
                self._rpc(what, self._mc.bm_mc_node_destroy, 0, node)

    def _mirror(self, session, config, what):
        # simple_switch ignores an out-of-range session without an error.
        if not 0 <= session <= MAX_MIRROR_SESSION:
            raise ValueError(f"{what}: clone session {session!r} not in "
                             f"0..{MAX_MIRROR_SESSION}")
        self._rpc(what, self._ss.mirroring_session_add, session, config)

    def mirror_to_port(self, session, port):
        """Make clone session SESSION (clone() / clone_preserving_field_list()
        in the P4 program) send its copy to PORT; replaces the session."""
        self._mirror(session, MirroringSessionConfig(port=port),
                     f"mirror_to_port {session} {port}")

    def mirror_to_mcast(self, session, group_id):
        """Make clone session SESSION replicate its copy through multicast
        group GROUP_ID (see mc_set), like the CLI's mirroring_add_mc;
        replaces the session."""
        self._mirror(session, MirroringSessionConfig(mgid=group_id),
                     f"mirror_to_mcast {session} {group_id}")


def _log_tail(fd, lines=25):
    """The last LINES lines written to the file open as FD, for errors."""
    size = os.fstat(fd).st_size
    data = os.pread(fd, min(size, 8192), max(0, size - 8192))
    return "\n".join(data.decode(errors="replace").splitlines()[-lines:])


def _die_with_parent():
    """In the child: SIGKILL when the parent dies (PR_SET_PDEATHSIG),
    so that a daemon killed outright leaves no switch forwarding."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


def start(json_path, ports, thrift_port=9090, log_path=None, extra_args=(),
          die_with_parent=False):
    """Start simple_switch on the program JSON_PATH and return its Popen
    once its thrift server accepts connections on 127.0.0.1:THRIFT_PORT in
    the caller's network namespace (up to START_TIMEOUT s).

    PORTS maps switch port numbers to interface names ({1: "s1-eth1"});
    the interfaces must exist and be up.  Opening them takes raw sockets:
    run as root (or with CAP_NET_RAW and CAP_NET_ADMIN).  LOG_PATH, if
    given, is truncated and receives the switch's debug log (--log-console
    at level debug: parser states, table hits and misses, replication;
    written as it happens, never rotated); otherwise only its start-up
    messages are kept, until this returns.  EXTRA_ARGS go after the JSON
    path: general bmv2 options, then "--" and target options
    (simple_switch has no --cpu-port).  DIE_WITH_PARENT: the switch is
    killed when the calling process dies.

    Raises Bmv2Error if the thrift port is already taken, or if the switch
    exits or does not open the port in time (it is then killed); the
    message ends with the last lines of its output.  Stop the switch with
    proc.terminate() and proc.wait().
    """
    if _wait_for_port("127.0.0.1", thrift_port, 0):
        raise Bmv2Error(f"thrift port {thrift_port} is already in use "
                        "(another simple_switch?)")
    cmd = [SIMPLE_SWITCH, "--thrift-port", str(thrift_port)]
    for number, ifname in sorted(ports.items()):
        cmd += ["-i", f"{number}@{ifname}"]
    if log_path is not None:
        cmd += ["--log-console", "--log-level", "debug"]
    else:
        # bmv2 formats every trace message unless told otherwise, even
        # with no log to write: about four times slower
        cmd += ["--log-level", "off"]
    cmd += [json_path, *extra_args]
    log = tempfile.TemporaryFile() if log_path is None else open(log_path, "wb")
    with log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT,
                                preexec_fn=_die_with_parent
                                if die_with_parent else None)
        try:
            up = _wait_for_port("127.0.0.1", thrift_port, START_TIMEOUT, proc)
        except BaseException:  # e.g. KeyboardInterrupt: leave no switch behind
            proc.kill()
            proc.wait()
            raise
        if up:
            return proc
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            why = f"did not open thrift port {thrift_port} in {START_TIMEOUT:g} s"
        else:
            why = f"exited with status {proc.returncode}"
        raise Bmv2Error(f"simple_switch {why}; {' '.join(cmd)}\n"
                        f"{_log_tail(log.fileno())}")
