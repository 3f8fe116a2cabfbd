# SPDX-License-Identifier: GPL-2.0
"""The Tofino target (p4/control/tofino.py) driven by opctl, against a
stand-in of the SDE's bfrt_grpc.client.

There is no SDE here, so this checks the glue, not bfrt: that opctl's
calls come out as the bfrt table operations the TNA program needs (names
mapped to arch/tna.p4's, range priorities, the multicast group and the
mirror session, register and counter reads of the right pipe).  The
stand-in knows the program's tables and registers from the bmv2 build,
whose names differ from the TNA program's by their prefix only.

Needs build/onepipe.json (make -C p4) and root (opctl opens an AF_PACKET
socket on lo).
"""

import json
import os
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "control"))
JSON = os.path.join(HERE, "..", "build", "onepipe.json")
PIPES = 4


class KeyTuple:
    def __init__(self, name, value=None, low=None, high=None):
        self.name, self.value, self.low, self.high = name, value, low, high


class DataTuple:
    def __init__(self, name, val=None, int_arr_val=None, bool_arr_val=None,
                 str_val=None, bool_val=None):
        self.name = name
        self.val = [v for v in (val, int_arr_val, bool_arr_val, str_val,
                                bool_val) if v is not None]
        self.val = self.val[0] if self.val else None


class Target:
    def __init__(self, device_id=0, pipe_id=0xffff):
        self.pipe_id = pipe_id


def _tna(name):
    return name.replace("V1Ingress.", "TnaIngress.").replace(
        "V1Egress.", "TnaEgress.")


class TableInfo:
    def __init__(self, name, keys, actions, size):
        self.name, self.keys, self.actions, self.size = name, keys, \
            actions, size

    def key_field_name_list_get(self):
        return list(self.keys)

    def data_field_name_list_get(self, action):
        return list(self.actions[action])

    def size_get(self):
        return self.size


class Data:
    def __init__(self, fields, action):
        self.fields = {d.name: d.val for d in fields}
        self.action = action

    def to_dict(self):
        return dict(self.fields)


class Table:
    """Entries by key; registers and counters answer reads per pipe."""

    def __init__(self, info, cells=None, field=None):
        self.info = info
        self.entries = {}
        self.default = None
        self.cells = cells
        self.field = field
        self.read_from_hw = []

    def make_key(self, kts):
        return tuple((k.name, k.value, k.low, k.high) for k in kts)

    def make_data(self, dts, action=None):
        if action is not None and action not in self.info.actions and \
                not action.startswith("$"):
            raise KeyError(f"{self.info.name}: no action {action}")
        return Data(dts, action)

    def entry_add(self, target, keys, datas):
        for k, d in zip(keys, datas):
            if k in self.entries:
                raise KeyError(f"{self.info.name}: entry exists")
            self.entries[k] = d

    def entry_del(self, target, keys=None):
        if keys is None:
            self.entries.clear()
        for k in keys or ():
            self.entries.pop(k, None)

    def default_entry_set(self, target, data):
        self.default = data

    def entry_get(self, target, keys, flags):
        self.read_from_hw.append(flags.get("from_hw"))
        for k in keys:
            i = k[0][1]
            if self.field == "$COUNTER_SPEC_PKTS":
                yield Data([DataTuple(self.field, self.cells[i])], None), k
                continue
            v = self.cells[i]
            if self.field.endswith(".left"):
                base = self.field[:-5]
                fields = [DataTuple(base + ".left",
                                    int_arr_val=[0] + [v & (2**64 - 1)] * 3),
                          DataTuple(base + ".right",
                                    int_arr_val=[0] + [v >> 64] * 3)]
            else:
                fields = [DataTuple(self.field, int_arr_val=[0] + [v] * 3)]
            yield Data(fields, None), k


class Info:
    def __init__(self, program):
        self.tables = {}
        actions = {a["name"]: [p["name"] for p in a["runtime_data"]]
                   for a in program["actions"]}
        for p in program["pipelines"]:
            for t in p["tables"]:
                keys = [k["name"] for k in t["key"]]
                if t["match_type"] in ("range", "ternary"):
                    keys.append("$MATCH_PRIORITY")
                name = "pipe." + _tna(t["name"])
                self.tables[name] = Table(TableInfo(
                    name, keys, {_tna(a): actions[a] for a in t["actions"]},
                    t["max_size"]))
        counters = ("rx_pkts", "rx_beacons", "rx_bad", "timeouts",
                    "rx_other", "no_route", "tx_pkts", "tx_beacons",
                    "pushes")
        for r in program["register_arrays"]:
            if r["name"].endswith("_view"):
                continue	# a bmv2 artifact (OP_VIEW)
            base = _tna(r["name"])
            name = "pipe." + base
            size = r["size"]
            if base.split(".")[-1] in counters:
                info = TableInfo(name, ["$COUNTER_INDEX"], {}, size)
                field = "$COUNTER_SPEC_PKTS"
            else:
                info = TableInfo(name, ["$REGISTER_INDEX"], {}, size)
                pair = r["bitwidth"] == 128 and "_r" in base.split(".")[-1]
                field = base + (".left" if pair else ".f1")
            self.tables[name] = Table(info, [0] * size, field)
        for name in ("$pre.node", "$pre.mgid", "$mirror.cfg"):
            self.tables[name] = Table(TableInfo(name, [], {}, 0))

    def table_get(self, name):
        return self.tables[name]


