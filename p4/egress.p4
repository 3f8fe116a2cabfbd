/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Egress of the barrier program: rewriting forwarded packets, turning the
 * control plane's TICK and PUSH copies into beacons, and the per-port
 * state that decides which ports need one.  Shared by both architectures,
 * registers through the macros of arch/<arch>.p4.
 *
 * pstate[port], one word per output port, so that one access decides:
 *   [29:0]   the version of its group's output it last carried (a forward
 *            in rewrite mode, a beacon); the port is stale, due for a
 *            push, while its group's version (ingress.p4) is newer
 *   [30]     it has carried a forward (switch_logic.c: pace.carried)
 *   [31]     something left since the last tick (sw_port.sent)
 *   [79:32]  when it last forwarded in rewrite mode (pace.last_carried)
 *   [127:80] the push pacing's theoretical arrival time (pace.tat)
 * That is op_push of kernel/core/push.h: a stale port's push falls due
 * once it has been idle for the busy window and the pacing has a token.
 */
#ifndef OP_EGRESS_P4
#define OP_EGRESS_P4

/*
 * The control plane reads pstate whole (decide.push_due()).  A wrapper
 * whose runtime reads fewer bits than that keeps a view of it, written
 * along with it (arch/v1model.p4); Tofino's reads are whole.
 */
#ifndef OP_HAS_VIEW
#define OP_VIEW_REG(name, n)
#define OP_VIEW(name, v)
#endif

/* Far beyond any busy window or push gap: 2^40 ns, about 18 minutes. */
const bit<48> OP_LONG_AGO = 1 << 40;

const bit<2> OP_EK_FWD  = 0;	/* a forwarded packet */
const bit<2> OP_EK_TICK = 1;	/* a copy of the beacon tick */
const bit<2> OP_EK_PUSH = 2;	/* a copy of a push round */

