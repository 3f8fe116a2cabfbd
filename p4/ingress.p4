/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ingress of the barrier program: validation, the input registers, the
 * minimum trees, the output groups, admission of new links, routing.
 * Shared by both architectures; registers are declared and accessed
 * through the macros of arch/<arch>.p4 (OP_REG, OP_RMW, OP_EXEC), so that
 * every register is accessed once per packet, as Tofino requires.
 *
 * The state, per barrier kind (best effort "b", commit "c"):
 *
 *   leaf_K[port]    op_link of switch_logic.c: [47:0] register,
 *                   [48] heard, [49] dead, [50] counted in ALL,
 *                   [51] counted in DOWNIN
 *   K_G tree        the minimum of group G (ALL: every input; DOWNIN:
 *                   inputs from down ports) as a binary tree over the
 *                   ports: level L has 64 >> L nodes, each holding its
 *                   two children's values (common.p4).  A packet writes
 *                   its own child's value and reads its sibling's, six
 *                   times, and leaves the tree with the group's minimum.
 *   gout_K_G        the group's output: [47:0] out, [48] valid (it has
 *                   had a value)
 * and per group (both kinds at once):
 *   gver_G          [31:0] version, bumped whenever the group's output
 *                   moves (push staleness, egress.p4); [32] the
 *                   control plane has been told of a move and not yet
 *                   pushed (one notification in flight per group)
 *   gtime_G         the times of the last 16 versions (push_due)
 *
 * A link that is alive but not yet counted in a group (a new link, see
 * op_agg_update_slack()) is admitted against the group's output as it
 * was before this packet: the output is only known at the end of the
 * tree, so an admitted packet is resubmitted once with its admit bits,
 * and its second pass counts it.  That costs one resubmit per link per
 * group it joins, and keeps every register to one access.
 *
 * The control plane (p4/control) does what needs a clock or a schedule:
 * it reads rx_at[] to time out silent links (OP_CTL_KILL), sends the
 * beacon tick (OP_CTL_TICK) and pushes (OP_CTL_PUSH).
 */
#ifndef OP_INGRESS_P4
#define OP_INGRESS_P4

/* What the flow hash needs declared (arch/<arch>.p4), if anything. */
#ifndef OP_INGRESS_HASH
#define OP_INGRESS_HASH
#endif

/*
 * Per-port and per-switch counters, read by the control plane: registers
 * unless the architecture has counters that cost no register access
 * (arch/tna.p4).
 */
