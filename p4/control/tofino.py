# SPDX-License-Identifier: GPL-2.0
"""The Tofino target of the control plane: bfrt (BF Runtime over gRPC).

opctl.BarrierSwitch programs a switch through a small target interface
(see p4/README.md, "Control plane"); bmv2.Switch is that interface for
simple_switch, this is the same for a Tofino running arch/tna.p4 under
bf_switchd, through the SDE's Python client (bfrt_grpc.client).

    import tofino
    t = tofino.Switch("onepipe", grpc_addr="127.0.0.1:50052")
    bs = opctl.BarrierSwitch(t, cpu_if="enp4s0f0", cpu_port=64)

Names: opctl speaks the bmv2 program's names (V1Ingress..., V1Egress...);
they are mapped to the TNA program's (pipe.TnaIngress..., ...).  The
program's 1Pipe ports are in one pipe (p4/README.md, "Pipes"): register
and counter reads return that pipe's value (PIPE, 0 by default).

Not run here: there is no SDE or Tofino model on our machines, so this
file is checked only against a stand-in of bfrt_grpc.client that records
what it is asked (tests/test_tofino_target.py).  What bfrt does that
differs from bmv2 and matters here:
- range and ternary entries take a $MATCH_PRIORITY key; as in bmv2, the
  lower value wins;
- registers and counters are tables keyed by $REGISTER_INDEX or
  $COUNTER_INDEX whose data holds one value per pipe; reads must ask
  from_hw, or they return the driver's shadow copy;
- multicast groups are $pre.node (the ports) plus $pre.mgid (the group),
  mirror sessions $mirror.cfg.
"""

try:
    import bfrt_grpc.client as gc
except ImportError as e:  # pragma: no cover - only without the SDE
    raise ImportError(f"{e}: the Tofino target needs the SDE's Python "
                      "client (bfrt_grpc) on PYTHONPATH") from e

ALL_PIPES = 0xffff
PREFIXES = (("V1Ingress.", "TnaIngress."), ("V1Egress.", "TnaEgress."))


def tna_name(name):
    """The arch/tna.p4 name of a name of arch/v1model.p4's program."""
    for v1, tna in PREFIXES:
        if name.startswith(v1):
            return tna + name[len(v1):]
    return name