control OpEgress(inout op_headers_t hdr, inout op_meta_t m, in bit<9> eg_port)
{
	bit<2>   eres;

	/* the port, from the port table */
	bit<1>   known = 0;
	op_idx_t idx = 0;
	bit<1>   up = 0;
	bit<1>   roce = 0;
	bit<48>  my_mac = 0;
	bit<32>  my_ip = 0;
	bit<16>  my_udp = 0;
	bit<48>  peer_mac = 0;
	bit<32>  peer_ip = 0;
	bit<16>  peer_udp = 0;

	OP_COUNTER(tx_pkts, OP_PORTS)
	OP_COUNTER(tx_beacons, OP_PORTS)
	OP_COUNTER(pushes, OP_PORTS)

	OP_REG(bit<128>, OP_PORTS, pstate)
	OP_VIEW_REG(pstate, OP_PORTS)
	OP_RMW(bit<128>, bit<2>, pstate, pstate_upd,
	       bit<30> d = m.e.ever - v[29:0];
	       bit<48> lc = v[79:32];
	       bit<48> tat = v[127:80];

	       rv = 0;
	       if (m.e.ekind == OP_EK_FWD) {
			if (m.e.beacon_only == 0 && m.is_roce == 0) {
				if (d[29:29] == 0)
					v[29:0] = m.e.ever;
				v[79:32] = m.now;
				v[30:30] = 1;
			}
			v[31:31] = 1;
	       } else if (m.e.ekind == OP_EK_TICK) {
			if ((v[31:31] == 0 || m.e.beacon_only == 1) && m.e.esaid == 1) {
				/* a copy overtaken by newer news: no going back */
				if (d[29:29] == 0)
					v[29:0] = m.e.ever;
				rv = 1;
			}
			v[31:31] = 0;
			/*
			 * Keep both times within 2^47 ns of now, or their
			 * wrap-around comparisons turn over on a port idle
			 * that long: far older than any window is as good
			 * as "long ago".
			 */
			if (op_before(lc, m.now - OP_LONG_AGO))
				v[30:30] = 0;
			if (op_before(tat, m.now - OP_LONG_AGO))
				v[127:80] = m.now - OP_LONG_AGO;
	       } else if (d != 0 && d[29:29] == 0 &&
			  !(m.e.busy_window != 0 && m.e.beacon_only == 0 &&
			    v[30:30] == 1 && op_before(m.now, lc + m.e.busy_window)) &&
			  !op_before(m.now, tat - m.e.push_gap)) {
			v[29:0] = m.e.ever;
			if (m.e.esaid == 1) {
				rv = 3;
				v[31:31] = 1;
				if (op_before(tat, m.now))
					tat = m.now;
				v[127:80] = tat + m.e.push_gap;
			}
	       }
	       OP_VIEW(pstate, v))

	action set_config(bit<1> only_beacons, bit<48> gap, bit<48> busy)
	{
		m.e.beacon_only = only_beacons;
		m.e.push_gap = gap;
		m.e.busy_window = busy;
	}

	table config {
		actions = { set_config; }
		default_action = set_config(0, 0, 0);
		size = 1;
	}

	action set_out(op_idx_t port_idx, bit<1> port_up, bit<1> port_roce,
		       bit<48> smac, bit<32> sip, bit<16> sport,
		       bit<48> dmac, bit<32> dip, bit<16> dport)
	{
		known = 1;
		idx = port_idx;
		up = port_up;
		roce = port_roce;
		my_mac = smac;
		my_ip = sip;
		my_udp = sport;
		peer_mac = dmac;
		peer_ip = dip;
		peer_udp = dport;
	}

	action set_cpu_out()
	{
		m.to_cpu = 1;
	}

	/* The switch_logic.c port behind an output port, and its peer. */
	table out_port_map {
		key = { eg_port : exact; }
		actions = { set_out; set_cpu_out; NoAction; }
		default_action = NoAction();
		size = OP_PORTS + 1;
	}

	/* A UDP datagram from this port's address to its peer's. */
	action address()
	{
		hdr.ethernet.src_addr = my_mac;
		hdr.ethernet.dst_addr = peer_mac;
		hdr.ipv4.ttl = 64;
		hdr.ipv4.src_addr = my_ip;
		hdr.ipv4.dst_addr = peer_ip;
		hdr.udp.src_port = my_udp;
		hdr.udp.dst_port = peer_udp;
		hdr.udp.checksum = 0;
	}

	/* Write one barrier field from its group word. */
#define OP_PUT(field, word, flag) \
	if ((word)[48:48] == 1) { \
		hdr.op.field = (word)[47:0]; \
		hdr.op.flags = hdr.op.flags & ~(flag); \
	} else { \
		hdr.op.field = 0; \
		hdr.op.flags = hdr.op.flags | (flag); \
	}

	apply {
		bit<64> bw;
		bit<64> cw;

		config.apply();
		out_port_map.apply();
		if (m.to_cpu == 1)
			return;
		if (known == 0) {
			m.drop = 1;
			return;
		}

		if (m.is_ctl == 1) {
			if (m.ctl_op == OP_CTL_FENCE)
				return;
			if (m.ctl_op == OP_CTL_TICK) {
				m.e.ekind = OP_EK_TICK;
			} else if (m.ctl_op == OP_CTL_PUSH) {
				m.e.ekind = OP_EK_PUSH;
			} else {
				m.drop = 1;
				return;
			}
		}
		bw = up == 1 ? m.b_down : m.b_all;
		cw = up == 1 ? m.c_down : m.c_all;
		m.e.ever = up == 1 ? m.ver_down[29:0] : m.ver_all[29:0];
		m.e.esaid = bw[48:48] | cw[48:48];
		OP_EXEC(pstate_upd, idx, eres);

		if (m.e.ekind == OP_EK_FWD) {
			OP_COUNT(tx_pkts, idx);
			if (m.is_roce == 1)
				return;	/* byte for byte: its ICRC covers it */
			if (m.e.beacon_only == 0) {
				OP_PUT(barrier, bw, OP_F_NOBARRIER)
				OP_PUT(commit, cw, OP_F_NOCOMMIT)
			}
			address();
			return;
		}
		/*
		 * No beacon; and none on a RoCE port either: the data plane
		 * cannot compute its ICRC, the control plane sends those.
		 */
		if (eres[0:0] == 0 || roce == 1) {
			m.drop = 1;
			return;
		}

		/* a bare header: kernel/core/wire.h, switch_logic.c */
		m.beacon = 1;
		OP_COUNT(tx_pkts, idx);
		OP_COUNT(tx_beacons, idx);
		if (eres[1:1] == 1)
			OP_COUNT(pushes, idx);
		hdr.ctl.setInvalid();
		hdr.ethernet.ether_type = ETHERTYPE_IPV4;
		hdr.ipv4.setValid();
		hdr.ipv4.version = 4;
		hdr.ipv4.ihl = 5;
		hdr.ipv4.tos = 0;
		hdr.ipv4.total_len = IPV4_LEN + UDP_LEN + OP_HDR_LEN;
		hdr.ipv4.id = 0;
		hdr.ipv4.flags = 2;	/* DF */
		hdr.ipv4.frag_off = 0;
		hdr.ipv4.protocol = IP_PROTO_UDP;
		hdr.udp.setValid();
		hdr.udp.len = UDP_LEN + OP_HDR_LEN;
		hdr.op.setValid();
		hdr.op.version = OP_WIRE_VERSION;
		hdr.op.type = OP_PKT_BEACON;
		hdr.op.flags = 0;
		hdr.op.code = 0;
		hdr.op.src_host = 0;
		hdr.op.dst_host = 0;
		hdr.op.src_port = 0;
		hdr.op.dst_port = 0;
		hdr.op.ts_hi = 0;
		hdr.op.ts = 0;
		hdr.op.barrier_hi = 0;
		hdr.op.commit_hi = 0;
		hdr.op.seq = 0;
		hdr.op.aux = 0;
		hdr.op.frag_idx = 0;
		hdr.op.frag_cnt = 0;
		OP_PUT(barrier, bw, OP_F_NOBARRIER)
		OP_PUT(commit, cw, OP_F_NOCOMMIT)
		address();
	}
}

#endif /* OP_EGRESS_P4 */