#ifndef OP_COUNTER
#define OP_COUNTER(name, n) \
	bit<64> name##_rv; \
	OP_REG(bit<64>, n, name) \
	OP_RMW(bit<64>, bit<64>, name, name##_inc, v = v + 1; rv = v;)
#define OP_COUNT(name, idx) OP_EXEC(name##_inc, idx, name##_rv)
#endif

/* One level of tree T: 64 >> L nodes. */
#define OP_TREE_LEVEL(T, L, N) \
	OP_REG(OP_PAIR_T, N, T##_r##L) \
	OP_RMW(OP_PAIR_T, bit<64>, T##_r##L, T##_a##L, \
	       if (m.s.tside == 0) { \
			OP_LEFT(v) = m.s.tcur; rv = OP_RIGHT(v); \
	       } else { \
			OP_RIGHT(v) = m.s.tcur; rv = OP_LEFT(v); \
	       })

#define OP_TREE(T) \
	OP_TREE_LEVEL(T, 1, 32) OP_TREE_LEVEL(T, 2, 16) \
	OP_TREE_LEVEL(T, 3, 8) OP_TREE_LEVEL(T, 4, 4) \
	OP_TREE_LEVEL(T, 5, 2) OP_TREE_LEVEL(T, 6, 1) \
	OP_REG(bit<64>, 1, T##_gout) \
	OP_RMW(bit<64>, bit<128>, T##_gout, T##_gupd, \
	       rv = 0; \
	       rv[98:51] = v[47:0]; \
	       rv[99:99] = v[48:48]; \
	       if (m.s.ghold == 0 && m.s.tcur[48:48] == 1) { \
			if (v[48:48] == 0 || op_before(v[47:0], m.s.tcur[47:0])) { \
				v[47:0] = m.s.tcur[47:0]; \
				v[48:48] = 1; \
				rv[50:50] = 1; \
			} \
	       } \
	       rv[48:0] = v[48:0];) \
	OP_RMW(bit<64>, bit<64>, T##_gout, T##_gread, rv = v;)

#define OP_TREE_STEP(T, L) \
	m.s.tside = m.s.tidx[(L) - 1:(L) - 1]; \
	OP_EXEC(T##_a##L, ((bit<32>)m.s.tidx) >> (L), m.s.tother); \
	m.s.tcur = op_merge(m.s.tcur, m.s.tother);

/*
 * Walk tree T up from the leaf value @leaf, update the group's output and
 * leave in @res: [48:0] the new gout word, [50] it moved, [98:51] the
 * output before this packet, [99] whether it was valid.  While
 * m.s.ghold is set the output is left alone (OP_KILL_HOLD).
 */
#define OP_TREE_WALK(T, leaf, res) \
	m.s.tcur = leaf; \
	OP_TREE_STEP(T, 1) OP_TREE_STEP(T, 2) OP_TREE_STEP(T, 3) \
	OP_TREE_STEP(T, 4) OP_TREE_STEP(T, 5) OP_TREE_STEP(T, 6) \
	OP_EXEC(T##_gupd, 0, res);

/* The input link registers of one kind, see the top of this file. */
#define OP_LEAF(K) \
	OP_REG(bit<64>, OP_PORTS, leaf_##K) \
	OP_RMW(bit<64>, bit<64>, leaf_##K, leaf_##K##_upd, \
	       rv = 0; \
	       if (m.s.lkill_##K == 1) { \
			if (v[49:48] == 1) { \
				v[49:49] = 1; \
				v[51:50] = 0; \
				rv[63:63] = 1; \
			} \
	       } else if (m.s.lhear == 1) { \
			if (m.s.lhas_##K == 1) { \
				if (v[49:48] != 1) { \
					v[47:0] = m.s.lval_##K; \
					v[49:48] = 1; \
					v[51:50] = 0; \
				} else if (op_before(v[47:0], m.s.lval_##K)) { \
					v[47:0] = m.s.lval_##K; \
				} \
			} \
	       } \
	       if (v[49:48] == 1) \
			v[51:50] = v[51:50] | m.s.ladmit_##K; \
	       rv[51:0] = v[51:0];)

/* The output group @g's current version and its notification state. */
#define OP_GVER(G) \
	OP_REG(bit<64>, 1, gver_##G) \
	OP_RMW(bit<64>, bit<64>, gver_##G, gver_##G##_upd, \
	       rv = 0; \
	       if (m.s.gmoved_##G == 1) { \
			v[31:0] = v[31:0] + 1; \
			if (v[32:32] == 0) { \
				v[32:32] = 1; \
				rv[32:32] = 1; \
			} \
	       } \
	       if (m.s.grearm == 1) \
			v[32:32] = 0; \
	       rv[31:0] = v[31:0];) \
	OP_REG(bit<64>, 16, gtime_##G) \
	OP_RMW(bit<64>, bit<64>, gtime_##G, gtime_##G##_set, v = (bit<64>)m.now; rv = 0;)

/*
 * The barrier stage: everything that reads or writes the registers.  It
 * leaves m.drop (a beacon consumed, a bad frame, a control frame done),
 * m.resubmit (admit a new link) or m.mcast (TICK, PUSH, FENCE) set, or
 * else the output group words of a packet to route in r_*.
 */
control OpBarriers(inout op_headers_t hdr, inout op_meta_t m,
		   in bit<48> admit_slack, in bit<1> beacon_only,
		   in bit<1> push_on)
{

	OP_COUNTER(rx_pkts, OP_PORTS)
	OP_COUNTER(rx_beacons, OP_PORTS)
	OP_COUNTER(rx_bad, OP_PORTS)
	OP_COUNTER(timeouts, OP_PORTS)
	/* frames from no configured port, not 1Pipe or not UDP, control
	 * frames from a port that is not the CPU's */
	OP_COUNTER(rx_other, 1)

	/* [47:0] when the port last received a valid packet, [48] ever */
	OP_REG(bit<64>, OP_PORTS, rx_at)
	OP_RMW(bit<64>, bit<1>, rx_at, rx_at_hear,
	       v = 15w0 ++ 1w1 ++ m.now; rv = 1;)
	OP_RMW(bit<64>, bit<1>, rx_at, rx_at_check,
	       rv = 0;
	       if ((hdr.ctl.which & OP_KILL_ANY) != 0 ||
		   v[47:0] == hdr.ctl.heard_at)
			rv = 1;)

	OP_LEAF(b)
	OP_LEAF(c)
	OP_TREE(b_all)
	OP_TREE(b_down)
	OP_TREE(c_all)
	OP_TREE(c_down)
	OP_GVER(all)
	OP_GVER(down)

	/* Admit a live, uncounted link into a group whose walk gave @res. */
#define OP_ADMISSIBLE(leaf, res) \
	((res)[99:99] == 0 || !op_before((leaf)[47:0], (res)[98:51]) || \
	 (res)[98:51] - (leaf)[47:0] <= admit_slack)

	apply {
		bit<64> leaf_b_v;
		bit<64> leaf_c_v;
		bit<128> r_b_all = 0;
		bit<128> r_b_down = 0;
		bit<128> r_c_all = 0;
		bit<128> r_c_down = 0;
		bit<64> ver_all = 0;
		bit<64> ver_down = 0;
		bit<1> ok;
		bit<4> admit = 0;

		if (m.from_cpu == 1) {
			if (!hdr.ctl.isValid()) {
				OP_COUNT(rx_other, 0);
				m.drop = 1;
				return;
			}
			m.is_ctl = 1;
			m.ctl_op = hdr.ctl.op;
			if (hdr.ctl.op == OP_CTL_PUSH && push_on == 0) {
				/* pushing is off: nothing is ever stale */
				m.drop = 1;
				return;
			}
			if (hdr.ctl.op != OP_CTL_KILL) {
				/* TICK, PUSH, FENCE: a copy to every port */
				m.s.grearm = 1;
				OP_EXEC(b_all_gread, 0, m.b_all);
				OP_EXEC(b_down_gread, 0, m.b_down);
				OP_EXEC(c_all_gread, 0, m.c_all);
				OP_EXEC(c_down_gread, 0, m.c_down);
				OP_EXEC(gver_all_upd, 0, ver_all);
				OP_EXEC(gver_down_upd, 0, ver_down);
				m.ver_all = ver_all[31:0];
				m.ver_down = ver_down[31:0];
				m.mcast = 1;
				return;
			}
			m.in_idx = hdr.ctl.port[5:0];
			m.in_up = (bit<1>)((hdr.ctl.which & OP_KILL_UP) != 0);
			/*
			 * Heard since the control plane looked: no kill, but
			 * the walk below still brings the outputs up to date
			 * with the held kills before this one.
			 */
			OP_EXEC(rx_at_check, m.in_idx, ok);
			m.s.lkill_b = ok &
				(bit<1>)((hdr.ctl.which & OP_KILL_BARRIER) != 0);
			m.s.lkill_c = ok &
				(bit<1>)((hdr.ctl.which & OP_KILL_COMMIT) != 0);
			m.s.ghold = (bit<1>)((hdr.ctl.which & OP_KILL_HOLD) != 0);
		} else {
			/*
			 * Ours: UDP to the port's own address, like the
			 * datagrams the software switch's socket receives;
			 * RoCEv2 to any (verbs fabrics address no switch).
			 */
			if (m.known == 0 || hdr.ctl.isValid() ||
			    !hdr.udp.isValid() || m.ip_bad == 1 ||
			    (hdr.udp.dst_port != ROCE_UDP_PORT &&
			     (hdr.udp.dst_port != m.my_udp ||
			      hdr.ipv4.dst_addr != m.my_ip))) {
				OP_COUNT(rx_other, 0);
				m.drop = 1;
				return;
			}
			if (m.resubmitted == 0)
				OP_COUNT(rx_pkts, m.in_idx);
			if (!hdr.op.isValid() ||
			    hdr.udp.len != hdr.ipv4.total_len - IPV4_LEN ||
			    !op_valid(hdr.op, hdr.udp.len, hdr.bth.isValid())) {
				OP_COUNT(rx_bad, m.in_idx);
				m.drop = 1;
				return;
			}
			m.is_roce = (bit<1>)hdr.bth.isValid();
			OP_EXEC(rx_at_hear, m.in_idx, ok);
			/*
			 * Forwarded RoCE frames are never rewritten: the
			 * barrier they carry is their sender's, not the
			 * upstream switch's.  Only beacons speak for a link
			 * there (and in beacon-only mode).
			 */
			m.s.lhear = (bit<1>)((beacon_only == 0 &&
					      !hdr.bth.isValid()) ||
					     hdr.op.type == OP_PKT_BEACON);
			m.s.lhas_b = (bit<1>)((hdr.op.flags & OP_F_NOBARRIER) == 0);
			m.s.lhas_c = (bit<1>)((hdr.op.flags & OP_F_NOCOMMIT) == 0);
			m.s.lval_b = hdr.op.barrier;
			m.s.lval_c = hdr.op.commit;
			m.s.ladmit_b = m.admit[1:0];
			m.s.ladmit_c = m.admit[3:2];
		}

		/* the input's registers, then the minimum of its groups */
		OP_EXEC(leaf_b_upd, m.in_idx, leaf_b_v);
		OP_EXEC(leaf_c_upd, m.in_idx, leaf_c_v);
		m.s.tidx = m.in_idx;
		OP_TREE_WALK(b_all, op_tree_val(leaf_b_v[50:50],
						leaf_b_v[47:0]), r_b_all)
		OP_TREE_WALK(c_all, op_tree_val(leaf_c_v[50:50],
						leaf_c_v[47:0]), r_c_all)
		if (m.in_up == 0) {
			OP_TREE_WALK(b_down,
				     op_tree_val(leaf_b_v[51:51],
						 leaf_b_v[47:0]), r_b_down)
			OP_TREE_WALK(c_down,
				     op_tree_val(leaf_c_v[51:51],
						 leaf_c_v[47:0]), r_c_down)
		}
		m.s.gmoved_all = r_b_all[50:50] | r_c_all[50:50];
		m.s.gmoved_down = r_b_down[50:50] | r_c_down[50:50];
		OP_EXEC(gver_all_upd, 0, ver_all);
		OP_EXEC(gver_down_upd, 0, ver_down);
		if (m.s.gmoved_all == 1)
			OP_EXEC(gtime_all_set, ver_all[3:0], m.s.tother);
		if (m.s.gmoved_down == 1)
			OP_EXEC(gtime_down_set, ver_down[3:0], m.s.tother);
		if (push_on == 1)
			m.notify = m.notify | ver_all[32:32] | ver_down[32:32];

		if (m.is_ctl == 1) {
			if ((leaf_b_v[63:63] == 1 || leaf_c_v[63:63] == 1) &&
			    (hdr.ctl.which & OP_KILL_TIMEOUT) != 0)
				OP_COUNT(timeouts, m.in_idx);
			m.drop = 1;
			return;
		}

		/* new links: admitted against the outputs before this packet */
		if (leaf_b_v[49:48] == 1) {
			if (leaf_b_v[50:50] == 0 && OP_ADMISSIBLE(leaf_b_v, r_b_all))
				admit[0:0] = 1;
			if (m.in_up == 0 && leaf_b_v[51:51] == 0 &&
			    OP_ADMISSIBLE(leaf_b_v, r_b_down))
				admit[1:1] = 1;
		}
		if (leaf_c_v[49:48] == 1) {
			if (leaf_c_v[50:50] == 0 && OP_ADMISSIBLE(leaf_c_v, r_c_all))
				admit[2:2] = 1;
			if (m.in_up == 0 && leaf_c_v[51:51] == 0 &&
			    OP_ADMISSIBLE(leaf_c_v, r_c_down))
				admit[3:3] = 1;
		}
		if (admit != 0 && m.resubmitted == 0) {
			m.admit = admit;
			m.resubmit = 1;
			return;
		}

		if (hdr.op.type == OP_PKT_BEACON) {
			OP_COUNT(rx_beacons, m.in_idx);
			m.drop = 1;
			return;
		}

		/* what an output port of each group carries (egress.p4) */
		m.b_all = 15w0 ++ r_b_all[48:0];
		m.c_all = 15w0 ++ r_c_all[48:0];
		m.b_down = 15w0 ++ r_b_down[48:0];
		m.c_down = 15w0 ++ r_c_down[48:0];
		m.ver_all = ver_all[31:0];
		m.ver_down = ver_down[31:0];
	}
}

/* Validation, the barrier stage, routing. */
control OpIngress(inout op_headers_t hdr, inout op_meta_t m, in bit<9> in_port)
{
	OpBarriers() barriers;
	OP_INGRESS_HASH

	/* configuration, set by the control plane */
	bit<48>  admit_slack = 0;
	bit<1>   beacon_only = 0;
	bit<1>   push_on = 0;
	bit<8>   n_up = 0;

	/* packets with no output port: per input port, and in all */
	OP_COUNTER(no_route, OP_PORTS)

	action set_config(bit<48> slack, bit<1> only_beacons, bit<1> push,
			  bit<8> ups)
	{
		admit_slack = slack;
		beacon_only = only_beacons;
		push_on = push;
		n_up = ups;
	}

	table config {
		actions = { set_config; }
		default_action = set_config(0, 0, 0, 0);
		size = 1;
	}

	action set_in(op_idx_t idx, bit<1> up, bit<32> ip, bit<16> udp)
	{
		m.known = 1;
		m.in_idx = idx;
		m.in_up = up;
		m.my_ip = ip;
		m.my_udp = udp;
	}

	action set_cpu()
	{
		m.from_cpu = 1;
	}

	/* Which switch_logic.c port a frame came in on. */
	table in_port_map {
		key = { in_port : exact; }
		actions = { set_in; set_cpu; NoAction; }
		default_action = NoAction();
		size = OP_PORTS + 1;
	}

	action to_port(bit<9> port, op_idx_t idx, bit<1> up)
	{
		m.out_port = port;
		m.out_idx = idx;
		m.out_up = up;
		m.routed = 1;
	}

	/* Host lists of the ports: first match wins (priority = port). */
	table route {
		key = { hdr.op.dst_host : range; }
		actions = { to_port; NoAction; }
		default_action = NoAction();
		size = 1024;
	}

	/*
	 * The up port of each value of the flow hash (OP_UP_PICK): one
	 * entry per up port where the hash is taken modulo their number
	 * (bmv2), one per hash value where it cannot be (Tofino: the
	 * control plane spreads the 256 values over the up ports).
	 */
	table up_port {
		key = { m.up_pick : exact; }
		actions = { to_port; NoAction; }
		default_action = NoAction();
		size = 256;
	}

	apply {
		config.apply();
		in_port_map.apply();

		if (m.from_cpu == 1 && hdr.ctl.isValid() &&
		    hdr.ctl.op == OP_CTL_ROUTE && hdr.op.isValid()) {
			/* a lookup: no state, straight to the routing */
			m.is_ctl = 1;
			m.in_up = (bit<1>)((hdr.ctl.which & OP_KILL_UP) != 0);
		} else {
			barriers.apply(hdr, m, admit_slack, beacon_only,
				       push_on);
			if (m.drop == 1 || m.resubmit == 1 || m.mcast == 1)
				return;
		}

		route.apply();
		if (m.routed == 0 && m.in_up == 0 && n_up != 0) {
			OP_UP_PICK(m.up_pick, hdr.op.src_host, hdr.op.dst_host,
				   n_up);
			up_port.apply();
		}
		if (m.is_ctl == 1) {
			/* the lookup's answer goes back where it came from */
			hdr.ctl.port = 2w0 ++ m.out_idx;
			hdr.ctl.which = 7w0 ++ m.routed;
			m.out_port = in_port;
			return;
		}
		if (m.routed == 0) {
			OP_COUNT(no_route, m.in_idx);
			m.drop = 1;
			return;
		}
	}
}

#endif /* OP_INGRESS_P4 */