class Switch:
    """bfrt client of one Tofino device running the barrier program."""

    # arch/tna.p4's flow hash is 8 bits, not taken modulo the up ports:
    # opctl fills all its values.
    HASH_VALUES = 256

    def __init__(self, p4_name="onepipe", grpc_addr="127.0.0.1:50052",
                 client_id=0, device_id=0, pipe=0):
        self.pipe = pipe
        self.iface = gc.ClientInterface(grpc_addr, client_id=client_id,
                                        device_id=device_id)
        self.iface.bind_pipeline_config(p4_name)
        self.info = self.iface.bfrt_info_get(p4_name)
        self.target = gc.Target(device_id=device_id, pipe_id=ALL_PIPES)
        self._mc_nodes = {}

    def close(self):
        self.iface.tear_down_stream()

    def _table(self, name):
        return self.info.table_get("pipe." + tna_name(name))

    # ---- tables ----

    def table_clear(self, table):
        self._table(table).entry_del(self.target)

    def table_set_default(self, table, action, params=()):
        t = self._table(table)
        t.default_entry_set(self.target, self._data(t, action, params))

    def _data(self, t, action, params):
        action = tna_name(action)
        names = t.info.data_field_name_list_get(action)
        if len(names) != len(params):
            raise ValueError(f"action {action} takes {len(names)} "
                             f"parameters, got {len(params)}")
        return t.make_data([gc.DataTuple(n, v) for n, v in
                            zip(names, params)], action)

    def table_add(self, table, action, keys, params=(), priority=None):
        """One entry; a key is an int (exact) or (lo, hi) (range)."""
        t = self._table(table)
        names = t.info.key_field_name_list_get()
        fields = [n for n in names if n != "$MATCH_PRIORITY"]
        if len(fields) != len(keys):
            raise ValueError(f"table {table} has {len(fields)} key "
                             f"fields, got {len(keys)}")
        kt = []
        for n, k in zip(fields, keys):
            if isinstance(k, tuple):
                kt.append(gc.KeyTuple(n, low=k[0], high=k[1]))
            else:
                kt.append(gc.KeyTuple(n, k))
        if "$MATCH_PRIORITY" in names:
            kt.append(gc.KeyTuple("$MATCH_PRIORITY", priority or 0))
        t.entry_add(self.target, [t.make_key(kt)],
                    [self._data(t, action, params)])

    @staticmethod
    def priority_rank(rank):
        """The priority of the entry that should win RANKth: lower wins."""
        return rank

    # ---- replication ----

    def mc_set(self, group_id, ports):
        """Multicast group GROUP_ID replicates to PORTS (rid 0)."""
        node_t = self.info.table_get("$pre.node")
        mgid_t = self.info.table_get("$pre.mgid")
        node = self._mc_nodes.get(group_id)
        if node is not None:
            mgid_t.entry_del(self.target, [mgid_t.make_key(
                [gc.KeyTuple("$MGID", group_id)])])
            node_t.entry_del(self.target, [node_t.make_key(
                [gc.KeyTuple("$MULTICAST_NODE_ID", node)])])
        node = group_id
        node_t.entry_add(self.target, [node_t.make_key(
            [gc.KeyTuple("$MULTICAST_NODE_ID", node)])], [node_t.make_data(
                [gc.DataTuple("$MULTICAST_RID", 0),
                 gc.DataTuple("$MULTICAST_LAG_ID", int_arr_val=[]),
                 gc.DataTuple("$DEV_PORT", int_arr_val=list(ports))])])
        mgid_t.entry_add(self.target, [mgid_t.make_key(
            [gc.KeyTuple("$MGID", group_id)])], [mgid_t.make_data(
                [gc.DataTuple("$MULTICAST_NODE_ID", int_arr_val=[node]),
                 gc.DataTuple("$MULTICAST_NODE_L1_XID_VALID",
                              bool_arr_val=[False]),
                 gc.DataTuple("$MULTICAST_NODE_L1_XID",
                              int_arr_val=[0])])])
        self._mc_nodes[group_id] = node

    def mirror_to_port(self, session, port):
        """Ingress mirror session SESSION sends its copies to PORT."""
        t = self.info.table_get("$mirror.cfg")
        key = [t.make_key([gc.KeyTuple("$sid", session)])]
        t.entry_del(self.target, key)
        t.entry_add(self.target, key, [t.make_data(
            [gc.DataTuple("$direction", str_val="INGRESS"),
             gc.DataTuple("$ucast_egress_port", port),
             gc.DataTuple("$ucast_egress_port_valid", bool_val=True),
             gc.DataTuple("$session_enable", bool_val=True)], "$normal")])

    # ---- registers and counters ----

    def _cells(self, name, indices):
        t = self._table(name)
        counter = "$COUNTER_INDEX" in t.info.key_field_name_list_get()
        key = "$COUNTER_INDEX" if counter else "$REGISTER_INDEX"
        got = t.entry_get(self.target, [t.make_key([gc.KeyTuple(key, i)])
                                        for i in indices], {"from_hw": True})
        base = tna_name(name)
        out = []
        for data, _ in got:
            d = data.to_dict()
            if counter:
                out.append(d["$COUNTER_SPEC_PKTS"])
            elif base + ".f1" in d:
                out.append(d[base + ".f1"][self.pipe])
            else:	# a tree node: op_pair_t, left in the low half
                out.append(d[base + ".left"][self.pipe] |
                           d[base + ".right"][self.pipe] << 64)
        return out

    def reg_read(self, name, index):
        return self._cells(name, [index])[0]

    def reg_read_all(self, name):
        size = self._table(name).info.size_get()
        return self._cells(name, range(size))

    def reg_read_wide(self, name):
        """Tofino reads registers whole: no view needed."""
        return self.reg_read_all(name)