class ClientInterface:
    def __init__(self, addr, client_id=0, device_id=0):
        self.bound = None

    def bind_pipeline_config(self, name):
        self.bound = name

    def bfrt_info_get(self, name):
        with open(JSON) as f:
            return Info(json.load(f))

    def tear_down_stream(self):
        pass


def stand_in():
    client = types.ModuleType("bfrt_grpc.client")
    for obj in (KeyTuple, DataTuple, Target, ClientInterface):
        setattr(client, obj.__name__, obj)
    pkg = types.ModuleType("bfrt_grpc")
    pkg.client = client
    sys.modules["bfrt_grpc"] = pkg
    sys.modules["bfrt_grpc.client"] = client


stand_in()
import opctl  # noqa: E402
import tofino  # noqa: E402


class TestTofinoTarget(unittest.TestCase):
    def setUp(self):
        self.t = tofino.Switch("onepipe", pipe=1)
        self.bs = opctl.BarrierSwitch(self.t, "lo", 64)
        for i, (role, hosts) in enumerate((("down", [(1, 1)]),
                                           ("down", [(2, 4), (9, 9)]),
                                           ("up", []))):
            self.bs.add_port(opctl.Port(
                f"p{i}", role, hosts, 10 + i, f"02:00:00:00:00:0{i}",
                f"10.0.{i}.1", f"02:00:00:00:01:0{i}", f"10.0.{i}.2"))
        self.bs.apply()
        self.info = self.t.info

    def tearDown(self):
        self.bs.close()

    def table(self, name):
        return self.info.tables["pipe.TnaIngress.op_ingress." + name]

    def test_ports_map_to_the_tna_program(self):
        t = self.table("in_port_map")
        got = {k[0][1]: (d.action, d.fields) for k, d in t.entries.items()}
        self.assertEqual(got[64][0], "TnaIngress.op_ingress.set_cpu")
        action, fields = got[11]
        self.assertEqual(action, "TnaIngress.op_ingress.set_in")
        self.assertEqual(fields, {"idx": 1, "up": 0, "ip": 0x0a000101,
                                  "udp": 5640})
        eg = self.info.tables["pipe.TnaEgress.op_egress.out_port_map"]
        self.assertEqual(len(eg.entries), 4)

    def test_routes_are_ranges_lower_ports_first(self):
        t = self.table("route")
        got = sorted((k[0][2], k[0][3], k[1][1], d.fields["idx"])
                     for k, d in t.entries.items())
        self.assertEqual(got, [(1, 1, 0, 0), (2, 4, 1, 1), (9, 9, 1, 1)])
        up = self.table("up_port")
        self.assertEqual(sorted(k[0][1] for k in up.entries), list(range(256)))
        self.assertEqual({d.fields["port"] for d in up.entries.values()},
                         {12})

    def test_config_defaults(self):
        d = self.table("config").default
        self.assertEqual(d.action, "TnaIngress.op_ingress.set_config")
        self.assertEqual(d.fields["ups"], 1)

    def test_replication_and_mirror(self):
        node = self.info.tables["$pre.node"].entries
        mgid = self.info.tables["$pre.mgid"].entries
        self.assertEqual([d.fields["$DEV_PORT"] for d in node.values()],
                         [[10, 11, 12]])
        self.assertEqual(list(mgid)[0][0][1], opctl.ALL_PORTS_GROUP)
        mirror = list(self.info.tables["$mirror.cfg"].entries.values())
        self.assertEqual(mirror[0].fields["$ucast_egress_port"], 64)
        self.assertEqual(mirror[0].fields["$direction"], "INGRESS")
        # a second apply() replaces rather than adds
        self.bs.apply()
        self.assertEqual(len(self.info.tables["$pre.node"].entries), 1)

    def test_reads_are_from_hardware_and_of_our_pipe(self):
        leaf = self.info.tables["pipe.TnaIngress.op_ingress.barriers.leaf_b"]
        leaf.cells[1] = 77 | 1 << 48 | 1 << 50 | 1 << 51
        self.assertEqual(self.bs.reg(1), 77)
        self.assertEqual(self.bs.state(1), "live")
        self.assertEqual(set(leaf.read_from_hw), {True})
        node = self.info.tables["pipe.TnaIngress.op_ingress.barriers."
                                "b_all_r1"]
        node.cells[0] = 5 | 6 << 64
        self.assertEqual(self.t.reg_read("V1Ingress.op_ingress.barriers."
                                         "b_all_r1", 0), 5 | 6 << 64)

    def test_counters(self):
        c = self.info.tables["pipe.TnaEgress.op_egress.tx_pkts"]
        c.cells[2] = 9
        self.assertEqual(self.bs.counter("tx_pkts", 2), 9)

    def test_tick_reads_and_sends(self):
        self.assertEqual(self.bs.tick(10**9), [])


if __name__ == "__main__":
    unittest.main()
